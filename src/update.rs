//! `update-providers`: read a source, validate it, review it against the
//! catalog it replaces, and swap it into the cache (or an output file),
//! reporting what changed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::catalog::changes::{self, Changes};
use crate::catalog::{Catalog, Target};
use crate::error::{Cause, Failure};
use crate::fetch::http::{Bearer, FetchOptions, Session};
use crate::fetch::source::{self, Source};
use crate::fetch::watch::Watch;
use crate::store::atomic;
use crate::store::cache::{self, CacheFiles};
use crate::store::digest::{self, hex};
use crate::store::file;
use crate::store::state::{self, CacheState};
use crate::trust::guard::{Baseline, Review};
use crate::trust::memory::{Floor, Memory};
use crate::trust::signature::SIGNATURE_SUFFIX;
use crate::trust::signature::{SignatureError, TrustedKeys};
use crate::trust::{self, guard};

/// Options of `update-providers`.
#[derive(Debug, Clone)]
pub struct UpdateOptions {
    /// Do everything but the write.
    pub dry_run: bool,
    /// Write here instead of the cache.
    pub output: Option<PathBuf>,
    /// Expected SHA-256 of the raw bytes, lowercase hex.
    pub sha256: Option<String>,
    /// Bound on the whole transfer.
    pub timeout: Duration,
    /// The pinned keys: every source but the embedded snapshot must then be
    /// signed by one of them.
    pub keys: Option<TrustedKeys>,
    /// The signature of standard input (`--signature FILE`), or of another
    /// source instead of the one beside it.
    pub signature: Option<PathBuf>,
    /// Apply a catalog with fewer than half of the previous providers or
    /// models (`--allow-shrink`).
    pub allow_shrink: bool,
    /// Apply a signed catalog older than the cached one
    /// (`--allow-downgrade`).
    pub allow_downgrade: bool,
    /// Apply a catalog that sends a known key to a new place
    /// (`--allow-key-move`).
    pub allow_key_move: bool,
    /// Where the download's progress goes, and what ends it early (then
    /// the failure's cause is
    /// [`crate::fetch::http::FetchError::Interrupted`]); by default,
    /// neither.
    pub watch: Watch,
    /// Sent as `Authorization: Bearer` with a URL's requests: the Hyper
    /// key, for Hyper's provider.
    pub bearer: Option<Bearer>,
}

impl Default for UpdateOptions {
    fn default() -> Self {
        UpdateOptions {
            dry_run: false,
            output: None,
            sha256: None,
            timeout: Duration::from_secs(60),
            keys: None,
            signature: None,
            allow_shrink: false,
            allow_downgrade: false,
            allow_key_move: false,
            watch: Watch::default(),
            bearer: None,
        }
    }
}

/// What an update did, borrowing from the catalogs it read.
#[derive(Debug, Clone, Serialize)]
pub struct UpdateReport<'a> {
    /// A dry run of a catalog that is refused: the report shows what the
    /// refusal is about, and the failure follows it.
    #[serde(skip)]
    pub refused: bool,
    /// The source, as shown to the user.
    pub source: String,
    /// Number of providers in the new catalog.
    pub providers: usize,
    /// Number of models in the new catalog.
    pub models: usize,
    /// The file written, or that would have been written with `--dry-run`.
    pub target: PathBuf,
    /// Whether the file was written.
    pub written: bool,
    /// Whether the target already held exactly these bytes (then they were
    /// not written again).
    pub up_to_date: bool,
    /// Lowercase hex SHA-256 of the catalog bytes.
    pub sha256: String,
    /// When the catalog was signed (seconds since the Unix epoch), when a
    /// key is pinned; in JSON an RFC 3339 time, as `providers --status`
    /// shows it.
    #[serde(serialize_with = "rfc3339_or_null")]
    pub signed_at: Option<u64>,
    /// The id of the pinned key that verified it (as minisign shows it,
    /// 16 hex digits), when one did.
    pub signed_by: Option<String>,
    /// What the cache held before, when the update was to the cache and
    /// there was one: what a write replaces (or a dry run would).
    pub replaced: Option<Replaced>,
    /// The URL of a held refresh this update settled: the person kept the
    /// catalog in use, which the cache already held.
    pub settled: Option<String>,
    /// Changes against the previous file; `None` when there was none (or it
    /// was not a valid catalog).
    pub changes: Option<Changes<'a>>,
    /// Problems worth telling that did not stop the update.
    pub warnings: Vec<String>,
    /// Those of the warnings that tell what a person allowed or what was
    /// not trusted: told even when they asked for quiet (`--quiet`).
    #[serde(skip)]
    pub notices: Vec<String>,
    /// The validated bytes, for the caller to write, with `--output -`
    /// (standard output).
    #[serde(skip)]
    pub catalog: Option<&'a [u8]>,
}

/// The catalog the cache held before an update.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Replaced {
    /// Where it came from, as the state file says (a URL, a path,
    /// `embedded snapshot`); `None` when it was written by another program.
    pub source: Option<String>,
    /// When it was written; in JSON an RFC 3339 time.
    #[serde(serialize_with = "rfc3339_or_null")]
    pub written_at: Option<u64>,
    /// Whether it was the embedded snapshot standing in for a first fetch
    /// that failed or was held.
    pub stand_in: bool,
}

fn rfc3339_or_null<S: serde::Serializer>(at: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
    match at {
        Some(at) => s.serialize_str(&state::rfc3339(*at)),
        None => s.serialize_none(),
    }
}

/// How long an update waits for another writer of the cache to finish.
const LOCK_WAIT: Duration = Duration::from_secs(30);

/// A staged write: the output file, or the cache with its lock.
enum Staging {
    File(atomic::Staged),
    Cache(cache::StagedCache),
}

/// A warning for a catalog fetched over plain http from another machine:
/// anyone on the path can change it, endpoints included.
pub fn plain_http_warning(source: &Source) -> Option<String> {
    match source {
        Source::Url(url) if url.scheme() == "http" && !source::is_loopback(url) => Some(format!(
            "{url} is plain http: the catalog travels unprotected and anyone on the path can change it; prefer https"
        )),
        _ => None,
    }
}

/// Runs `update-providers`: `source` into `cache` (or `options.output`),
/// then hands what it did to `report`, whose result it returns; the report
/// borrows from the catalogs, which live until `report` returns. On
/// failure nothing was written. The cache's [`Target`] says which
/// document it is: the catalog, or Hyper's provider (read as one
/// provider, reviewed as a catalog of it; there is no embedded one).
pub fn update_providers<R>(
    source: &Source,
    cache: &CacheFiles,
    options: &UpdateOptions,
    report: impl FnOnce(&UpdateReport<'_>) -> R,
) -> Result<R, Failure> {
    let label = source.to_string();
    let fail = |cause: Cause| Failure {
        source: label.clone(),
        cause,
    };
    let document = cache.target;
    if document == Target::Hyper && *source == Source::Embedded {
        return Err(fail(Cause::NoHyperSnapshot));
    }
    let mut warnings: Vec<String> = plain_http_warning(source)
        .map(|w| match options.bearer {
            Some(_) => format!("{w}; the Hyper key it carries can be read on the way too"),
            None => w,
        })
        .into_iter()
        .collect();
    let mut notices: Vec<String> = Vec::new();
    let to_cache = options.output.is_none();
    let to_stdout = options.output.as_deref() == Some(Path::new(STDOUT));
    // An output file's own failures are told by its path; checked before
    // anything is downloaded.
    let output_file = options.output.as_deref().filter(|_| !to_stdout);
    let fail_output = |cause: Cause| Failure {
        source: output_file.map_or_else(|| label.clone(), |p| p.display().to_string()),
        cause,
    };
    if let Some(path) = output_file {
        check_output(path).map_err(|why| fail_output(Cause::Output(why)))?;
    }
    // Into a folder another user may write, and without knowing where
    // keys went, nothing is applied: said before anything is downloaded.
    // The embedded snapshot, the way back, rebuilds an unreadable memory.
    let (memory, rebuild_memory) = if to_cache {
        cache::check_folder(cache).map_err(|e| Failure::new("data folder", e))?;
        read_memory(cache, source, &mut notices).map_err(fail)?
    } else {
        (None, false)
    };
    let target = options
        .output
        .clone()
        .unwrap_or_else(|| cache.catalog.clone());
    let fetch = FetchOptions {
        timeout: options.timeout,
        watch: options.watch.clone(),
        bearer: options.bearer.clone(),
        document: cache.target,
        ..FetchOptions::default()
    };
    // One session: the signature comes on the catalog's connection.
    let session = Session::default();
    let loaded = source.load(&fetch, &session).map_err(|e| fail(e.into()))?;
    let bytes: &[u8] = &loaded.bytes;
    // Before anything is written: a pinned key's signature.
    let signature = match &options.keys {
        Some(_) => source
            .load_signature(options.signature.as_deref(), &fetch, &session)
            .map_err(|e| fail(SignatureError::from(e).into()))?,
        None => None,
    };
    let signed_at = match (&options.keys, &signature) {
        (Some(keys), Some(signature)) => Some(
            keys.verify(bytes, signature, state::now())
                .map_err(|e| fail(e.into()))?,
        ),
        _ => None,
    };
    // What the new catalog replaces, and what is known of it. A cache that
    // cannot be used is no baseline (and is replaced).
    let mut cached = if to_cache {
        cache::read(cache).unwrap_or_else(|e| {
            notices.push(format!("{e}; it is not compared with, and is replaced"));
            None
        })
    } else {
        None
    };
    let mut replaced_file = if to_cache || to_stdout {
        None
    } else {
        file::read_regular(&target, file::MAX_FILE_BYTES)
            .ok()
            .flatten()
            .map(|(bytes, _)| bytes)
    };
    let stand_in = cached.as_ref().is_some_and(cache::Cached::is_stand_in);
    let replaced = cached.as_ref().map(|c| Replaced {
        source: c
            .state
            .as_ref()
            .map(|s| s.source.clone())
            .filter(|s| !s.is_empty()),
        written_at: c.written_at(),
        stand_in,
    });
    let up_to_date = cached
        .as_ref()
        .map(|c| c.bytes.as_slice())
        .or(replaced_file.as_deref())
        == Some(bytes);
    // The same bytes again are not kept or read twice: the new catalog is
    // also the previous one (a 50 MB catalog: 219 to 102 MB at the peak).
    if up_to_date {
        cached.iter_mut().for_each(|c| c.bytes = Vec::new());
        replaced_file = None;
    }
    let previous_bytes = cached
        .as_ref()
        .map(|c| c.bytes.as_slice())
        .filter(|_| !up_to_date)
        .or(replaced_file.as_deref());
    let write = !options.dry_run && !up_to_date && !to_stdout;
    // Three jobs that need not wait for each other: validating the new
    // catalog; reading the previous one and hashing the new bytes; and,
    // when there is a write, taking the lock and writing the new bytes
    // beside the target, flushed (visible only with the rename, once they
    // passed). The computing goes to new threads and this thread does the
    // write, whose flush soon blocks it and leaves its CPU to them; the
    // other way round, a new writing thread can wait for a CPU while this
    // one computes (this order measured 4 % faster on the real catalog).
    let (next, (previous, digest), staged) = std::thread::scope(|scope| {
        let summary = scope.spawn(|| {
            let previous = previous_bytes.and_then(|b| document.validate(b).ok());
            (previous, digest::sha256(bytes))
        });
        if !write {
            let next = document.validate(bytes);
            return (next, join(summary), None);
        }
        let next = scope.spawn(|| document.validate(bytes));
        let staged = match &options.output {
            Some(path) => atomic::stage(path, bytes, true).map(Staging::File),
            None => cache::stage_cache(cache, bytes, LOCK_WAIT).map(Staging::Cache),
        };
        (join(next), join(summary), Some(staged))
    });
    let sha256 = hex(&digest);
    if let Some(expected) = &options.sha256
        && !expected.eq_ignore_ascii_case(&sha256)
    {
        return Err(fail(Cause::Digest {
            expected: expected.to_ascii_lowercase(),
            actual: sha256,
        }));
    }
    let mut next = next.map_err(|e| fail(Cause::invalid(document, e)))?;
    warnings.append(&mut next.warnings);
    let next = next;
    // Staged into the cache, this run holds the folder lock: what is
    // remembered is read again, as it was last written (a refresh may have
    // taught it a place since), and no writer changes it until the commit.
    let memory = match &staged {
        Some(Ok(Staging::Cache(_))) if !rebuild_memory => {
            trust::memory::read(cache).map_err(|why| fail(Cause::Review(why)))?
        }
        _ => memory,
    };
    let previous = previous.as_ref().or(up_to_date.then_some(&next));
    let review = review(&Reviewed {
        cache,
        next: &next,
        signed_at,
        previous,
        stand_in,
        to_cache,
        memory: memory.as_ref(),
        state_signed: cached
            .as_ref()
            .and_then(|c| c.state.as_ref())
            .and_then(|s| s.signed_at),
    })
    .map_err(|why| fail(Cause::Review(why)))?;
    let embedded = *source == Source::Embedded;
    // A dry run shows what a refusal is about: the report, then the
    // refusal.
    let refusal = match allowed(&review, options, embedded, &mut notices) {
        Err(cause) if options.dry_run => Some(cause),
        allowed => {
            allowed.map_err(fail)?;
            None
        }
    };
    let learn = |memory: &mut Memory| match document {
        Target::Catalog => learn(memory, &next, &review, &label, embedded, signed_at),
        // The floor and the newest signing time are the catalog's; Hyper's
        // signing time is in its state.
        Target::Hyper => memory.learn(&next),
    };
    let rebuilt = || trust::hyper::rebuilt(cache, previous.filter(|_| !stand_in));
    let record = |start, change| match rebuild_memory {
        true => trust::memory::rebuild(cache, start, change),
        false => trust::memory::record(cache, start, change),
    };
    let state = || CacheState {
        sha256: sha256.clone(),
        validators: loaded.validators.clone(),
        source: label.clone(),
        fetched_at: state::now(),
        // A person asked for these bytes: they are current.
        confirmed_at: Some(state::now()),
        signed_at,
        ..CacheState::default()
    };
    let mut settled = None;
    match staged.transpose().map_err(|e| fail_output(e.into()))? {
        Some(Staging::File(staged)) => {
            staged.commit().map_err(|e| fail_output(e.into()))?;
            // A signed catalog goes on with its signature, which a client
            // pinning the key will look for beside it.
            if let (Some(signature), Some(path)) = (&signature, output_file) {
                let mut name = path.as_os_str().to_owned();
                name.push(SIGNATURE_SUFFIX);
                atomic::write_atomically(Path::new(&name), signature, true)
                    .map_err(|e| fail_output(e.into()))?;
            }
        }
        // Where the keys go is recorded first: should the rename not
        // happen, the memory knows of places a person approved, no fewer.
        Some(Staging::Cache(staged)) => {
            record(rebuilt, learn).map_err(|e| fail(e.into()))?;
            staged.commit(&state()).map_err(|e| fail(e.into()))?
        }
        // The same bytes again: only the confirmation is new.
        None if up_to_date && !options.dry_run && to_cache => {
            cache::locked(cache, LOCK_WAIT, || record(rebuilt, learn))
                .map_err(|e| fail(e.into()))?;
            if let Some(cached) = &cached {
                settled = confirm(cache, cached, &loaded, &label, signed_at)
                    .map_err(|e| fail(e.into()))?;
            }
        }
        None => {}
    }
    let shown = report(&UpdateReport {
        providers: next.providers.len(),
        models: next.model_count(),
        changes: previous.map(|p| changes::compare(p, &next)),
        source: label.clone(),
        target,
        written: write,
        up_to_date,
        sha256,
        signed_at,
        signed_by: signature
            .as_deref()
            .filter(|_| signed_at.is_some())
            .and_then(trust::signature::key_id),
        replaced,
        settled,
        // Every warning in one list (JSON, a report); the notices also on
        // their own, for a quiet run.
        warnings: notices.iter().cloned().chain(warnings).collect(),
        notices,
        catalog: to_stdout.then_some(bytes).filter(|_| refusal.is_none()),
        refused: refusal.is_some(),
    });
    match refusal {
        Some(cause) => Err(fail(cause)),
        None => Ok(shown),
    }
}

/// The cache's memory of where keys went (`None`: none there), and whether
/// an unreadable one is to be rebuilt; an unreadable one is a refusal but
/// for the embedded snapshot, the way back a person takes.
fn read_memory(
    cache: &CacheFiles,
    source: &Source,
    notices: &mut Vec<String>,
) -> Result<(Option<Memory>, bool), Cause> {
    match trust::memory::read(cache) {
        Ok(memory) => Ok((memory, false)),
        Err(why) if *source == Source::Embedded => {
            notices.push(format!("{why}; it is rebuilt"));
            Ok((None, true))
        }
        Err(why) => Err(Cause::Review(why)),
    }
}

/// A person may apply what a refresh would hold, but must say so (the
/// embedded snapshot, which they installed, is always applied): what they
/// did not allow is a refusal; a key move they allowed is told.
fn allowed(
    review: &Review,
    options: &UpdateOptions,
    embedded: bool,
    notices: &mut Vec<String>,
) -> Result<(), Cause> {
    let unallowed = review.unallowed(
        options.allow_shrink || embedded,
        options.allow_downgrade,
        options.allow_key_move || embedded,
    );
    if !unallowed.is_clear() {
        return Err(Cause::Refused(unallowed));
    }
    let will = if options.dry_run { "would" } else { "will" };
    for moved in &review.moves {
        notices.push(format!(
            "{moved}: requests carrying its value {will} go to this new place ({})",
            guard::ALLOW_KEY_MOVE
        ));
    }
    Ok(())
}

/// What the cache's memory learns of `next`, applied from `label` after
/// `review`: its places; the floor, when a person allowed a shrink (none
/// again for the embedded snapshot); its signing time.
fn learn(
    memory: &mut Memory,
    next: &Catalog<'_>,
    review: &Review,
    label: &str,
    embedded: bool,
    signed_at: Option<u64>,
) -> Result<(), String> {
    memory.learn(next)?;
    if embedded {
        memory.floor = None;
    } else if !review.shrinks.is_empty() {
        memory.floor = Some(Floor {
            source: label.to_owned(),
            providers: trust::memory::ids(next),
        });
    }
    if let Some(signed_at) = signed_at {
        memory.saw_signature(signed_at, review.downgrade.is_some());
    }
    Ok(())
}

/// What an update reviews: the new catalog and what it replaces.
struct Reviewed<'r, 'a> {
    /// The cache (its document, and its folder's memory).
    cache: &'r CacheFiles,
    next: &'r Catalog<'a>,
    signed_at: Option<u64>,
    /// The valid catalog it replaces (the cache, or the output file).
    previous: Option<&'r Catalog<'a>>,
    /// Whether that is the embedded snapshot standing in for no cache.
    stand_in: bool,
    /// Whether the cache is written (else an output file), and its
    /// memory file (`None`: none there).
    to_cache: bool,
    memory: Option<&'r Memory>,
    /// The signing time the cache's state records.
    state_signed: Option<u64>,
}

/// The review of an update ([`guard::review`]): into the cache, against
/// what its memory remembers, the cache and the floor; into another file,
/// against that file (and the embedded snapshot's places) alone. Hyper's
/// provider has no floor (its cached provider is the half to keep), and
/// its newest signing time is its state's.
fn review(r: &Reviewed<'_, '_>) -> Result<Review, String> {
    let previous = r.previous.filter(|_| !r.stand_in);
    let known = match r.to_cache {
        true => trust::hyper::effective(r.cache, r.memory.cloned(), previous)?,
        false => Memory::rebuilt(previous)?,
    };
    let hyper = r.cache.target == Target::Hyper;
    let floor = match (&known.floor, r.to_cache && !hyper) {
        (_, false) => guard::Floor::None,
        (Some(floor), true) => guard::Floor::Applied(&floor.providers, &floor.source),
        (None, true) => guard::Floor::Embedded,
    };
    let signed = match (r.to_cache, hyper) {
        (false, _) => None,
        (true, false) => known.signed_at.max(r.state_signed),
        (true, true) => r.state_signed,
    };
    guard::review(
        &Baseline {
            previous,
            places: &known.places,
            floor,
            signed,
        },
        r.next,
        r.signed_at,
    )
}

/// The `--output` that means standard output.
pub const STDOUT: &str = "-";

/// Why `path` cannot take the catalog, before anything is downloaded: a
/// folder, or a file in a folder that does not exist (which is not made).
fn check_output(path: &Path) -> Result<(), String> {
    if path.is_dir() {
        return Err(format!(
            "it is a folder, not a file's path (such as {})",
            path.join("providers.json").display()
        ));
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !folder.is_dir() {
        return Err(format!(
            "the folder {} does not exist, and is not made",
            folder.display()
        ));
    }
    Ok(())
}

/// A scoped thread's result; its panic, passed on.
fn join<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Records that the cache, `cached` when it was read and exactly what
/// `loaded` brought, is current, with the validators a server sent with
/// it; nothing when another program replaced it since. A person who asks
/// for the catalog in use keeps it: a held refresh is settled, and its URL
/// returned.
fn confirm(
    cache: &CacheFiles,
    cached: &cache::Cached,
    loaded: &source::Loaded,
    label: &str,
    signed_at: Option<u64>,
) -> Result<Option<String>, atomic::WriteError> {
    let mut settled = None;
    cache::update_state(cache, cached, LOCK_WAIT, |state| {
        settled = state.keep_over_held();
        if !loaded.validators.is_empty() {
            state.validators = loaded.validators.clone();
            state.source = label.to_owned();
        }
        state.confirmed_at = Some(state::now());
        if signed_at.is_some() {
            state.signed_at = signed_at;
        }
    })?;
    Ok(settled)
}

/// `update-providers --keep-current`: a person keeps the catalog in the
/// cache over what the last refresh held back, which no start then tells
/// of again, nor a refresh that brings it again. Nothing is downloaded,
/// and the catalog is not rewritten. The URL it was held from, when there
/// was a held refresh to settle.
pub fn keep_current(cache: &CacheFiles) -> Result<Option<String>, Failure> {
    let fail = |cause: Cause| Failure::new(cache.catalog.display(), cause);
    let mut settled = None;
    let settle = |state: &mut CacheState| settled = state.keep_over_held();
    match cache::read(cache).map_err(|e| fail(Cause::Cache(e.to_string())))? {
        Some(cached) if cached.state.as_ref().is_some_and(|s| s.held().is_some()) => {
            cache::update_state(cache, &cached, LOCK_WAIT, settle)
        }
        // Hyper's provider, when Crush uses its own: the state of a
        // document not there.
        None if cache::absent_state(cache).is_some_and(|s| s.held().is_some()) => {
            cache::update_absent_state(cache, LOCK_WAIT, settle)
        }
        _ => return Ok(None),
    }
    .map_err(|e| fail(e.into()))?;
    Ok(settled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_warning_only_for_other_hosts() {
        let url = |u: &str| Source::Url(u.parse().unwrap());
        assert!(
            plain_http_warning(&url("http://mirror.corp.example/v2/providers"))
                .unwrap()
                .contains("unprotected")
        );
        assert!(plain_http_warning(&url("http://127.0.0.1:8080/v2/providers")).is_none());
        assert!(plain_http_warning(&url("https://mirror.corp.example/v2/providers")).is_none());
        assert!(plain_http_warning(&Source::Embedded).is_none());
    }
}
