//! What a person must approve: a catalog that sends a key to a place it
//! never reached or lost most of the cache or the floor ([`guard`], against
//! the [`memory`] of where keys went), and signed catalogs ([`signature`]);
//! the one policy that puts them together for an update and a refresh
//! alike (`policy`), and the review of a document another program wrote
//! into the cache (`foreign`).

pub(crate) mod foreign;
pub(crate) mod guard;
pub(crate) mod hyper;
pub(crate) mod memory;
pub(crate) mod place;
pub(crate) mod policy;
pub(crate) mod signature;
