//! Files on disk: the cache and its atomic, durable swap ([`cache`]), the
//! state file beside it ([`state`]), and where Crush keeps its folders
//! ([`paths`]).

pub mod cache;
pub mod digest;
pub mod lock;
pub mod paths;
pub mod state;
