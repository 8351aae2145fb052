//! What an update tells that did not stop it: typed, with the words a
//! person reads in its `Display`.

use std::fmt;

use crate::trust::guard::{ALLOW_KEY_MOVE, KeyMove};

/// A problem worth telling that did not stop an update
/// ([`UpdateReport::warnings`](super::UpdateReport::warnings)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning {
    /// The source is plain http off this machine: anyone on the path can
    /// change what it serves.
    PlainHttp {
        /// The URL, a password replaced by `***`.
        url: String,
        /// Whether a Hyper key rides along.
        with_key: bool,
    },
    /// The cache cannot be read: it is replaced, not compared with.
    CacheUnreadable {
        /// Why, in words.
        problem: String,
    },
    /// What is remembered of where keys went cannot be read: the embedded
    /// snapshot rebuilds it.
    MemoryRebuilt {
        /// Why, in words.
        problem: String,
    },
    /// A key move a person allowed: requests carrying the key go to a new
    /// place.
    KeyMoveAllowed {
        /// The move.
        moved: KeyMove,
        /// Whether it only would (a dry run).
        dry_run: bool,
    },
    /// What the new catalog's validation found.
    Catalog(crate::catalog::Warning),
    /// Another program wrote a document into the cache that the review
    /// holds: it is no baseline, and is replaced.
    ForeignHeld {
        /// Which document.
        target: crate::catalog::Target,
        /// What needs a person, one finding a line.
        findings: Vec<String>,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::PlainHttp { url, with_key } => {
                write!(
                    f,
                    "{url} is plain http: the catalog travels unprotected and anyone on the path can change it; prefer https"
                )?;
                if *with_key {
                    f.write_str("; the Hyper key it carries can be read on the way too")?;
                }
                Ok(())
            }
            Warning::CacheUnreadable { problem } => {
                write!(f, "{problem}; it is not compared with, and is replaced")
            }
            Warning::MemoryRebuilt { problem } => write!(f, "{problem}; it is rebuilt"),
            Warning::KeyMoveAllowed { moved, dry_run } => write!(
                f,
                "{moved}: requests carrying its value {} go to this new place ({ALLOW_KEY_MOVE})",
                if *dry_run { "would" } else { "will" }
            ),
            Warning::Catalog(warning) => warning.fmt(f),
            Warning::ForeignHeld { target, findings } => write!(
                f,
                "{} that another program wrote into the cache is not compared with, and is replaced: {}",
                target.noun(),
                findings.join("; ")
            ),
        }
    }
}
