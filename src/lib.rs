//! Keeps the Crush coding assistant's provider catalog up to date: the
//! library behind the `crush` binary's `update-providers` and its start-up
//! refresh, for a program that embeds them.
//!
//! # The front door
//!
//! The `crush` binary is the product; what a host program needs besides
//! is public, the rest is the crate's own:
//!
//! - **Start-up** ([`startup`]): [`startup::load`] hands over a valid
//!   catalog at once (the cache, else the embedded snapshot) and never
//!   fails; [`startup::StartupOptions`] says whether it may go out and
//!   where; a refresh it starts on a thread comes back as a
//!   [`startup::Refresh`] handle to poll or wait on, ending in a
//!   [`startup::Outcome`]; what went wrong on the way is a typed
//!   [`startup::Warning`], whose `Display` is the line to show (with what
//!   a server or a file put into it: a host escapes control characters
//!   before a terminal shows it, as the command line does).
//! - **The catalog** ([`catalog`]): [`catalog::validate`] reads bytes as
//!   Crush reads them into a [`catalog::Catalog`] of
//!   [`catalog::Provider`]s and [`catalog::Model`]s (with its
//!   [`catalog::Warning`]s), or a [`catalog::ValidationError`];
//!   [`catalog::embedded`] is the snapshot compiled in.
//! - **The cache's location** ([`store`]): [`store::CacheFiles`] names
//!   the files in Crush's data folder, [`store::data_dir`].
//!
//! Crush's configuration files, `update-providers` and its errors are
//! the command line's: a host that wants them runs `crush`.
//!
//! # Examples
//!
//! Validate a catalog as Crush reads it:
//!
//! ```
//! let bytes = br#"[{"id": "p", "name": "P", "models": [{"id": "m"}]}]"#;
//! let catalog = crush_providers::catalog::validate(bytes)?;
//! assert_eq!(catalog.providers[0].id.as_str(), "p");
//! assert_eq!(catalog.model_count(), 1);
//! assert!(crush_providers::catalog::validate(b"{}").is_err());
//! # Ok::<(), crush_providers::catalog::ValidationError>(())
//! ```
//!
//! Start with automatic updates off: the cache, else the embedded
//! snapshot, and no request:
//!
//! ```
//! use crush_providers::startup::{self, Background, Provenance, StartupOptions};
//! use crush_providers::store::CacheFiles;
//!
//! let dir = tempfile::tempdir()?;
//! let files = CacheFiles::in_dir(dir.path());
//! let options = StartupOptions {
//!     auto_update: false,
//!     default_providers: true,
//!     url: "https://catwalk.charm.sh/v2/providers".parse()?,
//!     timeout: startup::DEFAULT_TIMEOUT,
//!     interval: startup::DEFAULT_INTERVAL,
//!     background: Background::Thread,
//!     wait: false,
//!     watch: crush_providers::Watch::default(),
//!     keys: None,
//!     hyper: None,
//! };
//! let loaded = startup::load(&files, &options);
//! assert_eq!(loaded.provenance, Provenance::Embedded);
//! assert!(loaded.refresh.is_none());
//! crush_providers::catalog::validate(&loaded.bytes)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Start from the cache in Crush's data folder, and take a refresh, when
//! one was due, from the thread it runs on:
//!
//! ```no_run
//! use crush_providers::startup::{self, Background, StartupOptions};
//! use crush_providers::store::{self, CacheFiles};
//!
//! let files = CacheFiles::in_dir(store::data_dir(&store::process_env)?);
//! let options = StartupOptions {
//!     auto_update: true,
//!     default_providers: true,
//!     url: "https://catwalk.charm.sh/v2/providers".parse()?,
//!     timeout: startup::DEFAULT_TIMEOUT,
//!     interval: startup::DEFAULT_INTERVAL,
//!     background: Background::Thread,
//!     wait: false,
//!     watch: crush_providers::Watch::default(),
//!     keys: None,
//!     hyper: None,
//! };
//! let mut loaded = startup::load(&files, &options);
//! for warning in &loaded.warnings {
//!     eprintln!("warning: {warning}");
//! }
//! let catalog = crush_providers::catalog::validate(&loaded.bytes)?;
//! println!("{} providers", catalog.providers.len());
//! if let Some(refresh) = &mut loaded.refresh {
//!     if let Some(startup::Outcome::Updated(bytes)) = refresh.poll() {
//!         println!("a new catalog: {} bytes", bytes.len());
//!     }
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The map
//!
//! One folder a layer; each uses only those above it:
//!
//! - `environment/`: the variables as Crush's start sees them, a `.env`
//!   file's included.
//! - [`catalog`]: the format, read as Crush reads it (Go's rules and
//!   limits, the resolver's forms whose destination is exact, Go's URL
//!   split), the two documents it comes as (the Catwalk catalog, Hyper's
//!   one provider), the changes between two catalogs, what a terminal may
//!   be shown, the embedded snapshot.
//! - [`store`]: files on disk: the cache's atomic, durable swap (the
//!   catalog's, and Hyper's `hyper.json` beside it), its state file, the
//!   lock, the digest, HTTP validators, local files read as a careful tool
//!   reads them, Crush's folders.
//! - `trust/`: what needs a person: the guard's review (a key sent to a
//!   place it never reached, most of the cache or the floor gone, a
//!   replay), the memory of where keys went, the Hyper key, signed
//!   catalogs, and the one policy that puts them together for an update
//!   and a refresh alike.
//! - `fetch/`: reading a SOURCE: what it means, bounded downloads over TLS
//!   in one session, redirects followed by hand, the proxy each request
//!   takes, plain-word diagnoses, and what a caller gives a download (a
//!   progress [`Reporter`], a [`Cancel`]lation).
//! - `config/`: the settings, through Crush's levels of files, merged
//!   and decoded as Crush does, crushrc files read without running them,
//!   and their typed warnings.
//! - `error.rs`: the one-line failure every command reports, typed: what
//!   failed, why, and the hint attached to that cause (its commands named
//!   as Crush's, or as the command line gives its own name).
//! - `update/`: `update-providers`, the path from a source to the cache:
//!   read, parse, a pure plan, and its application, and its typed
//!   warnings.
//! - [`startup`]: what Crush calls when it starts, its options built from
//!   the settings, whether it may go out, and the background refresh (of
//!   Hyper's provider too): a pure decision of what to do with each
//!   answer, and its I/O.
//! - `front/`: standing in front of a real Crush: which program a command
//!   is for, finding Crush, its version, how to hand it over.
//! - `commands/`: the command line, one file per command, the exit code,
//!   the progress bar and Ctrl-C, the name the program was invoked by
//!   (which its hints give), and the front carried out before it is
//!   parsed.
//!
//! Only the folders linked above are public; [`internals`] (hidden from
//! these docs) is what the tests, benchmarks, examples and fuzz targets
//! reach besides, with no promise to any other user.

#![warn(missing_docs)]

pub mod catalog;
mod commands;
mod config;
mod environment;
mod error;
mod fetch;
mod front;
pub mod startup;
pub mod store;
mod trust;
mod update;

pub use fetch::http::Bearer;
pub use fetch::watch::{Cancel, Reporter, Signal, Watch};
pub use trust::signature::TrustedKeys;

/// Not part of the API: what `tests/it`, `benches/`, `examples/` and
/// `fuzz/` reach besides the front door, each name re-exported one by one
/// so that nothing else leaves the crate. No promise of stability.
#[doc(hidden)]
pub mod internals {
    /// The command line, for `main.rs`.
    pub use crate::commands::main as command_line;

    /// From `catalog/`.
    pub mod catalog {
        pub use crate::catalog::{GO_MAX_DEPTH, MAX_ID_BYTES};
    }
    /// From `catalog/changes.rs`.
    pub mod changes {
        pub use crate::catalog::changes::compare;
    }
    /// From `catalog/escape.rs`.
    pub mod escape {
        pub use crate::catalog::escape::is_unsafe;
    }
    /// From `catalog/expand.rs`.
    pub mod expand {
        pub use crate::catalog::expand::{Endpoint, endpoint, parse};
    }
    /// From `catalog/go_url.rs`.
    pub mod go_url {
        pub use crate::catalog::go_url::parse;
    }
    /// From `config/crushrc/`.
    pub mod crushrc {
        pub use crate::config::crushrc::read;
    }
    /// From `config/merge.rs`.
    pub mod merge {
        pub use crate::config::merge::{Found, TypeChange, decode, merge, parse};
    }
    /// From `environment/dotenv.rs`.
    pub mod dotenv {
        pub use crate::environment::dotenv::{Entry, parse};
    }
    /// From `fetch/diagnosis.rs`.
    pub mod diagnosis {
        pub use crate::fetch::diagnosis::LIBRARY_WORDING;
    }
    /// From `store/cache.rs`.
    pub mod cache {
        pub use crate::store::cache::{locked, write};
    }
    /// From `store/digest.rs`.
    pub mod digest {
        pub use crate::store::digest::{catwalk_etag, hex, sha256};
    }
    /// From `store/state.rs`.
    pub mod state {
        pub use crate::store::state::{CacheState, now};
    }
    /// From `store/validators.rs`.
    pub mod validators {
        pub use crate::store::validators::Validators;
    }
    /// From `trust/guard.rs`.
    pub mod guard {
        pub use crate::trust::guard::{Baseline, Floor, configured, places, reach, review};
    }
    /// From `trust/memory.rs`.
    pub mod memory {
        pub use crate::trust::memory::{Floor, Memory, ids, write};
    }
    /// From `trust/place.rs`.
    pub mod place {
        pub use crate::trust::place::{Place, of_provider, place};
    }
    /// From `trust/signature.rs`.
    pub mod signature {
        pub use crate::trust::signature::{TrustedKeys, parse, timestamp};
    }
}
