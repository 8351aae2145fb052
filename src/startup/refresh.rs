//! The automatic refresh of a valid cache: one conditional request, its
//! answer validated and swapped in exactly as `update-providers` does
//! (every check, the exact bytes, the server's validators in the state,
//! an atomic and durable rename under the folder lock), and its outcome
//! recorded in the state file.
//!
//! A new catalog that would send an API key to a place it never reached,
//! that lost most of the cache or of the floor, or that is not signed as a
//! pinned key requires (or was signed before the newest one seen), is held
//! ([`crate::trust::guard`], [`crate::trust::signature`]): the cache stays as it is, and
//! the refresh records what it held back for every start to tell.
//!
//! Start-up runs it off the user's path ([`crate::startup`]): on a thread
//! for a long-lived host, which gets a [`Refresh`] handle to the outcome,
//! or in a detached helper process for a short-lived command, which has
//! printed and gone by the time it ends. At most one refresh runs per data
//! folder: each holds a lock of its own, which the kernel releases if the
//! process dies, and checks once it has it that no other refresh has just
//! confirmed the cache.
//!
//! The same refresh keeps Hyper's provider (`hyper.json`) fresh: the
//! cache's [`CacheFiles::target`] says which document a [`Job`] is, and
//! with it how the answer is read, reviewed (no floor; its own signing
//! time) and where it is kept. One helper, under one lock, refreshes both
//! ([`run_all`]).

use std::fs::File;
use std::io;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use reqwest::Url;

use crate::catalog::embedded;
use crate::catalog::{self, Catalog, Target};
use crate::fetch::http::{self, Bearer, FetchError, FetchOptions, Fetched, Session};
use crate::fetch::source::Source;
use crate::fetch::watch::{Signal, Watch};
use crate::store::atomic;
use crate::store::cache::{self, CacheFiles, Cached};
use crate::store::digest::{self, hex};
use crate::store::file;
use crate::store::lock::Lock;
use crate::store::state::{self, CacheState, Held, RefreshOutcome, RefreshRecord};
use crate::store::validators::Validators;
use crate::trust::guard::{self, Baseline};
use crate::trust::hyper;
use crate::trust::memory;
use crate::trust::signature::{SignatureError, TrustedKeys};

/// The Hyper key the helper process was given ([`spawn_helper`]).
pub fn helper_hyper_key() -> Option<Bearer> {
    std::env::var(HYPER_KEY_ENV)
        .ok()
        .filter(|k| !k.is_empty())
        .map(Bearer)
}

/// Bound on establishing the connection.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a refresh, or the first fetch, waits for another writer of the
/// cache; past it the new catalog is used without being saved.
const LOCK_WAIT: Duration = Duration::from_secs(2);
/// The lock file that keeps refreshes of one folder apart.
const LOCK_FILE: &str = ".providers.refresh.lock";
/// The hidden subcommand that runs a refresh in a helper process.
pub const HELPER_COMMAND: &str = "refresh-in-background";
/// The flag that gives `update-providers` a signature: recorded as the
/// one a refresh held for its signature needs.
pub const SIGNATURE_FLAG: &str = "--signature";
/// The variable the helper takes the Hyper key from: the one Crush reads,
/// set in the helper's environment (never on its command line, which
/// every user of the machine can read).
const HYPER_KEY_ENV: &str = "HYPER_API_KEY";

/// What to refresh from, and how often.
#[derive(Debug, Clone)]
pub struct Request {
    /// The catalog URL.
    pub url: Url,
    /// Bound on the whole exchange.
    pub timeout: Duration,
    /// A cache confirmed less than this long ago needs no request.
    pub interval: Duration,
    /// The pinned keys: a new catalog must come signed by one of them.
    pub keys: Option<TrustedKeys>,
    /// Where its progress shows and what ends it early
    /// ([`FetchError::Interrupted`]), when a person waits for it
    /// (`--wait`); by default, neither.
    pub watch: Watch,
    /// Sent as `Authorization: Bearer`: the Hyper key, for Hyper's
    /// provider.
    pub bearer: Option<Bearer>,
}

/// One document to refresh: its cache (whose target says which
/// document), where from, and the SHA-256 of the one the caller holds.
#[derive(Debug, Clone, Copy)]
pub struct Job<'a> {
    /// The cache.
    pub files: &'a CacheFiles,
    /// Where from, and how.
    pub request: &'a Request,
    /// What the caller holds: the outcome is `Updated` when the cache ends
    /// up holding another document, whoever put it there.
    pub known: Option<[u8; 32]>,
}

/// How a refresh ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The cache is current; the catalog in hand is the one to use.
    Unchanged,
    /// A new catalog is in the cache: these bytes, validated.
    Updated(Vec<u8>),
    /// A new catalog, validated and reviewed, that could not be written to
    /// the cache (why, in one line): these bytes, for this run only.
    Unsaved(Vec<u8>, String),
    /// The refresh failed, for this reason (one line); the cache is kept.
    Failed(String),
    /// The new catalog needs a person (it moves a key, lost most of the
    /// cache, or is not signed as it must be): these findings, one line
    /// each; the cache is kept, and `crush update-providers` applies it.
    Held(Vec<String>),
    /// The watch's cancellation ended a refresh a person waited for, for
    /// this signal; nothing was written.
    Interrupted(Signal),
}

/// What one request brought, checked.
#[derive(Debug)]
pub enum Answer {
    /// `304 Not Modified`.
    NotModified,
    /// A valid catalog and the validators sent with it.
    Catalog {
        /// Its bytes.
        bytes: Vec<u8>,
        /// The server's validators.
        validators: Validators,
        /// When it was signed, when keys are pinned (then it was verified).
        signed_at: Option<u64>,
    },
}

/// Why a request brought no usable answer.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// The fetch failed.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// The body is not a valid catalog.
    #[error("not a valid catalog: {0}")]
    Invalid(#[from] catalog::ValidationError),
    /// The body is not a valid Hyper provider.
    #[error("not a valid Hyper provider: {0}")]
    InvalidHyper(catalog::ValidationError),
    /// A pinned key's signature is missing or wrong.
    #[error("refused: {0}")]
    Signature(#[from] SignatureError),
}

impl RequestError {
    /// The cause, and the one thing that fixes it where there is one: what
    /// start-up warnings and the state file's failure record say.
    /// `url` is the one asked.
    pub fn explain(&self, url: &str) -> String {
        match self {
            RequestError::Fetch(fetch) if !matches!(fetch, FetchError::Interrupted(_)) => {
                format!("{fetch}; {}", fetch.refresh_hint(url))
            }
            other => other.to_string(),
        }
    }
}

/// One request for `target`'s document at `url`, conditional on
/// `conditional`, within `timeout` (and [`CONNECT_TIMEOUT`] to connect),
/// carrying `bearer` when there is one; a 200's body must be a valid
/// document and, with `keys` pinned, come with a valid signature
/// (`URL.minisig`, fetched with the same bounds). `watch` is told of the
/// catalog's body and may end either ([`FetchError::Interrupted`]).
pub fn request(
    target: Target,
    url: &Url,
    timeout: Duration,
    conditional: Validators,
    keys: Option<&TrustedKeys>,
    watch: &Watch,
    bearer: Option<&Bearer>,
) -> Result<Answer, RequestError> {
    let options = FetchOptions {
        timeout,
        connect_timeout: CONNECT_TIMEOUT.min(timeout),
        conditional,
        max_body: http::MAX_BODY_BYTES,
        watch: watch.clone(),
        document: target,
        bearer: bearer.cloned(),
    };
    // One session: the signature comes on the catalog's connection.
    let session = Session::default();
    match session.fetch(url, &options)? {
        Fetched::NotModified => Ok(Answer::NotModified),
        Fetched::Body { bytes, validators } => {
            target.validate(&bytes).map_err(|e| match target {
                Target::Catalog => RequestError::Invalid(e),
                Target::Hyper => RequestError::InvalidHyper(e),
            })?;
            let signed_at = match keys {
                None => None,
                Some(keys) => {
                    let options = FetchOptions {
                        conditional: Validators::default(),
                        watch: watch.unreported(),
                        ..options
                    };
                    let source = Source::Url(url.clone());
                    let signature = source
                        .load_signature(None, &options, &session)
                        .map_err(SignatureError::from)?
                        .unwrap_or_default();
                    Some(keys.verify(&bytes, &signature, crate::store::state::now())?)
                }
            };
            Ok(Answer::Catalog {
                bytes,
                validators,
                signed_at,
            })
        }
    }
}

/// Whether a refresh that finds another one running waits for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IfBusy {
    /// Leave it to the other one (a helper process: nobody waits for it).
    Skip,
    /// Wait for it, then report what the cache holds (a host's thread).
    Wait,
}

/// Runs one refresh of the cache in `files` in this thread. `known` is the
/// SHA-256 of the catalog the caller holds: the outcome is `Updated` when
/// the cache ends up holding another one, whoever put it there.
pub fn run(
    files: &CacheFiles,
    request: &Request,
    known: Option<[u8; 32]>,
    if_busy: IfBusy,
) -> Outcome {
    let job = Job {
        files,
        request,
        known,
    };
    run_all(&[job], if_busy).pop().unwrap_or(Outcome::Unchanged)
}

/// Runs the refreshes of `jobs` (documents of one data folder: the
/// catalog, then Hyper's provider) one after the other in this thread,
/// under one refresh lock: an outcome for each, in their order.
pub fn run_all(jobs: &[Job<'_>], if_busy: IfBusy) -> Vec<Outcome> {
    let Some(first) = jobs.first() else {
        return Vec::new();
    };
    // Another refresh may have as many requests to make.
    let wait = jobs.iter().map(|j| j.request.timeout).sum::<Duration>() + LOCK_WAIT;
    // A folder where no lock can be made is one where no catalog can be
    // saved either: the refresh still brings one for this run.
    let lock = match lock_refreshes(&first.files.dir, if_busy, wait) {
        Ok(None) => return jobs.iter().map(|_| Outcome::Unchanged).collect(),
        Ok(Some(lock)) => Some(lock),
        // Recorded for the next start to tell, and told now to one that
        // waits.
        Err(LockError::NotRegular(why)) => {
            return jobs.iter().map(|job| unlocked(job, &why)).collect();
        }
        Err(LockError::Io) => None,
    };
    let outcomes = jobs
        .iter()
        .map(|job| refresh_locked(job.files, job.request, job.known))
        .collect();
    drop(lock);
    outcomes
}

/// Records that `job` could not take the refresh lock, for `why`.
fn unlocked(job: &Job<'_>, why: &str) -> Outcome {
    let cached = cache::read_valid(job.files).ok().flatten();
    keep(job.files, cached.as_ref(), |state| {
        state.record_refresh(RefreshRecord {
            at: state::now(),
            url: crate::fetch::source::redacted(job.request.url.as_str()),
            outcome: RefreshOutcome::Failed,
            cause: Some(why.to_owned()),
            told: false,
            held: None,
        })
    });
    Outcome::Failed(why.to_owned())
}

fn refresh_locked(files: &CacheFiles, request: &Request, known: Option<[u8; 32]>) -> Outcome {
    // No valid cache (none yet, or one that cannot be used): the first
    // catalog is reviewed against what is remembered and the floor alone.
    let cached = cache::read_valid(files).ok().flatten();
    let now = state::now();
    if let Some(cached) = &cached
        && is_confirmed(cached.state.as_ref(), request.interval, now)
    {
        // Another refresh confirmed the cache while this one waited.
        return settled(cached, known);
    }
    let record = |outcome, cause, held| RefreshRecord {
        at: now,
        url: crate::fetch::source::redacted(request.url.as_str()),
        outcome,
        cause,
        told: false,
        held,
    };
    // The cache stays; the state says what was held back, for every start
    // to tell.
    let hold = |held: Held| {
        // Held again, the catalog a person kept the cache over: settled,
        // and said no more (until the server serves another). Asked of
        // the state as it is under the lock: a person may have kept the
        // cache while this refresh was on its way.
        let mut kept = false;
        let findings = held.changes.clone();
        keep(files, cached.as_ref(), |state| {
            if held.sha256.as_deref().is_some_and(|d| state.kept_over(d)) {
                kept = true;
                state.confirmed_at = Some(now);
                if let Some(refresh) = &mut state.refresh {
                    refresh.at = now;
                }
            } else {
                state.record_refresh(record(RefreshOutcome::Held, None, Some(held)))
            }
        });
        match (kept, &cached) {
            (true, Some(cached)) => settled(cached, known),
            _ => Outcome::Held(findings),
        }
    };
    let answer = self::request(
        files.target,
        &request.url,
        request.timeout,
        cached.as_ref().map(Cached::validators).unwrap_or_default(),
        request.keys.as_ref(),
        &request.watch,
        request.bearer.as_ref(),
    );
    let validators = match answer {
        Ok(Answer::NotModified) => None,
        Ok(Answer::Catalog {
            bytes,
            validators,
            signed_at,
        }) => {
            let digest = digest::sha256(&bytes);
            // Else a server that ignores validators sent the same bytes.
            if cached.as_ref().is_none_or(|c| digest != c.sha256) {
                let fetched = NewCatalog {
                    bytes: &bytes,
                    digest: &digest,
                    validators,
                    signed_at,
                };
                // A host gets the new catalog even when it cannot be saved.
                return match take(files, &request.url, cached.as_ref(), fetched, now) {
                    Ok(None) => Outcome::Updated(bytes),
                    Ok(Some(why)) => Outcome::Unsaved(bytes, why),
                    Err(held) => hold(held),
                };
            }
            Some(validators)
        }
        Err(RequestError::Fetch(FetchError::Interrupted(code))) => {
            return Outcome::Interrupted(code);
        }
        // Not signed as it must be: not a failure of the network, but a
        // catalog that needs a person.
        Err(RequestError::Signature(e)) => {
            return hold(Held {
                changes: vec![format!("the new catalog was refused: {e}")],
                flags: vec![SIGNATURE_FLAG.to_string()],
                ..Held::default()
            });
        }
        Err(e) => {
            let cause = e.explain(request.url.as_str());
            keep(files, cached.as_ref(), |state| {
                state.record_refresh(record(RefreshOutcome::Failed, Some(cause.clone()), None))
            });
            return Outcome::Failed(cause);
        }
    };
    let Some(cached) = &cached else {
        // Not reachable: an unconditional request gets no 304 past
        // `fetch`, which refuses it.
        return Outcome::Failed("the server answered 304 Not Modified".into());
    };
    // Current. Should the confirmation not be saved, the next start asks
    // again; nothing else is lost.
    let _ = cache::update_state(files, cached, LOCK_WAIT, |state| {
        if let Some(validators) = validators {
            state.validators = validators;
        }
        state.confirmed_at = Some(now);
        state.record_refresh(record(RefreshOutcome::Unchanged, None, None));
    });
    settled(cached, known)
}

/// Reviews the new catalog `fetched` (valid: [`request`] checked it)
/// against the cache `cached` and what is remembered, and saves it when
/// nothing needs a person: `Ok(None)`, or why it could not be saved;
/// what it holds back, else (an error of the review is held too: where
/// keys went is not known, and nothing is applied).
fn take(
    files: &CacheFiles,
    url: &Url,
    cached: Option<&Cached>,
    fetched: NewCatalog<'_>,
    now: u64,
) -> Result<Option<String>, Held> {
    let held = |changes| Held {
        changes,
        sha256: Some(hex(fetched.digest)),
        ..Held::default()
    };
    let next = files
        .target
        .validate(fetched.bytes)
        .map_err(|e| held(vec![format!("the new catalog cannot be read again: {e}")]))?;
    // The cache to compare with: not the embedded snapshot standing in for
    // none.
    let previous = cached
        .filter(|c| !c.is_stand_in())
        .and_then(|c| files.target.validate(&c.bytes).ok());
    let review = review(files, cached, previous.as_ref(), &next, fetched.signed_at)
        .map_err(|why| held(vec![why]))?;
    if !review.is_clear() {
        return Err(Held {
            changes: review.findings(),
            flags: review.flags(),
            sha256: Some(hex(fetched.digest)),
            kept: false,
        });
    }
    match save(files, url, cached, fetched, now, &next, previous.as_ref()) {
        Ok(()) => Ok(None),
        Err(NotSaved::Held(held)) => Err(held),
        Err(NotSaved::Write(e)) => Ok(Some(e.to_string())),
    }
}

/// Why [`save`] wrote nothing.
#[derive(Debug)]
pub enum NotSaved {
    /// Reviewed again under the folder lock, against what is remembered
    /// now (another writer may have taught it since), it needs a person.
    Held(Held),
    /// It could not be written.
    Write(atomic::WriteError),
}

impl From<atomic::WriteError> for NotSaved {
    fn from(e: atomic::WriteError) -> Self {
        NotSaved::Write(e)
    }
}

/// The review of the new catalog `bytes` (valid, signed at `signed_at`
/// when keys are pinned) against what the data folder `files` remembers
/// of where keys went, the cache `cached` and the floor
/// ([`guard::review`]); why there is none, when what is remembered
/// cannot be read (or the catalog not placed): then the refresh holds.
/// Hyper's provider has no floor (the half to keep is its cached
/// provider's), and its newest signing time is its state's.
fn review(
    files: &CacheFiles,
    cached: Option<&Cached>,
    previous: Option<&Catalog<'_>>,
    next: &Catalog<'_>,
    signed_at: Option<u64>,
) -> Result<guard::Review, String> {
    let file = memory::read(files)?;
    let known = hyper::effective(files, file, previous)?;
    let floor = match (&known.floor, files.target) {
        (_, Target::Hyper) => guard::Floor::None,
        (Some(floor), Target::Catalog) => guard::Floor::Applied(&floor.providers, &floor.source),
        (None, Target::Catalog) => guard::Floor::Embedded,
    };
    let state_signed = cached
        .and_then(|c| c.state.as_ref())
        .and_then(|s| s.signed_at);
    let baseline = Baseline {
        previous,
        places: &known.places,
        floor,
        signed: match files.target {
            Target::Catalog => known.signed_at.max(state_signed),
            Target::Hyper => state_signed,
        },
    };
    guard::review(&baseline, next, signed_at)
}

/// Records what a refresh that changed nothing came to, in the state of
/// the cache `cached`. Without a cache file at all (the first start), the
/// embedded snapshot, which start-up uses meanwhile, becomes the cache, so
/// that the record has a home and the next start tells it; a file that is
/// there but not valid is left for a person. Hyper's provider has no
/// snapshot: its state file alone records it
/// ([`cache::update_absent_state`]).
fn keep(files: &CacheFiles, cached: Option<&Cached>, change: impl FnOnce(&mut CacheState)) {
    match cached {
        Some(cached) => {
            let _ = cache::update_state(files, cached, LOCK_WAIT, change);
        }
        None if files.target == Target::Hyper => {
            let _ = cache::update_absent_state(files, LOCK_WAIT, change);
        }
        None => {
            let bytes = embedded::catalog_bytes();
            let mut state = CacheState {
                sha256: hex(&digest::sha256(bytes)),
                source: Source::Embedded.to_string(),
                fetched_at: state::now(),
                ..CacheState::default()
            };
            change(&mut state);
            let _ = cache::install_if_absent(files, bytes, &state, LOCK_WAIT);
        }
    }
}

/// A new, valid catalog as fetched.
pub struct NewCatalog<'a> {
    /// Its bytes.
    pub bytes: &'a [u8],
    /// Their SHA-256.
    pub digest: &'a [u8; 32],
    /// The server's validators.
    pub validators: Validators,
    /// When it was signed, when keys are pinned.
    pub signed_at: Option<u64>,
}

/// Writes a catalog fetched from `url` (`next`, read, replacing the cache
/// `cached`, valid as `previous`) into the cache, as confirmed at `now`,
/// with the state a later start reads (its validators, its signing time,
/// and the refresh that brought it) and what the memory of where keys
/// went learns of it; unless, reviewed again once the folder is locked,
/// it needs a person.
pub fn save(
    files: &CacheFiles,
    url: &Url,
    cached: Option<&Cached>,
    fetched: NewCatalog<'_>,
    now: u64,
    next: &Catalog<'_>,
    previous: Option<&Catalog<'_>>,
) -> Result<(), NotSaved> {
    let signed_at = fetched.signed_at;
    let mut state = CacheState {
        sha256: hex(fetched.digest),
        validators: fetched.validators,
        source: crate::fetch::source::redacted(url.as_str()),
        fetched_at: now,
        confirmed_at: Some(now),
        signed_at,
        ..CacheState::default()
    };
    state.record_refresh(RefreshRecord {
        at: now,
        url: crate::fetch::source::redacted(url.as_str()),
        outcome: RefreshOutcome::Updated,
        cause: None,
        told: false,
        held: None,
    });
    let staged = cache::stage_cache(files, fetched.bytes, LOCK_WAIT)?;
    // Under the folder lock no other writer changes what is remembered:
    // reviewed against it as it is now (a person's update may have taught
    // it a place since the first review), which no refresh may add to.
    let held = |changes, flags| Held {
        changes,
        flags,
        sha256: Some(state.sha256.clone()),
        kept: false,
    };
    let review = review(files, cached, previous, next, signed_at)
        .map_err(|why| NotSaved::Held(held(vec![why], Vec::new())))?;
    if !review.is_clear() {
        return Err(NotSaved::Held(held(review.findings(), review.flags())));
    }
    // The places of the variables it sends for the first time, and its
    // signing time, before it is in place (under the folder lock).
    memory::record(
        files,
        || hyper::rebuilt(files, previous),
        |memory| {
            memory.learn(next)?;
            // Hyper's signing time is in its state alone.
            if let Some(signed_at) = signed_at.filter(|_| files.target == Target::Catalog) {
                memory.saw_signature(signed_at, false);
            }
            Ok(())
        },
    )?;
    Ok(staged.commit(&state)?)
}

/// The outcome for a caller holding `known`, now that the cache is
/// `cached`.
fn settled(cached: &Cached, known: Option<[u8; 32]>) -> Outcome {
    match known {
        Some(known) if known != cached.sha256 => Outcome::Updated(cached.bytes.clone()),
        _ => Outcome::Unchanged,
    }
}

/// Whether `state` says the cache was confirmed less than `interval` ago
/// (`now` and the record in seconds since the Unix epoch).
pub fn is_confirmed(state: Option<&CacheState>, interval: Duration, now: u64) -> bool {
    let Some(at) = state.and_then(|s| s.confirmed_at) else {
        return false;
    };
    // A time in the future (a clock set back) does not count as recent.
    at <= now && Duration::from_secs(now - at) < interval
}

/// Why the refresh lock could not be taken.
#[derive(Debug)]
enum LockError {
    /// Something else than a regular file stands where the lock is: told
    /// (in one line naming it), never waited on.
    NotRegular(String),
    /// No lock can be made there (nor, then, a catalog saved).
    Io,
}

impl From<io::Error> for LockError {
    fn from(_: io::Error) -> Self {
        LockError::Io
    }
}

/// The lock that keeps refreshes of one folder apart: a file beside the
/// cache, locked while a refresh runs. The kernel releases it when the
/// process ends, however it ends.
fn lock_refreshes(dir: &Path, if_busy: IfBusy, wait: Duration) -> Result<Option<Lock>, LockError> {
    let path = dir.join(LOCK_FILE);
    let not_regular = |meta: &std::fs::Metadata| {
        LockError::NotRegular(format!(
            "the refresh lock {} is {}, not a regular file; remove it",
            path.display(),
            file::kind(meta)
        ))
    };
    // Opening a FIFO to write waits for a reader: look first.
    if let Ok(meta) = std::fs::metadata(&path)
        && !meta.is_file()
    {
        return Err(not_regular(&meta));
    }
    let open = || {
        let mut options = File::options();
        options.create(true).truncate(false).write(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
        }
        options.open(&path)
    };
    let file = match open() {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir)?;
            open()?
        }
        Err(e) => return Err(e.into()),
    };
    // Made a FIFO since it was looked at: still never waited on.
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    let wait = match if_busy {
        IfBusy::Skip => Duration::ZERO,
        IfBusy::Wait => wait,
    };
    Ok(Lock::on(file, wait)?)
}

/// A refresh running on a thread of this process, for a long-lived host:
/// poll it, or wait for it, and swap the new catalog in when it brings one.
///
/// # Example
///
/// A host that starts at once with the cached catalog and takes the new one
/// while it runs (here a loopback server serves it):
///
/// ```
/// use std::time::Duration;
/// use crush_providers::store::cache::CacheFiles;
/// use crush_providers::startup::refresh::Outcome;
/// use crush_providers::startup::{self, Background, StartupOptions};
///
/// # fn serve_once(body: String) -> String {
/// #     use std::io::{BufRead, BufReader, Write};
/// #     let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
/// #     let url = format!("http://{}/v2/providers", listener.local_addr().unwrap());
/// #     std::thread::spawn(move || {
/// #         let (mut stream, _) = listener.accept().unwrap();
/// #         let mut reader = BufReader::new(stream.try_clone().unwrap());
/// #         let mut line = String::new();
/// #         while reader.read_line(&mut line).unwrap() > 2 { line.clear(); }
/// #         let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
/// #         stream.write_all(head.as_bytes()).unwrap();
/// #         stream.write_all(body.as_bytes()).unwrap();
/// #     });
/// #     url
/// # }
/// # // The cache: the embedded snapshot, written by another program; the
/// # // new catalog: the same, with a provider added.
/// # let old = std::str::from_utf8(crush_providers::catalog::embedded::catalog_bytes()).unwrap();
/// # let new_catalog = format!(
/// #     "{},{{\"id\":\"new\",\"name\":\"New\",\"models\":[{{\"id\":\"m\"}}]}}]",
/// #     &old[..old.rfind(']').unwrap()].trim_end()
/// # );
/// # let url = serve_once(new_catalog.clone());
/// # let dir = tempfile::tempdir().unwrap();
/// # std::fs::write(dir.path().join("providers.json"), old).unwrap();
/// let files = CacheFiles::in_dir(dir.path());
/// let options = StartupOptions {
///     auto_update: true,
///     default_providers: true,
///     url: url.parse().unwrap(),
///     timeout: startup::DEFAULT_TIMEOUT,
///     interval: startup::DEFAULT_INTERVAL,
///     background: Background::Thread,
///     wait: false,
///     watch: Default::default(),
///     keys: None,
///     hyper: None,
/// };
/// let mut loaded = startup::load(&files, &options);
/// // At once: the cache, never confirmed, so a refresh was started.
/// let mut catalog = loaded.bytes.to_vec();
/// assert!(!String::from_utf8_lossy(&catalog).contains("\"new\""));
///
/// // Later, in the host's loop: `poll` never blocks; here we wait.
/// if let Some(refresh) = &mut loaded.refresh {
///     match refresh.wait(Duration::from_secs(10)) {
///         Some(Outcome::Updated(new) | Outcome::Unsaved(new, _)) => catalog = new.clone(),
///         Some(Outcome::Unchanged | Outcome::Interrupted(_)) | None => {}
///         Some(Outcome::Failed(why)) => eprintln!("catalog refresh failed: {why}"),
///         // Moves a key, shrank, or is not signed as it must be: tell the
///         // user; `crush update-providers` (with the flag it names)
///         // applies it.
///         Some(Outcome::Held(changes)) => eprintln!("catalog refresh held: {changes:?}"),
///     }
/// }
/// assert_eq!(catalog, new_catalog.as_bytes());
/// ```
#[derive(Debug)]
pub struct Refresh {
    receiver: mpsc::Receiver<Outcome>,
    outcome: Option<Outcome>,
}

impl Refresh {
    /// Starts a refresh of the cache in `files` on a new thread; `known` is
    /// the SHA-256 of the catalog the host holds.
    pub fn start(files: CacheFiles, request: Request, known: Option<[u8; 32]>) -> Refresh {
        let (sender, receiver) = mpsc::sync_channel(1);
        let spawned = std::thread::Builder::new()
            .name("catalog-refresh".into())
            .spawn(move || {
                let _ = sender.send(run(&files, &request, known, IfBusy::Wait));
            });
        let outcome = spawned
            .err()
            .map(|e| Outcome::Failed(format!("cannot start the refresh thread: {e}")));
        Refresh { receiver, outcome }
    }

    /// The outcome, if the refresh has ended; never blocks.
    pub fn poll(&mut self) -> Option<&Outcome> {
        if self.outcome.is_none() {
            self.outcome = match self.receiver.try_recv() {
                Ok(outcome) => Some(outcome),
                Err(mpsc::TryRecvError::Empty) => None,
                Err(mpsc::TryRecvError::Disconnected) => Some(stopped()),
            };
        }
        self.outcome.as_ref()
    }

    /// The outcome, waiting at most `timeout` for the refresh to end.
    pub fn wait(&mut self, timeout: Duration) -> Option<&Outcome> {
        if self.outcome.is_none() {
            self.outcome = match self.receiver.recv_timeout(timeout) {
                Ok(outcome) => Some(outcome),
                Err(mpsc::RecvTimeoutError::Timeout) => None,
                Err(mpsc::RecvTimeoutError::Disconnected) => Some(stopped()),
            };
        }
        self.outcome.as_ref()
    }
}

fn stopped() -> Outcome {
    Outcome::Failed("the refresh thread stopped without an outcome".into())
}

/// Starts the refreshes of `jobs` (documents of one folder, with the same
/// bounds and keys: one start's) in a detached helper process, this very
/// program run with [`HELPER_COMMAND`], for a short-lived command: its
/// standard streams are on the null device (a reader of the command's
/// output sees the end of it when the command exits); it is in a process
/// group of its own, so that Ctrl-C in the terminal, which signals the
/// foreground group, does not reach it (on Windows: a new process group,
/// and no console window); and it always exits by itself within the
/// requests' bounds. Hyper's key goes in its environment, never on its
/// command line, which every user of the machine can read.
pub fn spawn_helper(exe: &Path, jobs: &[Job<'_>]) -> io::Result<()> {
    let Some(first) = jobs.first() else {
        return Ok(());
    };
    let request = first.request;
    let mut command = Command::new(exe);
    command
        .arg(HELPER_COMMAND)
        .arg("--cache-dir")
        .arg(&first.files.dir)
        .env_remove(HYPER_KEY_ENV);
    for job in jobs {
        let flag = match job.files.target {
            Target::Catalog => "--url",
            Target::Hyper => "--hyper-url",
        };
        command.arg(flag).arg(job.request.url.as_str());
        if let (Target::Hyper, Some(Bearer(key))) = (job.files.target, &job.request.bearer) {
            command.env(HYPER_KEY_ENV, key);
        }
    }
    command
        .arg("--timeout")
        .arg(request.timeout.as_secs_f64().to_string())
        .arg("--interval")
        .arg(request.interval.as_secs_f64().to_string())
        .args(
            request
                .keys
                .iter()
                .flat_map(TrustedKeys::entries)
                .flat_map(|key| ["--public-key", key.as_str()]),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    #[cfg(unix)]
    {
        // A safe call that the standard library still starts the fast way
        // (posix_spawn with its process-group attribute).
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    #[cfg(windows)]
    {
        use std::os::windows::process::CommandExt;
        const DETACHED_PROCESS: u32 = 0x0000_0008;
        const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
        const CREATE_NO_WINDOW: u32 = 0x0800_0000;
        command.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW);
    }
    // Not waited for: it outlives this process, and is nobody's child
    // once this process has exited.
    command.spawn().map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trust::memory::Memory;

    /// The review is made again once the folder is locked for the write:
    /// a person's update that taught the memory a variable's first place
    /// after this refresh first reviewed its catalog makes that catalog,
    /// which sends the variable elsewhere, held, and nothing is written.
    #[test]
    fn a_save_reviews_against_what_is_remembered_once_locked() {
        let tmp = tempfile::tempdir().unwrap();
        let files = CacheFiles::in_dir(tmp.path());
        let catalog = |endpoint: &str| {
            let real = std::str::from_utf8(embedded::catalog_bytes()).unwrap();
            let end = real.rfind(']').unwrap();
            format!(
                r#"{},{{"id":"fresh","name":"F","api_key":"$FRESH_API_KEY","api_endpoint":"{endpoint}"}}]"#,
                &real[..end]
            )
        };
        let taught = catalog("https://fresh.example");
        let taught = catalog::validate(taught.as_bytes()).unwrap();
        cache::locked(&files, LOCK_WAIT, || {
            memory::record(&files, || Memory::rebuilt(None), |m| m.learn(&taught))
        })
        .unwrap();
        let bytes = catalog("https://collector.evil.example");
        let next = catalog::validate(bytes.as_bytes()).unwrap();
        let digest = digest::sha256(bytes.as_bytes());
        let fetched = NewCatalog {
            bytes: bytes.as_bytes(),
            digest: &digest,
            validators: Validators::default(),
            signed_at: None,
        };
        let url = Url::parse("https://mirror.example/v2/providers").unwrap();
        let Err(NotSaved::Held(held)) = save(&files, &url, None, fetched, 1, &next, None) else {
            panic!("saved")
        };
        assert_eq!(
            held.changes,
            [
                "provider \"fresh\" would send $FRESH_API_KEY to https://collector.evil.example:443, where it was never sent before (only to https://fresh.example:443)"
            ]
        );
        assert_eq!(held.flags, ["--allow-key-move"]);
        assert!(!files.catalog.exists());
    }
}
