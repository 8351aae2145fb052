//! What a person must approve: a catalog that sends a key to a new place or
//! lost most of the cache ([`guard`]), and signed catalogs ([`signature`]).

pub mod guard;
pub mod memory;
pub mod place;
pub mod signature;
