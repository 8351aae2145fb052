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

mod decide;
mod handle;
mod helper;
mod lock;
mod request;
mod save;

use std::time::Duration;

use reqwest::Url;

use self::decide::{OnHold, Step};
pub use self::handle::Refresh;
pub(crate) use self::helper::{HELPER_COMMAND, HelperArgs, spawn_helper};
use self::lock::{LockError, lock_refreshes};
pub(crate) use self::request::request;
pub(crate) use self::save::Seen;
use self::save::{Taken, keep};
use crate::fetch::http::Bearer;
use crate::fetch::source::redacted;
use crate::fetch::watch::{Signal, Watch};
use crate::store::cache::{self, CacheFiles, Cached};
use crate::store::state::{self, CacheState, Held, RefreshOutcome, RefreshRecord};
use crate::store::validators::Validators;
use crate::trust::foreign;
use crate::trust::signature::TrustedKeys;

/// How long a refresh, or the first fetch, waits for another writer of the
/// cache; past it the new catalog is used without being saved.
const LOCK_WAIT: Duration = Duration::from_secs(2);

/// What to refresh from, and how often.
#[derive(Debug, Clone)]
pub(crate) struct Request {
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
pub(crate) struct Job<'a> {
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

/// Whether a refresh that finds another one running waits for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IfBusy {
    /// Leave it to the other one (a helper process: nobody waits for it).
    Skip,
    /// Wait for it, then report what the cache holds (a host's thread).
    Wait,
}

/// Runs one refresh of the cache in `files` in this thread. `known` is the
/// SHA-256 of the catalog the caller holds: the outcome is `Updated` when
/// the cache ends up holding another one, whoever put it there.
pub(crate) fn run(
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
pub(crate) fn run_all(jobs: &[Job<'_>], if_busy: IfBusy) -> Vec<Outcome> {
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
        .map(|job| match reviewed_first(job) {
            Ok(()) => refresh_locked(job.files, job.request, job.known),
            Err(failed) => failed,
        })
        .collect();
    drop(lock);
    outcomes
}

/// Settles a document another program wrote into `job`'s cache
/// ([`foreign::settle`]) before anything sends its ETag or records a 304
/// as its confirmation. A review that cannot be made holds: no request goes
/// out, and nothing is recorded of bytes nobody reviewed.
fn reviewed_first(job: &Job<'_>) -> Result<(), Outcome> {
    match foreign::settle(job.files, job.request.keys.is_some(), LOCK_WAIT) {
        Ok(foreign::Settled::Busy { .. }) => Err(Outcome::Failed(foreign::unreviewed(job.files))),
        Ok(_) => Ok(()),
        Err(e) => Err(Outcome::Failed(e.to_string())),
    }
}

/// Records that `job` could not take the refresh lock, for `why`.
fn unlocked(job: &Job<'_>, why: &str) -> Outcome {
    if let Err(failed) = reviewed_first(job) {
        return failed;
    }
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

/// One refresh of `files` from `request`, under the refresh lock: the
/// request, then what [`decide::decide`] says of its answer, carried out.
fn refresh_locked(files: &CacheFiles, request: &Request, known: Option<[u8; 32]>) -> Outcome {
    // What the cache is, before it is read: the answer is swapped in only
    // over that file.
    let seen = Seen::now(files);
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
    // Without a cache, an unconditional request.
    let conditional = match &cached {
        Some(cached) => cached.validators(),
        None => Validators::default(),
    };
    // A new document's body, which the catalog read from it borrows until
    // the host gets it.
    let mut body = Vec::new();
    let answer = self::request(files.target, request, conditional, &mut body);
    let done = Done {
        files,
        url: &request.url,
        cached: cached.as_ref(),
        known,
        now,
    };
    match decide::decide(answer, cached.as_ref().map(|c| &c.sha256), &request.url) {
        Step::Confirm(validators) => done.confirm(validators),
        Step::NoCache => Outcome::Failed("the server answered 304 Not Modified".into()),
        Step::Take(fetched) => {
            // A host gets the new catalog even when it cannot be saved.
            match save::take(files, &request.url, done.cached, &seen, fetched, now) {
                Taken::Saved => Outcome::Updated(body),
                Taken::Unsaved(why) => Outcome::Unsaved(body, why),
                Taken::Held(held) => done.hold(held),
                Taken::Overtaken => done.overtaken(),
            }
        }
        Step::Hold(held) => done.hold(held),
        Step::Fail(cause) => {
            keep(files, done.cached, |state| {
                state.record_refresh(done.record(RefreshOutcome::Failed, Some(cause.clone()), None))
            });
            Outcome::Failed(cause)
        }
        Step::Interrupted(code) => Outcome::Interrupted(code),
    }
}

/// What a refresh carries out once it has its answer.
struct Done<'r> {
    files: &'r CacheFiles,
    url: &'r Url,
    cached: Option<&'r Cached>,
    known: Option<[u8; 32]>,
    now: u64,
}

impl Done<'_> {
    /// The state's record of this refresh.
    fn record(
        &self,
        outcome: RefreshOutcome,
        cause: Option<String>,
        held: Option<Held>,
    ) -> RefreshRecord {
        RefreshRecord {
            at: self.now,
            url: redacted(self.url.as_str()),
            outcome,
            cause,
            told: false,
            held,
        }
    }

    /// The cache is current. Should the confirmation not be saved, the
    /// next start asks again; nothing else is lost.
    fn confirm(&self, validators: Option<Validators>) -> Outcome {
        let Some(cached) = self.cached else {
            return Outcome::Failed("the server answered 304 Not Modified".into());
        };
        let _ = cache::update_state(self.files, cached, LOCK_WAIT, |state| {
            if let Some(validators) = validators {
                state.validators = validators;
            }
            state.confirmed_at = Some(self.now);
            state.record_refresh(self.record(RefreshOutcome::Unchanged, None, None));
        });
        settled(cached, self.known)
    }

    /// The cache stays; the state says what was held back, for every start
    /// to tell, unless a person kept the cache over that very document.
    /// Asked of the state as it is under the lock: a person may have kept
    /// the cache while this refresh was on its way.
    fn hold(&self, held: Held) -> Outcome {
        let mut kept = false;
        let findings = held.changes.clone();
        keep(self.files, self.cached, |state| {
            match decide::on_hold(held, Some(&*state)) {
                OnHold::Quiet => {
                    kept = true;
                    state.confirmed_at = Some(self.now);
                    if let Some(refresh) = &mut state.refresh {
                        refresh.at = self.now;
                    }
                }
                OnHold::Record(held) => {
                    state.record_refresh(self.record(RefreshOutcome::Held, None, Some(held)))
                }
            }
        });
        match (kept, self.cached) {
            (true, Some(cached)) => settled(cached, self.known),
            _ => Outcome::Held(findings),
        }
    }

    /// Another writer replaced the cache while this refresh fetched: its
    /// answer is dropped, and the caller told what the cache holds now.
    fn overtaken(&self) -> Outcome {
        match cache::read_valid(self.files) {
            Ok(Some(now)) => settled(&now, self.known),
            _ => Outcome::Unchanged,
        }
    }
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
pub(crate) fn is_confirmed(state: Option<&CacheState>, interval: Duration, now: u64) -> bool {
    let Some(at) = state.and_then(|s| s.confirmed_at) else {
        return false;
    };
    // A time in the future (a clock set back) does not count as recent.
    at <= now && Duration::from_secs(now - at) < interval
}
