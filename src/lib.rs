//! Keeps the Crush coding assistant's provider catalog up to date.
//!
//! The map, one folder a layer; each uses only those above it:
//!
//! - [`environment`]: the variables as Crush's start sees them, a `.env`
//!   file's included.
//! - [`catalog`]: the format, read as Crush reads it (Go's rules and
//!   limits, the resolver's forms whose destination is exact, Go's URL
//!   split), the two documents it comes as (the Catwalk catalog, Hyper's
//!   one provider), the changes between two catalogs, what a terminal may
//!   be shown, the embedded snapshot, synthetic catalogs for benchmarks.
//! - [`store`]: files on disk: the cache's atomic, durable swap (the
//!   catalog's, and Hyper's `hyper.json` beside it), its state file, the
//!   lock, the digest, HTTP validators, local files read as a careful tool
//!   reads them, Crush's folders.
//! - [`trust`]: what needs a person: the guard's review (a key sent to a
//!   place it never reached, most of the cache or the floor gone, a
//!   replay), the memory of where keys went, the Hyper key, signed
//!   catalogs, and the one policy that puts them together for an update
//!   and a refresh alike.
//! - [`fetch`]: reading a SOURCE: what it means, bounded downloads over TLS
//!   in one session, told of and ended by their caller (a progress
//!   reporter, a cancellation), the proxy each request takes, plain-word
//!   diagnoses.
//! - [`config`]: the settings, through Crush's levels of files, merged
//!   and decoded as Crush does, crushrc files read without running them.
//! - [`error`]: the one-line failure every command reports, and the name
//!   its hints give the program.
//! - [`update`]: `update-providers`, the path from a source to the cache:
//!   read, parse, a pure plan, and its application.
//! - [`startup`]: what Crush calls when it starts, whether it may go out,
//!   and the background refresh (of Hyper's provider too): a pure decision
//!   of what to do with each answer, and its I/O.
//! - [`front`]: standing in front of a real Crush: which program a command
//!   is for, finding Crush, its version, how to hand it over.
//! - [`commands`]: the command line, one file per command, the front
//!   carried out before it is parsed, and what a person waiting for a
//!   download sees and types (the progress bar, Ctrl-C).

pub mod catalog;
pub mod commands;
pub mod config;
pub mod environment;
pub mod error;
pub mod fetch;
pub mod front;
pub mod startup;
pub mod store;
pub mod trust;
pub mod update;
