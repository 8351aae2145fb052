//! What an update reads before it decides: the source (its bytes, their
//! validators, a pinned key's signature and signing time), and what the
//! new document replaces (the cache with its state, or the output file).
//! Every check that needs no download is made first.

use std::path::Path;

use super::{Output, UpdateOptions, Warning};
use crate::catalog::Target;
use crate::error::{Cause, Failure, OutputError};
use crate::fetch::http::{FetchError, FetchOptions, Session};
use crate::fetch::source::{self, Loaded, ReadError, Source};
use crate::store::cache::{self, Bytes, CacheFiles, Cached, Found};
use crate::store::validators::Validators;
use crate::store::{file, state};
use crate::trust::signature::TrustedKeys;
use crate::trust::{foreign, memory};

/// Everything an update read: the source, and what it replaces. It owns
/// the bytes that the parsed catalogs and the report borrow.
#[derive(Debug)]
pub struct Inputs {
    /// The source, which a failure names.
    pub(super) source: Source,
    /// What the source brought.
    pub(super) loaded: Loaded,
    /// Its detached signature, when a key is pinned.
    pub(super) signature: Option<Vec<u8>>,
    /// When it was signed, when a pinned key verified it.
    pub(super) signed_at: Option<u64>,
    /// The cache it replaces, when it goes into the cache and one is there
    /// to compare with (this program wrote it, or its review holds nothing).
    pub(super) cached: Option<Cached>,
    /// The file it replaces, when it goes into another file.
    pub(super) replaced_file: Option<Vec<u8>>,
    /// Whether the target holds these bytes already.
    pub(super) up_to_date: bool,
    /// Whether the cache replaced is the embedded snapshot standing in for
    /// none ([`Cached::is_stand_in`]).
    pub(super) stand_in: bool,
    /// Whether the memory of where keys went cannot be read and is to be
    /// rebuilt (by the embedded snapshot, the way back).
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

    /// Whether the source is the embedded snapshot.
    pub(super) fn embedded(&self) -> bool {
        self.source == Source::Embedded
    }

    /// Takes the bytes of what the new document replaces, which are not
    /// kept.
    pub(super) fn take_replaced(&mut self) -> Option<Vec<u8>> {
        match &mut self.cached {
            Some(cached) => Some(std::mem::take(&mut cached.bytes)),
            None => self.replaced_file.take(),
        }
    }

    /// A failure of the source.
    pub(super) fn fail(&self, cause: impl Into<Cause>) -> Failure {
        Failure::of(&self.source, cause)
    }
}

/// A warning for a catalog fetched over plain http from another machine:
/// anyone on the path can change it, endpoints included (and read the
/// Hyper key, `with_key`).
pub(crate) fn plain_http_warning(source: &Source, with_key: bool) -> Option<Warning> {
    match source {
        Source::Url(url) if url.scheme() == "http" && !crate::fetch::proxy::is_loopback(url) => {
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
    let fail = |cause: Cause| Failure::of(source, cause);
    let embedded = *source == Source::Embedded;
    if cache.target == Target::Hyper && embedded {
        return Err(fail(Cause::NoHyperSnapshot));
    }
    let mut notices = Vec::new();
    if let Output::File(path) = &options.output {
        check_output(path).map_err(|why| Failure::new(path.display(), Cause::Output(why)))?;
    }
    // Into a folder another user may write, and without knowing where
    // keys went, nothing is applied: said before anything is downloaded.
    // The embedded snapshot, the way back, rebuilds an unreadable memory.
    let into_cache = options.output == Output::Cache;
    if into_cache {
        cache::check_folder(cache).map_err(|e| Failure::new("data folder", e))?;
    }
    let rebuild_memory = match into_cache.then(|| memory::read(cache)) {
        Some(Err(problem)) if embedded => {
            notices.push(Warning::MemoryRebuilt {
                problem: problem.to_string(),
            });
            true
        }
        Some(Err(why)) => return Err(fail(Cause::Review(why.to_string()))),
        _ => false,
    };
    let fetch = FetchOptions {
        timeout: options.timeout,
        watch: options.watch.clone(),
        bearer: options.bearer.clone(),
        document: cache.target,
        ..FetchOptions::default()
    };
    // Unconditional: never a 304 past `fetch`, which refuses it.
    let brought = load(
        source,
        &fetch,
        options.keys.as_ref(),
        options.signature.as_deref(),
    );
    let Some((loaded, signature, signed_at)) = brought.map_err(fail)? else {
        return Err(fail(
            ReadError::from(FetchError::UnexpectedNotModified).into(),
        ));
    };
    let cached = match into_cache {
        true => baseline(cache, options.keys.is_some(), &mut notices),
        false => None,
    };
    let replaced_file = match &options.output {
        Output::File(path) => file::read_regular(path, file::MAX_FILE_BYTES)
            .ok()
            .flatten()
            .map(|(bytes, _)| bytes),
        _ => None,
    };
    // Whether the target holds these bytes already.
    let replaced = (cached.as_ref().map(|c| &c.bytes[..])).or(replaced_file.as_deref());
    let up_to_date = replaced == Some(&loaded.bytes[..]);
    Ok(Inputs {
        source: source.clone(),
        stand_in: cached.as_ref().is_some_and(Cached::is_stand_in),
        loaded,
        signature,
        signed_at,
        cached,
        replaced_file,
        up_to_date,
        rebuild_memory,
        warnings: plain_http_warning(source, options.bearer.is_some())
            .into_iter()
            .collect(),
        notices,
    })
}

/// The cache a new document is compared with: what this program wrote, or
/// what another program wrote that the review does not hold. One that
/// cannot be used is no baseline (and is replaced): told in `notices`.
fn baseline(cache: &CacheFiles, pinned: bool, notices: &mut Vec<Warning>) -> Option<Cached> {
    match cache::read(cache, Bytes::Read) {
        Found::Vouched(cached) => Some(cached),
        Found::Foreign(found) => match foreign::held(cache, &found, pinned) {
            None => Some(found),
            Some(held) => {
                notices.push(Warning::ForeignHeld {
                    target: cache.target,
                    findings: held.changes,
                });
                None
            }
        },
        Found::Missing(_) => None,
        Found::Unusable(e) => {
            let problem = e.to_string();
            notices.push(Warning::CacheUnreadable { problem });
            None
        }
    }
}

/// What a source brought: its bytes and validators, and with a pinned key
/// its signature and signing time.
pub(crate) type Brought = (Loaded, Option<Vec<u8>>, Option<u64>);

/// What `source` brings (`None`: `304 Not Modified` to a request
/// conditional on `fetch.conditional`), on one session: with `keys`
/// pinned, its signature too (the file `signature`, else the one beside
/// it, fetched on the catalog's connection), verified before anything is
/// written.
pub(crate) fn load(
    source: &Source,
    fetch: &FetchOptions,
    keys: Option<&TrustedKeys>,
    signature: Option<&Path>,
) -> Result<Option<Brought>, Cause> {
    let session = Session::default();
    let Some(loaded) = source.load(fetch, &session)? else {
        return Ok(None);
    };
    let Some(keys) = keys else {
        return Ok(Some((loaded, None, None)));
    };
    let fetch = FetchOptions {
        conditional: Validators::default(),
        ..fetch.clone()
    };
    let signature = source.load_signature(signature, &fetch, &session)?;
    let signed_at = match &signature {
        Some(signature) => Some(keys.verify(&loaded.bytes, signature, state::now())?),
        None => None,
    };
    Ok(Some((loaded, signature, signed_at)))
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
