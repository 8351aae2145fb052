//! The automatic refresh of the cache: one conditional request, and its
//! answer applied as `update-providers` applies a document
//! ([`crate::update::apply`]: the same staging, review and commit), except
//! that what needs a person (a key sent to a place it never reached, most
//! of the cache or of the floor lost, a signature missing or older than
//! the newest seen) is held: the cache stays, and the state file records
//! what was held back for every start to tell. Its outcome is recorded in
//! the state file.
//!
//! Start-up runs it off the user's path ([`crate::startup`]): on a thread
//! for a long-lived host, which gets a [`Refresh`] handle to the outcome,
//! or in a detached helper process for a short-lived command. At most one
//! refresh runs per data folder, under a lock of its own (released by the
//! kernel if the process dies): a refresh that finds another running
//! leaves it to it, or, waited for, joins it and tells what it came to,
//! within its own bound. One lock and one helper refresh both documents,
//! the catalog and Hyper's provider (`hyper.json`, whose target says how
//! it is read and reviewed).

mod handle;
mod helper;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use reqwest::Url;

pub use self::handle::Refresh;
pub(crate) use self::helper::{HELPER_COMMAND, HelperArgs, spawn_helper};
use crate::catalog::{Diff, Target, embedded};
use crate::error::Cause;
use crate::fetch::diagnosis::seconds;
use crate::fetch::http::{Bearer, FetchError, FetchOptions};
use crate::fetch::proxy::variable_for;
use crate::fetch::source::{ReadError, Source, redacted};
use crate::fetch::watch::{Signal, Watch};
use crate::store::cache::{self, Bytes, CacheFiles, Cached, Seen};
use crate::store::digest::{self, hex};
use crate::store::file::{self, FileError};
use crate::store::lock::Lock;
use crate::store::state::{self, CacheState, Held, Need, RefreshOutcome, RefreshRecord};
use crate::store::validators::Validators;
use crate::trust::signature::TrustedKeys;
use crate::trust::{foreign, policy};
use crate::update::apply::{Action, By, Change, NotApplied};
use crate::update::load;

/// How long a refresh, or the first fetch, waits for another writer of the
/// cache; past it the new catalog is used without being saved.
const LOCK_WAIT: Duration = Duration::from_secs(2);
/// Bound on establishing a refresh's connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// The lock file that keeps refreshes of one folder apart.
const LOCK_FILE: &str = ".providers.refresh.lock";

/// One document to refresh: its cache (whose target says which
/// document), where from and how, and the SHA-256 of the one the caller
/// holds.
#[derive(Debug, Clone)]
pub(crate) struct Job {
    /// The cache.
    pub files: CacheFiles,
    /// The document's URL.
    pub url: Url,
    /// Sent as `Authorization: Bearer`: the Hyper key, for Hyper's
    /// provider.
    pub bearer: Option<Bearer>,
    /// What the caller holds: the outcome is `Updated` when the cache ends
    /// up holding another document, whoever put it there.
    pub known: Option<[u8; 32]>,
    /// Bound on the whole exchange.
    pub timeout: Duration,
    /// A cache confirmed less than this long ago needs no request.
    pub interval: Duration,
    /// The pinned keys: a new document must come signed by one of them.
    pub keys: Option<TrustedKeys>,
    /// Where its progress shows and what ends it early
    /// ([`FetchError::Interrupted`]), when a person waits for it
    /// (`--wait`); by default, neither.
    pub watch: Watch,
}

/// How a refresh ended. Its causes are the words the state file records
/// (and a refresh that joins another reads back).
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
    /// cache, or is not signed as it must be): its findings, one line
    /// each, and what a person must allow; the cache is kept, and `crush
    /// update-providers` applies it.
    Held(Held),
    /// The watch's cancellation ended a refresh a person waited for, for
    /// this signal; nothing was written.
    Interrupted(Signal),
}

/// What a refresh that finds another one running does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IfBusy {
    /// Leave it to the other one (a helper process: nobody waits for it).
    Skip,
    /// Join it, within this refresh's own bound, and tell what it came to
    /// (a person, or a host's thread, waits): never a request of its own
    /// after it.
    Wait,
}

/// Runs the refreshes of `jobs` (documents of one data folder: the
/// catalog, then Hyper's provider) one after the other in this thread,
/// under one refresh lock: an outcome for each, in their order.
pub(crate) fn run(jobs: &[Job], if_busy: IfBusy) -> Vec<Outcome> {
    let Some(first) = jobs.first() else {
        return Vec::new();
    };
    // What each state recorded before: a refresh this one joins records
    // its own outcome over it.
    let before = |job: &Job| (if_busy == IfBusy::Wait).then(|| last_refresh(&job.files));
    let before: Vec<_> = jobs.iter().map(before).collect();
    // Joined, no longer than this refresh would take: its requests, and
    // the wait for the folder lock to save what they bring.
    let bound = match if_busy {
        IfBusy::Skip => Duration::ZERO,
        IfBusy::Wait => jobs.iter().map(|job| job.timeout).sum::<Duration>() + LOCK_WAIT,
    };
    let started = Instant::now();
    // A folder where no lock can be made is one where no catalog can be
    // saved either: the refresh still brings one for this run.
    let (lock, joined) = match lock_refreshes(&first.files.dir, bound) {
        Ok((None, true)) if if_busy == IfBusy::Skip => {
            return jobs.iter().map(|_| Outcome::Unchanged).collect();
        }
        Ok(taken) => taken,
        // Recorded for the next start to tell, and told now to one that
        // waits.
        Err(e @ LockError::NotRegular { .. }) => {
            let why = e.to_string();
            return jobs
                .iter()
                .map(|job| refresh_one(job, Some(&why)))
                .collect();
        }
        Err(LockError::Io(_)) => (None, false),
    };
    let outcomes = (jobs.iter().zip(before))
        .map(|(job, before)| {
            let recorded = joined.then(|| last_refresh(&job.files));
            let recorded = recorded.filter(|now| Some(now) != before.as_ref()).flatten();
            // A refresh joined that recorded nothing (it found nothing to
            // do, or could not write) leaves this one what remains of the
            // bound.
            let left = bound.saturating_sub(started.elapsed());
            match recorded {
                // What the refresh this one joined recorded.
                Some(record) if joined => match (record.outcome, record.held) {
                    (_, Some(held)) if !held.kept => Outcome::Held(held),
                    (RefreshOutcome::Failed, _) => Outcome::Failed(record.cause.unwrap_or_default()),
                    _ => {
                        let now = cache::read(&job.files, Bytes::Read).vouched();
                        settled(now.as_ref(), job.known)
                    }
                },
                None if joined && (lock.is_none() || left.is_zero()) => Outcome::Failed(format!(
                    "another refresh of {} did not end within {} s; the next start tells how it ended",
                    job.files.dir.display(),
                    bound.as_secs_f64()
                )),
                _ => {
                    let timeout = job.timeout.min(if joined { left } else { Duration::MAX });
                    refresh_one(&Job { timeout, ..job.clone() }, None)
                }
            }
        })
        .collect();
    drop(lock);
    outcomes
}

/// The last refresh the state of `files`' document records, whether told
/// or not.
fn last_refresh(files: &CacheFiles) -> Option<RefreshRecord> {
    let found = cache::read(files, Bytes::Peek);
    let refresh = found.state()?.refresh.clone()?;
    Some(RefreshRecord {
        told: false,
        ..refresh
    })
}

/// One refresh of `job`, under the refresh lock unless `unlocked` says
/// why none could be taken (then that is its failure, recorded). A
/// document another program wrote into the cache is settled first
/// ([`foreign::settle`]), before anything sends its ETag or records a 304
/// as its confirmation: a review that cannot be made holds, no request
/// goes out, and nothing is recorded of bytes nobody reviewed. Then the
/// request, and its answer carried out.
fn refresh_one(job: &Job, unlocked: Option<&str>) -> Outcome {
    let files = &job.files;
    match foreign::settle(files, job.keys.is_some(), LOCK_WAIT) {
        Ok(foreign::Settled::Busy { .. }) => return Outcome::Failed(foreign::unreviewed(files)),
        Err(e) => return Outcome::Failed(e.to_string()),
        Ok(_) => {}
    }
    // What the cache is, before it is read: the answer is written only
    // over that file.
    let seen = Seen::now(files);
    // No cache this program wrote (none yet, or one that cannot be used):
    // the first document is reviewed against what is remembered and the
    // floor alone.
    let cached = cache::read(files, Bytes::Read).vouched();
    let (cached, now) = (cached.as_ref(), state::now());
    let done = Done { job, cached, now };
    if let Some(why) = unlocked {
        return done.fail(why.to_owned());
    }
    if let Some(cached) = cached
        && is_confirmed(cached.state.as_ref(), job.interval, now)
    {
        // Another refresh confirmed the cache while this one waited.
        return settled(Some(cached), job.known);
    }
    // Without a cache, an unconditional request.
    let fetch = FetchOptions {
        timeout: job.timeout,
        connect_timeout: CONNECT_TIMEOUT.min(job.timeout),
        conditional: cached.map(Cached::validators).unwrap_or_default(),
        watch: job.watch.clone(),
        document: files.target,
        bearer: job.bearer.clone(),
        ..FetchOptions::default()
    };
    let source = Source::Url(job.url.clone());
    let (loaded, _, signed_at) = match load(&source, &fetch, job.keys.as_ref(), None) {
        Ok(Some(brought)) => brought,
        Ok(None) => return done.confirm(None),
        Err(Cause::Read(ReadError::Fetch(FetchError::Interrupted(code)))) => {
            return Outcome::Interrupted(code);
        }
        // Held until a person gives a signature by hand.
        Err(Cause::Signature(e)) => {
            let why = format!("the new catalog was refused: {e}");
            let needs = vec![Need::Signature];
            return done.hold(Held {
                needs,
                ..policy::held_for(why, None)
            });
        }
        Err(e) => return done.fail(explain(&e, &job.url)),
    };
    let (body, validators) = (loaded.bytes.into_owned(), loaded.validators);
    let sha256 = digest::sha256(&body);
    // A server that ignores validators sent the same bytes.
    if cached.is_some_and(|c| c.sha256 == sha256) {
        return done.confirm(Some(validators));
    }
    let next = match files.target.validate(&body) {
        Ok(next) => next,
        Err(e) => return done.fail(Cause::invalid(files.target, e).chain().join(": ")),
    };
    let previous = cached
        .filter(|c| !c.is_stand_in())
        .and_then(|c| next.previous(files.target, &body, &Diff::of(&body, &c.bytes)));
    let mut state = CacheState {
        sha256: hex(&sha256),
        validators,
        source: redacted(job.url.as_str()),
        fetched_at: now,
        confirmed_at: Some(now),
        signed_at,
        ..CacheState::default()
    };
    state.record_refresh(done.record(RefreshOutcome::Updated, None, None));
    let change = Change {
        files,
        bytes: &body,
        next: &next,
        state,
        embedded: false,
        cached,
        previous: previous.as_ref(),
        by: By::Refresh(seen),
    };
    // A host gets the new catalog even when it cannot be saved.
    match change.apply(Action::Write) {
        Ok(_) => Outcome::Updated(body),
        Err(NotApplied::Held(held)) => done.hold(held),
        Err(NotApplied::Write(e)) => Outcome::Unsaved(body, e.to_string()),
        Err(NotApplied::Refused(cause)) => done.fail(cause.chain().join(": ")),
        // Another writer replaced the cache while this refresh fetched:
        // its answer is dropped, and the caller told what the cache holds.
        Err(NotApplied::Overtaken) => {
            let now = cache::read(files, Bytes::Read).vouched();
            settled(now.as_ref(), job.known)
        }
    }
}

/// A refresh of one document, recording what came of it.
struct Done<'r> {
    job: &'r Job,
    /// The cache as read.
    cached: Option<&'r Cached>,
    now: u64,
}

impl<'r> Done<'r> {
    /// The state's record of this refresh.
    fn record(
        &self,
        outcome: RefreshOutcome,
        cause: Option<String>,
        held: Option<Held>,
    ) -> RefreshRecord {
        RefreshRecord {
            at: self.now,
            url: redacted(self.job.url.as_str()),
            outcome,
            cause,
            told: false,
            held,
        }
    }

    /// Records what a refresh that wrote no document came to, in the
    /// state of the cache as read. Without a catalog at all (the first
    /// start), the embedded snapshot, which start-up uses meanwhile,
    /// becomes the cache, so that the record has a home and the next start
    /// tells it; a file that is there but cannot be used is left for a
    /// person. Hyper's provider has no snapshot: the state records it for
    /// none. Best effort: should it not be saved, the next start asks
    /// again.
    fn keep(&self, change: impl FnOnce(&mut CacheState)) {
        let files = &self.job.files;
        if self.cached.is_some() || files.target == Target::Hyper {
            let _ = cache::update_state(files, self.cached, LOCK_WAIT, change);
            return;
        }
        let bytes = embedded::catalog_bytes();
        let mut state = CacheState {
            sha256: hex(&digest::sha256(bytes)),
            source: Source::Embedded.to_string(),
            fetched_at: self.now,
            ..CacheState::default()
        };
        change(&mut state);
        // Decided under the folder lock: no writer's catalog is replaced.
        if let Ok(locked) = cache::lock(files, Some(bytes), LOCK_WAIT)
            && !files.catalog.exists()
        {
            let _ = locked.commit(state);
        }
    }

    /// The refresh failed, for `cause` (with its fix): recorded.
    fn fail(&self, cause: String) -> Outcome {
        self.keep(|state| {
            state.record_refresh(self.record(RefreshOutcome::Failed, Some(cause.clone()), None))
        });
        Outcome::Failed(cause)
    }

    /// The cache is current: confirmed, with the validators a server sent
    /// with the same bytes again (a 304 brings none).
    fn confirm(&self, validators: Option<Validators>) -> Outcome {
        let Some(cached) = self.cached else {
            return self.fail("the server answered 304 Not Modified".into());
        };
        self.keep(|state| {
            if let Some(validators) = validators {
                state.validators = validators;
            }
            state.confirmed_at = Some(self.now);
            state.record_refresh(self.record(RefreshOutcome::Unchanged, None, None));
        });
        settled(Some(cached), self.job.known)
    }

    /// The cache stays; the state says what was held back, for every start
    /// to tell, unless a person kept the cache over that very document
    /// (asked of the state under the lock: they may have while this
    /// refresh was on its way): then it is confirmed, and said no more
    /// until the server serves another.
    fn hold(&self, held: Held) -> Outcome {
        let mut kept = false;
        let outcome = held.clone();
        self.keep(|state| {
            if held.sha256.as_deref().is_some_and(|d| state.kept_over(d)) {
                kept = true;
                state.confirmed_at = Some(self.now);
                if let Some(refresh) = &mut state.refresh {
                    refresh.at = self.now;
                }
            } else {
                state.record_refresh(self.record(RefreshOutcome::Held, None, Some(held)));
            }
        });
        match (kept, self.cached) {
            (true, Some(cached)) => settled(Some(cached), self.job.known),
            _ => Outcome::Held(outcome),
        }
    }
}

/// The outcome for a caller holding `known`, now that the cache is
/// `cached`.
fn settled(cached: Option<&Cached>, known: Option<[u8; 32]>) -> Outcome {
    match (cached, known) {
        (Some(cached), Some(known)) if known != cached.sha256 => {
            Outcome::Updated(cached.bytes.clone())
        }
        _ => Outcome::Unchanged,
    }
}

/// The cause of a refresh's failure, and the one thing that fixes it
/// where there is one: what start-up warnings and the state file's failure
/// record say. A request fails with the same [`Cause`] as an update of the
/// same source. `url` is the one asked.
fn explain(cause: &Cause, url: &Url) -> String {
    match cause {
        // The bound of a refresh is `CRUSH_PROVIDER_TIMEOUT`, the only one
        // a start-up takes.
        Cause::Read(ReadError::Fetch(FetchError::Timeout(timeout))) => format!(
            "{timeout}; raise the bound above {} with CRUSH_PROVIDER_TIMEOUT (seconds), or check the network and the proxy ({})",
            seconds(timeout.after()),
            variable_for(url)
        ),
        Cause::Read(ReadError::Fetch(fetch)) => format!("{fetch}; {}", fetch.hint(url)),
        other => other.chain().join(": "),
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

/// Why the refresh lock could not be taken.
#[derive(Debug, thiserror::Error)]
enum LockError {
    /// Something else than a regular file stands where the lock is: told,
    /// never waited on.
    #[error("the refresh lock {} is {kind}, not a regular file; remove it", path.display())]
    NotRegular {
        /// The lock file.
        path: PathBuf,
        /// What stands there.
        kind: &'static str,
    },
    /// No lock can be made there (nor, then, a catalog saved).
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// The lock that keeps refreshes of the folder `dir` apart (a file beside
/// the cache), and whether another refresh held it: then waited for at
/// most `bound`, and `None` when it holds it still.
fn lock_refreshes(dir: &Path, bound: Duration) -> Result<(Option<Lock>, bool), LockError> {
    match Lock::on(open_lock(dir)?, Duration::ZERO)? {
        Some(lock) => Ok((Some(lock), false)),
        None => Ok((Lock::on(open_lock(dir)?, bound)?, true)),
    }
}

fn open_lock(dir: &Path) -> Result<File, LockError> {
    let path = dir.join(LOCK_FILE);
    // Made when missing, never opened for writing: what stands there may
    // be a FIFO, whose opening would wait for a reader. Only a regular
    // file is then opened (without blocking), and locked.
    let make = || File::options().write(true).create_new(true).open(&path);
    if let Err(e) = make()
        && e.kind() == std::io::ErrorKind::NotFound
    {
        std::fs::create_dir_all(dir)?;
        let _ = make();
    }
    match file::open_regular(&path) {
        Ok(Some((file, _))) => Ok(file),
        Err(FileError::NotRegular(kind)) => Err(LockError::NotRegular { path, kind }),
        Ok(None) => Err(LockError::Io(std::io::ErrorKind::NotFound.into())),
        Err(e) => Err(LockError::Io(std::io::Error::other(e))),
    }
}
