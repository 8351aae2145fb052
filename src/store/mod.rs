//! Files on disk: the cache ([`cache`]) and the state file beside it
//! ([`state`]), replaced by atomic, durable writes ([`atomic`]) under one
//! lock ([`lock`]), named by their digest ([`digest`]); and where Crush
//! keeps its folders ([`paths`]).

pub mod atomic;
pub mod cache;
pub mod digest;
pub mod file;
pub mod lock;
pub mod paths;
pub mod state;
pub mod validators;

pub use self::cache::CacheFiles;
pub use self::paths::{EnvLookup, NoHome, data_dir, process_env};
