//! What an update reads before it decides: the source (its bytes, their
//! validators, a pinned key's signature and signing time), and what the
//! new document replaces (the cache with its state and memory, or the
//! output file). Every check that needs no download is made first.

use std::path::Path;

use super::{Output, UpdateOptions, Warning};
use crate::catalog::Target;
use crate::error::{Cause, Failure, OutputError};
use crate::fetch::http::{FetchOptions, Session};
use crate::fetch::source::{self, Loaded, Source};
use crate::store::cache::{self, CacheFiles, Cached};
use crate::store::file;
use crate::store::state;
use crate::trust;
use crate::trust::foreign;
use crate::trust::memory::Memory;

/// Everything an update read: the source, and what it replaces. It owns
/// the bytes that the parsed catalogs and the report borrow.
#[derive(Debug)]
pub struct Inputs {
    /// The source, as shown to the user.
    pub(super) label: String,
    /// The source, which a failure names.
    pub(super) source: Source,
    /// Whether the source is the embedded snapshot.
    pub(super) embedded: bool,
    /// What the source brought.
    pub(super) loaded: Loaded,
    /// Its detached signature, when a key is pinned.
    pub(super) signature: Option<Vec<u8>>,
    /// When it was signed, when a pinned key verified it.
    pub(super) signed_at: Option<u64>,
    /// The cache it replaces, when it goes into the cache and one is
    /// there that can be used.
    pub(super) cached: Option<Cached>,
    /// The file it replaces, when it goes into another file.
    pub(super) replaced_file: Option<Vec<u8>>,
    /// What is remembered of where keys went (`None`: nothing there), as
    /// read before the download, and whether an unreadable memory is to
    /// be rebuilt (for the embedded snapshot, the way back).
    pub(super) memory: Option<Memory>,
    pub(super) rebuild_memory: bool,
    /// Problems worth telling; and those told even to a quiet run.
    pub(super) warnings: Vec<Warning>,
    pub(super) notices: Vec<Warning>,
}

impl Inputs {
    /// The new document's bytes.
    pub(super) fn bytes(&self) -> &[u8] {
        &self.loaded.bytes
    }

    /// Whether the target already holds exactly these bytes.
    pub(super) fn up_to_date(&self) -> bool {
        let there = match &self.cached {
            Some(cached) => Some(cached.bytes.as_slice()),
            None => self.replaced_file.as_deref(),
        };
        there == Some(self.bytes())
    }

    /// The bytes of what the new document replaces, when they differ.
    pub(super) fn previous_bytes(&self) -> Option<&[u8]> {
        let there = match &self.cached {
            Some(cached) => Some(cached.bytes.as_slice()),
            None => self.replaced_file.as_deref(),
        };
        there.filter(|_| !self.up_to_date())
    }

    /// Whether the cache replaced is the embedded snapshot standing in for
    /// none.
    pub(super) fn stand_in(&self) -> bool {
        self.cached.as_ref().is_some_and(Cached::is_stand_in)
    }

    /// A failure of the source.
    pub(super) fn fail(&self, cause: Cause) -> Failure {
        Failure::of(&self.source, cause)
    }
}

/// A warning for a catalog fetched over plain http from another machine:
/// anyone on the path can change it, endpoints included (and read the
/// Hyper key, `with_key`).
pub(crate) fn plain_http_warning(source: &Source, with_key: bool) -> Option<Warning> {
    match source {
        Source::Url(url) if url.scheme() == "http" && !source::is_loopback(url) => {
            Some(Warning::PlainHttp {
                url: source::redacted(url.as_str()),
                with_key,
            })
        }
        _ => None,
    }
}

/// Reads `source` for the cache `cache` (whose [`Target`] says which
/// document it is: the catalog, or Hyper's provider, of which there is no
/// embedded one) or `options.output`, and what it replaces. What cannot
/// take it (an output path, a data folder another user may write, a
/// memory that cannot be read) is told before anything is downloaded.
pub fn read(
    source: &Source,
    cache: &CacheFiles,
    options: &UpdateOptions,
) -> Result<Inputs, Failure> {
    let label = source.to_string();
    let fail = |cause: Cause| Failure::of(source, cause);
    let embedded = *source == Source::Embedded;
    if cache.target == Target::Hyper && embedded {
        return Err(fail(Cause::NoHyperSnapshot));
    }
    let warnings: Vec<Warning> = plain_http_warning(source, options.bearer.is_some())
        .into_iter()
        .collect();
    let mut notices: Vec<Warning> = Vec::new();
    if let Output::File(path) = &options.output {
        check_output(path).map_err(|why| Failure::new(path.display(), Cause::Output(why)))?;
    }
    // Into a folder another user may write, and without knowing where
    // keys went, nothing is applied: said before anything is downloaded.
    // The embedded snapshot, the way back, rebuilds an unreadable memory.
    let mut unreviewed = false;
    let (memory, rebuild_memory) = match options.output {
        Output::Cache => {
            cache::check_folder(cache).map_err(|e| Failure::new("data folder", e))?;
            // What another program wrote is no baseline until reviewed.
            match foreign::held(cache, options.keys.is_some()) {
                Ok(None) => {}
                Ok(Some(held)) => {
                    unreviewed = true;
                    notices.push(Warning::ForeignHeld {
                        target: cache.target,
                        findings: held.changes,
                    });
                }
                Err(e) => {
                    unreviewed = true;
                    notices.push(Warning::CacheUnreadable {
                        problem: e.to_string(),
                    });
                }
            }
            read_memory(cache, embedded, &mut notices).map_err(fail)?
        }
        _ => (None, false),
    };
    let Brought {
        loaded,
        signature,
        signed_at,
    } = load(source, cache.target, options).map_err(fail)?;
    // What the new document replaces. A cache that cannot be used is no
    // baseline (and is replaced).
    let cached = match options.output {
        Output::Cache if unreviewed => None,
        Output::Cache => cache::read(cache).unwrap_or_else(|e| {
            notices.push(Warning::CacheUnreadable {
                problem: e.to_string(),
            });
            None
        }),
        _ => None,
    };
    let replaced_file = match &options.output {
        Output::File(path) => file::read_regular(path, file::MAX_FILE_BYTES)
            .ok()
            .flatten()
            .map(|(bytes, _)| bytes),
        _ => None,
    };
    Ok(Inputs {
        label,
        source: source.clone(),
        embedded,
        loaded,
        signature,
        signed_at,
        cached,
        replaced_file,
        memory,
        rebuild_memory,
        warnings,
        notices,
    })
}

/// What a source brought.
struct Brought {
    loaded: Loaded,
    signature: Option<Vec<u8>>,
    signed_at: Option<u64>,
}

/// The source's bytes, and with a pinned key its signature and signing
/// time (verified before anything is written), on one session: the
/// signature comes on the catalog's connection.
fn load(source: &Source, target: Target, options: &UpdateOptions) -> Result<Brought, Cause> {
    let fetch = FetchOptions {
        timeout: options.timeout,
        watch: options.watch.clone(),
        bearer: options.bearer.clone(),
        document: target,
        ..FetchOptions::default()
    };
    let session = Session::default();
    let loaded = source.load(&fetch, &session)?;
    let Some(keys) = &options.keys else {
        return Ok(Brought {
            loaded,
            signature: None,
            signed_at: None,
        });
    };
    let signature = source.load_signature(options.signature.as_deref(), &fetch, &session)?;
    let signed_at = match &signature {
        Some(signature) => Some(keys.verify(&loaded.bytes, signature, state::now())?),
        None => None,
    };
    Ok(Brought {
        loaded,
        signature,
        signed_at,
    })
}

/// The cache's memory of where keys went (`None`: none there), and whether
/// an unreadable one is to be rebuilt; an unreadable one is a refusal but
/// for the embedded snapshot, the way back a person takes.
fn read_memory(
    cache: &CacheFiles,
    embedded: bool,
    notices: &mut Vec<Warning>,
) -> Result<(Option<Memory>, bool), Cause> {
    match trust::memory::read(cache) {
        Ok(memory) => Ok((memory, false)),
        Err(why) if embedded => {
            notices.push(Warning::MemoryRebuilt {
                problem: why.to_string(),
            });
            Ok((None, true))
        }
        Err(why) => Err(Cause::Review(why.to_string())),
    }
}

/// Why `path` cannot take the catalog, before anything is downloaded: a
/// folder, or a file in a folder that does not exist (which is not made).
fn check_output(path: &Path) -> Result<(), OutputError> {
    if path.is_dir() {
        return Err(OutputError::Folder {
            example: path.join("providers.json"),
        });
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !folder.is_dir() {
        return Err(OutputError::NoFolder(folder.to_owned()));
    }
    Ok(())
}
