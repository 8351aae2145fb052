//! Files on disk: the cache (`cache`) and the state file beside it
//! (`state`), replaced by atomic, durable writes (`atomic`) under one
//! lock (`lock`), named by their digest (`digest`); and where Crush
//! keeps its folders (`paths`).

pub(crate) mod atomic;
pub(crate) mod cache;
pub(crate) mod digest;
pub(crate) mod file;
pub(crate) mod lock;
pub(crate) mod paths;
pub(crate) mod state;
pub(crate) mod validators;

pub use self::cache::CacheFiles;
pub use self::paths::{EnvLookup, NoHome, data_dir, process_env};
