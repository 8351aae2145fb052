//! `update-providers`: read a source, validate it, and swap it into the cache
//! (or an output file), reporting what changed.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde::Serialize;

use crate::catalog::changes::{self, Changes};
use crate::catalog::summary::Summary;
use crate::catalog::{self, hex};
use crate::error::{Cause, Failure};
use crate::fetch::http::FetchOptions;
use crate::fetch::source::{self, Loaded, Source};
use crate::store::cache::{self, CacheFiles};
use crate::store::state::{self, CacheState};
use crate::trust::guard;
use crate::trust::signature::{SignatureError, TrustedKeys};

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
    /// Show a download progress bar when stderr is a terminal.
    pub progress: bool,
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
}

impl Default for UpdateOptions {
    fn default() -> Self {
        UpdateOptions {
            dry_run: false,
            output: None,
            sha256: None,
            timeout: Duration::from_secs(60),
            progress: false,
            keys: None,
            signature: None,
            allow_shrink: false,
            allow_downgrade: false,
        }
    }
}

/// What an update did.
#[derive(Debug, Clone, Serialize)]
pub struct UpdateReport {
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
    /// Lowercase hex SHA-256 of the catalog bytes.
    pub sha256: String,
    /// When the catalog was signed (seconds since the Unix epoch), when a
    /// key is pinned.
    pub signed_at: Option<u64>,
    /// Changes against the previous file; `None` when there was none (or it
    /// was not a valid catalog).
    pub changes: Option<Changes>,
    /// Problems worth telling that did not stop the update.
    pub warnings: Vec<String>,
}

/// How long an update waits for another writer of the cache to finish.
const LOCK_WAIT: Duration = Duration::from_secs(30);

/// A staged write: the output file, or the cache with its lock.
enum Staging {
    File(cache::Staged),
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

/// Runs `update-providers`: `source` into `cache` (or `options.output`).
/// On failure nothing was written.
pub fn update_providers(
    source: &Source,
    cache: &CacheFiles,
    options: &UpdateOptions,
) -> Result<UpdateReport, Failure> {
    let label = source.to_string();
    let fail = |cause: Cause| Failure {
        source: label.clone(),
        cause,
    };
    let mut warnings: Vec<String> = plain_http_warning(source).into_iter().collect();
    let target = options
        .output
        .clone()
        .unwrap_or_else(|| cache.catalog.clone());
    let fetch = FetchOptions {
        timeout: options.timeout,
        progress: options.progress,
        ..FetchOptions::default()
    };
    // Two jobs need not wait for each other and can go to a second thread:
    // summarising the previous file (nothing else needs it), and hashing
    // the new bytes. Each is done once, by whichever thread claims it
    // first; this thread does the rest. It reads the source, writes it
    // beside the target (its write-back then goes on in the device), and
    // validates it. The new file only becomes visible (one rename) once it
    // has passed; a refused catalog drops its staged file unseen.
    let jobs = Arc::new(Jobs::default());
    let (send_bytes, bytes_sent) = std::sync::mpsc::sync_channel::<Arc<Loaded>>(1);
    start_helper(&jobs, target.clone(), bytes_sent);
    let loaded = Arc::new(source.load(&fetch).map_err(|e| fail(e.into()))?);
    let _ = send_bytes.send(Arc::clone(&loaded));
    let bytes: &[u8] = &loaded.bytes;
    let digest = || hex(jobs.digest.take(|| catalog::sha256(bytes)));
    // Before anything is written: a pinned key's signature.
    let signed_at = match &options.keys {
        Some(keys) => verify(source, bytes, keys, options, cache, &fetch).map_err(fail)?,
        None => None,
    };
    let staged = (!options.dry_run).then(|| match &options.output {
        Some(path) => cache::stage(path, bytes, true).map(Staging::File),
        None => cache::stage_cache(cache, bytes, LOCK_WAIT).map(Staging::Cache),
    });
    let next = catalog::validate(bytes);
    if let Some(expected) = &options.sha256 {
        let actual = digest();
        if !expected.eq_ignore_ascii_case(&actual) {
            return Err(fail(Cause::Digest {
                expected: expected.to_ascii_lowercase(),
                actual,
            }));
        }
    }
    let mut next = next.map_err(|e| fail(e.into()))?;
    // One that does not hold a catalog has nothing to compare with, and is
    // replaced all the same.
    let previous = jobs.summary.take(|| Summary::read(&target));
    let changes = previous.as_ref().map(|p| changes::compare(p, &next));
    // A person may apply a shrunken catalog, but must say so; the embedded
    // snapshot is always a whole catalog.
    if let Some(shrink) = previous.as_ref().and_then(|p| guard::shrink(p, &next))
        && !options.allow_shrink
        && *source != Source::Embedded
    {
        return Err(fail(Cause::Shrink(shrink)));
    }
    // New providers that send an existing key somewhere new (moves of
    // existing providers are among the changes' security changes).
    let new_key_moves = previous
        .as_ref()
        .map(|p| {
            let mut moves = guard::key_moves(p, &next);
            moves.retain(|m| !p.providers.iter().any(|old| old.id == m.provider));
            moves
        })
        .unwrap_or_default();
    let (providers, models) = (next.providers.len(), next.model_count());
    warnings.append(&mut next.warnings);
    drop(next);
    for change in changes.iter().flat_map(|c| &c.security) {
        warnings.push(change.describe());
    }
    for moved in new_key_moves {
        warnings.push(format!(
            "new {moved}: requests carrying your API key will go to a new place"
        ));
    }
    // Unless it was checked, the digest is only recorded: it is taken once
    // the new file is in place, so that hashing on the other thread goes on
    // while this one waits for the disk.
    match staged.transpose().map_err(|e| fail(e.into()))? {
        None => {}
        Some(Staging::File(staged)) => staged.commit().map_err(|e| fail(e.into()))?,
        Some(Staging::Cache(staged)) => staged
            .commit_then_record(|| CacheState {
                sha256: digest(),
                validators: loaded.validators.clone(),
                source: label.clone(),
                fetched_at: state::now(),
                // A person asked for these bytes: they are current.
                confirmed_at: Some(state::now()),
                signed_at,
                ..CacheState::default()
            })
            .map_err(|e| fail(e.into()))?,
    }
    let sha256 = digest();
    Ok(UpdateReport {
        providers,
        models,
        source: label.clone(),
        target,
        written: !options.dry_run,
        sha256,
        signed_at,
        changes,
        warnings,
    })
}

/// The jobs an update can hand to a second thread.
#[derive(Default)]
struct Jobs {
    /// The previous file's summary.
    summary: Job<Option<Summary>>,
    /// The new catalog's SHA-256.
    digest: Job<[u8; 32]>,
}

/// A job done once, by whichever thread claims it first. The thread that
/// needs its result never sleeps for it: on a virtual machine a sleeping
/// thread can wait a millisecond for a CPU once woken (measured; see
/// docs/BENCHMARKS.md), longer than the jobs of a real catalog take.
struct Job<T> {
    claimed: AtomicBool,
    /// `None` when the job panicked on the thread that claimed it.
    result: OnceLock<Option<T>>,
}

impl<T> Default for Job<T> {
    fn default() -> Self {
        Job {
            claimed: AtomicBool::new(false),
            result: OnceLock::new(),
        }
    }
}

impl<T> Job<T> {
    /// Does the job here unless another thread has claimed it.
    fn offer(&self, work: impl FnOnce() -> T) {
        if self.claimed.swap(true, Ordering::AcqRel) {
            return;
        }
        // Should the work panic, whoever awaits it is told rather than left
        // waiting.
        struct Abandon<'a, T>(&'a OnceLock<Option<T>>);
        impl<T> Drop for Abandon<'_, T> {
            fn drop(&mut self) {
                let _ = self.0.set(None);
            }
        }
        let abandon = Abandon(&self.result);
        let _ = self.result.set(Some(work()));
        drop(abandon);
    }

    /// The job's result: done here if no other thread has claimed it, else
    /// awaited without sleeping (the other thread is running it).
    fn take(&self, work: impl FnOnce() -> T) -> &T {
        self.offer(work);
        loop {
            match self.result.get() {
                Some(Some(result)) => return result,
                Some(None) => panic!("a job of the update panicked on its thread"),
                None => std::thread::yield_now(),
            }
        }
    }
}

/// Starts the thread that offers to do the update's jobs: the summary of
/// `previous`, then the digest of the bytes once they come. It is not
/// waited for: a job it has not claimed by the time its result is needed
/// is done by the thread that needs it. With one CPU there is no thread,
/// and that is all.
fn start_helper(jobs: &Arc<Jobs>, previous: PathBuf, bytes: Receiver<Arc<Loaded>>) {
    let Some(elsewhere) = OtherCpus::of_this_thread() else {
        return;
    };
    let jobs = Arc::clone(jobs);
    let helper = std::thread::Builder::new()
        .name("update-helper".into())
        .spawn(move || {
            jobs.summary.offer(|| Summary::read(&previous));
            if let Ok(loaded) = bytes.recv() {
                jobs.digest.offer(|| catalog::sha256(&loaded.bytes));
            }
        });
    if let Ok(helper) = helper {
        elsewhere.move_there(&helper);
    }
}

/// The CPUs this thread may run on, but for the one it is on.
#[cfg(target_os = "linux")]
struct OtherCpus(libc::cpu_set_t);

#[cfg(target_os = "linux")]
impl OtherCpus {
    /// `None` when there is no other.
    fn of_this_thread() -> Option<OtherCpus> {
        // SAFETY: `cpu_set_t` is a plain bit array, valid all zeros; the
        // calls get its size and write only within it.
        unsafe {
            let mut cpus: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut cpus) != 0 {
                return None;
            }
            let here = usize::try_from(libc::sched_getcpu()).ok()?;
            libc::CPU_CLR(here, &mut cpus);
            (libc::CPU_COUNT(&cpus) > 0).then_some(OtherCpus(cpus))
        }
    }

    /// Moves a thread just started there. Linux starts a new thread on its
    /// parent's CPU and moves it only when it next balances the load: on
    /// the 2-CPU virtual machine measured, 1.6 to 3 ms later, longer than
    /// the whole update of a real catalog (0.1 ms when moved at once; see
    /// docs/BENCHMARKS.md). A failure leaves it where it is.
    fn move_there(&self, thread: &std::thread::JoinHandle<()>) {
        use std::os::unix::thread::JoinHandleExt;
        // SAFETY: the handle keeps the thread's pthread_t valid (it is not
        // joined or detached before this returns); the set is read only.
        unsafe {
            libc::pthread_setaffinity_np(
                thread.as_pthread_t(),
                size_of::<libc::cpu_set_t>(),
                &self.0,
            );
        }
    }
}

/// Elsewhere, threads are left where the system puts them.
#[cfg(not(target_os = "linux"))]
struct OtherCpus;

#[cfg(not(target_os = "linux"))]
impl OtherCpus {
    fn of_this_thread() -> Option<OtherCpus> {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        (cpus > 1).then_some(OtherCpus)
    }

    fn move_there(&self, _thread: &std::thread::JoinHandle<()>) {}
}

/// Checks the signature of `bytes` from `source` against the pinned
/// `keys`, and that it was not signed before the cached catalog (unless
/// allowed); returns the signing time. The embedded snapshot needs none.
fn verify(
    source: &Source,
    bytes: &[u8],
    keys: &TrustedKeys,
    options: &UpdateOptions,
    cache: &CacheFiles,
    fetch: &FetchOptions,
) -> Result<Option<u64>, Cause> {
    let Some(signature) = source.load_signature(options.signature.as_deref(), fetch)? else {
        return Ok(None);
    };
    let signed = keys.verify(bytes, &signature)?;
    // Replaying an older signed catalog over the cache is refused; an
    // output file has no recorded signing time to compare with.
    let cached = options
        .output
        .is_none()
        .then(|| cache::vouched_state(cache))
        .flatten()
        .and_then(|state| state.signed_at);
    if let Some(cached) = cached
        && signed < cached
        && !options.allow_downgrade
    {
        return Err(SignatureError::Older {
            signed: state::rfc3339(signed),
            cached: state::rfc3339(cached),
        }
        .into());
    }
    Ok(Some(signed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_is_done_once_by_whichever_thread_claims_it() {
        let job = Job::default();
        assert_eq!(*job.take(|| 1), 1);
        job.offer(|| unreachable!("done already"));
        assert_eq!(*job.take(|| unreachable!("done already")), 1);

        // Claimed by another thread: awaited, not done again.
        let job = Arc::new(Job::default());
        let (started, wait) = std::sync::mpsc::channel();
        let other = {
            let job = Arc::clone(&job);
            std::thread::spawn(move || {
                job.offer(|| {
                    started.send(()).unwrap();
                    std::thread::sleep(Duration::from_millis(50));
                    "there"
                })
            })
        };
        wait.recv().unwrap();
        assert_eq!(*job.take(|| "here"), "there");
        other.join().unwrap();
    }

    #[test]
    fn a_job_that_panicked_elsewhere_is_told_not_awaited_forever() {
        let job = Arc::new(Job::<u8>::default());
        let other = {
            let job = Arc::clone(&job);
            std::thread::spawn(move || job.offer(|| panic!("in the job")))
        };
        assert!(other.join().is_err());
        let taken = std::panic::catch_unwind(|| *job.take(|| 1));
        assert!(taken.is_err());
    }

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
