//! The start-up policy: what Crush calls when it starts. A user waits for a
//! start-up; nobody waits for a refresh. So a start hands over a valid
//! catalog at once, the cache or, without a valid one, the embedded
//! snapshot (the real catalog of a named release), and revalidates it off
//! the critical path when it was last confirmed longer ago than the
//! refresh interval (`refresh`). Only a caller that asks to wait
//! ([`StartupOptions::wait`]) waits, bounded. It never fails.
//!
//! | situation | the caller gets | network |
//! |---|---|---|
//! | auto-update off | the cache, else the embedded snapshot | none |
//! | valid cache, confirmed less than the interval ago | the cache | none |
//! | valid cache, confirmed longer ago (or never) | the cache | one conditional request, in the background |
//! | no valid cache | the embedded snapshot | one request, in the background; the next start has its catalog |
//! | either of the last two, waiting | what the request brings, else the cache or the embedded snapshot | one request, waited for |
//!
//! What to do is decided by `decide`, a pure function of the settings,
//! the cache and the clock; [`load`] carries it out.

pub(crate) mod network;
pub(crate) mod refresh;
pub(crate) mod settings;
mod tell;

use std::borrow::Cow;
use std::path::PathBuf;
use std::time::Duration;

use reqwest::Url;

use self::refresh::{IfBusy, Job};
pub use self::refresh::{Outcome, Refresh};
pub(crate) use self::settings::{EnvOptions, parse_interval, pinned_keys};
pub(crate) use self::tell::held_hint_for;
pub use self::tell::{InUse, Warning};
use self::tell::{mark_told, tell_last};
use crate::catalog::{Target, embedded};
use crate::fetch::http::Bearer;
use crate::fetch::source;
use crate::fetch::watch::{Signal, Watch};
use crate::store::cache::{self, Bytes, CacheFiles, Cached, Found};
use crate::store::digest;
use crate::store::state;
pub use crate::store::state::Need;
use crate::trust::foreign;
use crate::trust::signature::TrustedKeys;

/// Default bound on a refresh.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Environment variable that changes [`DEFAULT_TIMEOUT`] (seconds).
pub const TIMEOUT_ENV: &str = "CRUSH_PROVIDER_TIMEOUT";
/// Default refresh interval: a cache confirmed less than this long ago is
/// used without asking the server.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(5 * 60);
/// Environment variable that changes [`DEFAULT_INTERVAL`]: seconds, or
/// `90s`, `5m`, `1h`; `0` revalidates at every start.
pub const INTERVAL_ENV: &str = "CRUSH_PROVIDER_REFRESH_INTERVAL";

/// What the start-up policy needs to know.
#[derive(Debug, Clone)]
pub struct StartupOptions {
    /// `provider-auto-update`.
    pub auto_update: bool,
    /// `default-providers`: when off the catalog is empty.
    pub default_providers: bool,
    /// The catalog URL to refresh from.
    pub url: Url,
    /// Bound on one refresh.
    pub timeout: Duration,
    /// A cache confirmed less than this long ago is used without a request.
    pub interval: Duration,
    /// Where a background refresh runs.
    pub background: Background,
    /// Whether a refresh that is due is waited for instead of run in the
    /// background (`--wait`).
    pub wait: bool,
    /// Where a refresh waited for shows its progress, and what ends it
    /// early ([`StartupCatalog::interrupted`]): the command line's bar and
    /// Ctrl-C; unused without [`StartupOptions::wait`].
    pub watch: Watch,
    /// The pinned keys: a catalog from the network must be signed by one of
    /// them, or it is not applied.
    pub keys: Option<TrustedKeys>,
    /// Hyper's provider, kept fresh beside the catalog by the same rules,
    /// when a Hyper key is configured. Start-up hands over no Hyper
    /// provider: Crush reads `hyper.json` itself.
    pub hyper: Option<HyperOptions>,
}

/// Hyper's provider to keep fresh: where from, and the key its requests
/// carry.
#[derive(Debug, Clone)]
pub struct HyperOptions {
    /// `$HYPER_URL/api/v1/provider`, else Hyper's server's.
    pub url: Url,
    /// The Hyper key (`HYPER_API_KEY`, else the config's).
    pub key: Bearer,
}

/// Where a background refresh runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Background {
    /// On a thread of this process; [`StartupCatalog::refresh`] reports its
    /// outcome, so that a long-lived host can swap a new catalog in while it
    /// runs.
    Thread,
    /// In a detached helper process, this program (the path) run with
    /// `refresh::HELPER_COMMAND`: for a short-lived command, which prints
    /// and exits at once; a new catalog shows from the next start on.
    Process(PathBuf),
}

/// Where the catalog returned at start-up came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provenance {
    /// Just downloaded, waited for, and written to the cache.
    Fresh,
    /// The cache.
    Cached,
    /// The snapshot compiled into the binary.
    Embedded,
    /// No catalog: `default-providers` is off.
    Disabled,
}

/// The catalog Crush starts with.
#[derive(Debug)]
pub struct StartupCatalog {
    /// The catalog's bytes: always a valid catalog, or `[]` when disabled.
    pub bytes: Cow<'static, [u8]>,
    /// Where they came from.
    pub provenance: Provenance,
    /// Seconds since the Unix epoch when the bytes were fetched or written,
    /// when known.
    pub fetched_at: Option<u64>,
    /// When the cache was last confirmed current, when known.
    pub confirmed_at: Option<u64>,
    /// Where the cached bytes were originally fetched from, when known.
    pub source: Option<String>,
    /// What went wrong on the way; never fatal.
    pub warnings: Vec<Warning>,
    /// The refresh of the catalog started on a thread
    /// ([`Background::Thread`]), when one was.
    pub refresh: Option<Refresh>,
    /// The documents whose refresh was started in the background, either
    /// way.
    pub refreshing: Vec<Target>,
    /// The signal [`StartupOptions::watch`]'s cancellation ended a refresh
    /// that was waited for with; nothing was written. Only with
    /// [`StartupOptions::wait`].
    pub interrupted: Option<Signal>,
}

/// What start-up does with one document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// No network: the cache, else the embedded snapshot.
    Offline,
    /// The cache, confirmed recently enough: no network.
    Cache,
    /// What is at hand (the cache, else the embedded snapshot) at once,
    /// and a refresh (or first fetch) in the background.
    Later,
    /// A refresh (or first fetch) waited for, then its catalog.
    Wait,
}

/// Decides what start-up does with a document, given whether it may go
/// out for it (updates on, and a place to ask), its valid cache (if any),
/// the refresh interval, the time now (seconds since the epoch), and
/// whether the caller waits for a refresh that is due.
pub(crate) fn decide(
    online: bool,
    cached: Option<&Cached>,
    interval: Duration,
    now: u64,
    wait: bool,
) -> Decision {
    match cached {
        _ if !online => Decision::Offline,
        Some(cached) if refresh::is_confirmed(cached.state.as_ref(), interval, now) => {
            Decision::Cache
        }
        _ if wait => Decision::Wait,
        _ => Decision::Later,
    }
}

/// Loads the catalog for start-up, at once unless the caller waits.
/// Never fails: every problem becomes a warning and a fallback.
pub fn load(files: &CacheFiles, options: &StartupOptions) -> StartupCatalog {
    run(files, options, None)
}

/// The start-up policy for a caller that hands no catalog over (the front,
/// whose Crush reads the cache itself) and has reviewed what another
/// program wrote ([`foreign::settle`]): [`load`] on what it `found` of the
/// catalog and of Hyper's provider, in that order (read with
/// [`Bytes::Peek`]), neither read again; what it tells is all it gives.
pub(crate) fn keep_fresh(
    files: &CacheFiles,
    options: &StartupOptions,
    found: [Found; 2],
) -> Vec<Warning> {
    run(files, options, Some(found)).warnings
}

/// Both documents go the same way: each is read (what another program
/// wrote reviewed first), decided on its own cache and state, its last
/// refresh told, and refreshed when due, both under one lock (waited for,
/// or in one helper process). Hyper's, without a key, is only told.
fn run(files: &CacheFiles, options: &StartupOptions, found: Option<[Found; 2]>) -> StartupCatalog {
    if !options.default_providers {
        return StartupCatalog {
            bytes: Cow::Borrowed(b"[]"),
            provenance: Provenance::Disabled,
            ..snapshot(Vec::new())
        };
    }
    let mut warnings = Vec::new();
    // A data folder another user may write into is neither read nor
    // refreshed: what is in it could send a key anywhere.
    if let Err(e) = cache::check_folder(files) {
        warnings.push(Warning::UntrustedFolder(e));
        return snapshot(warnings);
    }
    // The documents due, and what is used of each meanwhile.
    let (mut handed, mut due, mut using) = (None, Vec::new(), Vec::new());
    // Only a refresh waited for shows its progress, and ends early.
    let watch = if options.wait {
        options.watch.clone()
    } else {
        Watch::default()
    };
    let mut found = found.map(IntoIterator::into_iter);
    for target in [Target::Catalog, Target::Hyper] {
        let files = files.with_target(target);
        let found = found.as_mut().and_then(Iterator::next);
        let cached = read(&files, options.keys.is_some(), found, &mut warnings);
        let from = match target {
            Target::Catalog => Some((options.url.clone(), None)),
            Target::Hyper => (options.hyper.as_ref()).map(|h| (h.url.clone(), Some(h.key.clone()))),
        };
        let online = options.auto_update && from.is_some();
        let (interval, now) = (options.interval, state::now());
        let decision = decide(online, cached.as_ref(), interval, now, options.wait);
        // A refresh waited for tells its own outcome: the last one's is
        // stale by then. What is held is told even with updates off.
        if decision != Decision::Wait {
            tell_last(&files, cached.as_ref(), online, &mut warnings);
        }
        if let Some((url, bearer)) = from
            && matches!(decision, Decision::Later | Decision::Wait)
        {
            using.push(InUse::of(cached.as_ref()));
            due.push(Job {
                files,
                url,
                bearer,
                known: cached.as_ref().map(|c| c.sha256),
                timeout: options.timeout,
                interval,
                keys: options.keys.clone(),
                watch: watch.clone(),
            });
        }
        if target == Target::Catalog {
            handed = cached;
        }
    }
    if options.wait && !due.is_empty() {
        return waited(files, options, &due, &using, handed, warnings);
    }
    let mut loaded = at_hand(handed, warnings);
    start(due, using, &options.background, &mut loaded);
    loaded
}

/// The valid cache of `files`' document, and why it cannot be used when
/// it cannot: what another program wrote that cannot be reviewed (unless
/// the caller `found` it, reviewed), a file that is not valid, a state
/// file that cannot be read. What the caller found is not read again.
fn read(
    files: &CacheFiles,
    pinned: bool,
    found: Option<Found>,
    warnings: &mut Vec<Warning>,
) -> Option<Cached> {
    let hand_over = found.is_none();
    // Told as found: the review of another program's document may replace
    // a state file that cannot be read.
    let state_problem_before =
        hand_over.then(|| state::read(&files.state).err().map(|e| e.to_string()));
    let read = match hand_over.then(|| foreign::settle(files, pinned, Duration::ZERO)) {
        Some(Ok(settled)) if !settled.readable() => Err(foreign::unreviewed(files)),
        Some(Err(e)) => Err(e.to_string()),
        // What the caller found is not read again.
        _ => found
            .unwrap_or_else(|| cache::read(files, Bytes::Read))
            .valid(files)
            .map_err(|e| e.to_string()),
    };
    let target = files.target;
    let cached = read.unwrap_or_else(|problem| {
        warnings.push(Warning::InvalidCache(target, problem));
        None
    });
    let state_problem = cached.as_ref().and_then(|c| c.state_problem.clone());
    let state_problem = state_problem.or(state_problem_before.flatten());
    warnings.extend(state_problem.map(Warning::UnreadableState));
    cached
}

/// The catalog at hand without a refresh: the cache, else the embedded
/// snapshot.
fn at_hand(cached: Option<Cached>, warnings: Vec<Warning>) -> StartupCatalog {
    match cached {
        Some(cached) => from_cache(cached, warnings),
        None => snapshot(warnings),
    }
}

/// The refreshes `due` waited for, under one lock, what came of each
/// told (`using` what is used of each meanwhile), and the catalog: the
/// one just fetched, the cache just confirmed, else the one at hand
/// (`cached`).
fn waited(
    files: &CacheFiles,
    options: &StartupOptions,
    due: &[Job],
    using: &[InUse],
    cached: Option<Cached>,
    mut warnings: Vec<Warning>,
) -> StartupCatalog {
    let (mut fetched, mut confirmed) = (None, false);
    let outcomes = refresh::run(due, IfBusy::Wait);
    for ((job, &using), outcome) in due.iter().zip(using).zip(outcomes) {
        let (target, url) = (job.files.target, source::redacted(job.url.as_str()));
        confirmed |= target == Target::Catalog && outcome == Outcome::Unchanged;
        let bytes = match outcome {
            Outcome::Interrupted(code) => {
                return StartupCatalog {
                    interrupted: Some(code),
                    ..snapshot(warnings)
                };
            }
            Outcome::Unchanged => None,
            Outcome::Updated(bytes) => Some(bytes),
            Outcome::Unsaved(bytes, cause) => {
                warnings.push(Warning::Unsaved { target, url, cause });
                Some(bytes)
            }
            Outcome::Failed(cause) => {
                // Told now: the next start does not tell it again.
                if let Ok(Some(now)) = cache::read(&job.files, Bytes::Read).valid(&job.files) {
                    mark_told(&job.files, Some(&now), Some(cause.clone()));
                }
                let (at, cause) = (None, Some(cause));
                warnings.push(Warning::RefreshFailed {
                    target,
                    url,
                    at,
                    cause,
                    using,
                });
                None
            }
            // In the state too, told by every start while it is held.
            Outcome::Held(held) => {
                let at = None;
                warnings.push(Warning::Held {
                    target,
                    url,
                    at,
                    held,
                });
                None
            }
        };
        if target == Target::Catalog {
            fetched = bytes;
        }
    }
    let now = confirmed.then(|| cache::read(files, Bytes::Read).valid(files).ok().flatten());
    match (fetched, now.flatten()) {
        // Just fetched.
        (Some(bytes), _) => StartupCatalog {
            bytes: Cow::Owned(bytes),
            provenance: Provenance::Fresh,
            fetched_at: Some(state::now()),
            confirmed_at: Some(state::now()),
            source: Some(source::redacted(options.url.as_str())),
            ..snapshot(warnings)
        },
        (None, Some(now)) => from_cache(now, warnings),
        (None, None) => at_hand(cached, warnings),
    }
}

/// Starts the refreshes `due` in the background (`using` what is used of
/// each meanwhile), one after the other: in one helper process (under one
/// lock), or on a thread whose handle, when the first is the catalog's,
/// is in `loaded`, which hands that catalog over.
fn start(
    mut due: Vec<Job>,
    using: Vec<InUse>,
    background: &Background,
    loaded: &mut StartupCatalog,
) {
    let targets: Vec<Target> = due.iter().map(|job| job.files.target).collect();
    let (Some(&target), Some(&using)) = (targets.first(), using.first()) else {
        return;
    };
    let started = match background {
        Background::Process(exe) => {
            refresh::spawn_helper(exe, &due).map_err(|e| format!("{}: {e}", exe.display()))
        }
        Background::Thread => {
            if target == Target::Catalog {
                // The host holds the cache's (already known), else the
                // embedded snapshot.
                due[0]
                    .known
                    .get_or_insert_with(|| digest::sha256(&loaded.bytes));
            }
            Refresh::start(due)
                .map(|refresh| {
                    loaded.refresh = (target == Target::Catalog).then_some(refresh);
                })
                .map_err(|e| e.to_string())
        }
    };
    match started {
        Ok(()) => loaded.refreshing = targets,
        Err(cause) => loaded.warnings.push(Warning::NoBackground {
            target,
            cause,
            using,
        }),
    }
}

fn from_cache(cached: Cached, warnings: Vec<Warning>) -> StartupCatalog {
    StartupCatalog {
        fetched_at: cached.written_at(),
        confirmed_at: cached.state.as_ref().and_then(|s| s.confirmed_at),
        source: cached.state.as_ref().map(|s| s.source.clone()),
        bytes: Cow::Owned(cached.bytes),
        provenance: Provenance::Cached,
        ..snapshot(warnings)
    }
}

fn snapshot(warnings: Vec<Warning>) -> StartupCatalog {
    StartupCatalog {
        bytes: Cow::Borrowed(embedded::catalog_bytes()),
        provenance: Provenance::Embedded,
        fetched_at: None,
        confirmed_at: None,
        source: None,
        warnings,
        refresh: None,
        refreshing: Vec::new(),
        interrupted: None,
    }
}

#[cfg(test)]
mod tests {
    use super::settings::options_from_env;
    use super::*;
    use crate::store::state::CacheState;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn env_options_default_and_warn() {
        let mut warnings = Vec::new();
        let options = options_from_env(env_of(&[]), &mut warnings);
        assert_eq!(
            options.url.as_ref().unwrap().as_str(),
            "https://catwalk.charm.land/v2/providers"
        );
        assert_eq!(options.timeout, DEFAULT_TIMEOUT);
        assert_eq!(options.interval, DEFAULT_INTERVAL);
        assert!(warnings.is_empty());
        let options = options_from_env(
            env_of(&[
                ("CATWALK_URL", "http://127.0.0.1:1/x/"),
                (TIMEOUT_ENV, "0.25"),
                (INTERVAL_ENV, "90s"),
            ]),
            &mut warnings,
        );
        assert_eq!(
            options.url.as_ref().unwrap().as_str(),
            "http://127.0.0.1:1/x/v2/providers"
        );
        assert_eq!(options.timeout, Duration::from_millis(250));
        assert_eq!(options.interval, Duration::from_secs(90));
        assert!(warnings.is_empty());
        let options = options_from_env(
            env_of(&[
                ("CATWALK_URL", "ftp://x"),
                (TIMEOUT_ENV, "-1"),
                (INTERVAL_ENV, "soon"),
            ]),
            &mut warnings,
        );
        assert_eq!(
            options.url,
            Err("ftp://x".to_string()),
            "never the public server"
        );
        assert_eq!(options.timeout, DEFAULT_TIMEOUT);
        assert_eq!(options.interval, DEFAULT_INTERVAL);
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        let warnings: Vec<String> = warnings.iter().map(ToString::to_string).collect();
        assert!(
            warnings[0].starts_with(
                "CATWALK_URL=\"ftp://x\" is not an http:// or https:// URL: no refresh"
            )
        );
        assert!(
            warnings[2].starts_with("CRUSH_PROVIDER_REFRESH_INTERVAL=\"soon\" is not a duration")
        );
    }

    #[test]
    fn intervals_read_as_seconds_or_with_a_unit() {
        for (text, seconds) in [
            ("0", 0.0),
            ("300", 300.0),
            ("1.5", 1.5),
            (" 90s ", 90.0),
            ("5m", 300.0),
            ("1h", 3600.0),
            ("1h 30m", 5400.0),
            ("2days", 172_800.0),
        ] {
            assert_eq!(
                parse_interval(text),
                Some(Duration::from_secs_f64(seconds)),
                "{text}"
            );
        }
        for bad in ["", "-1", "5 parsecs", "m", "NaN", "inf", "1e300"] {
            assert_eq!(parse_interval(bad), None, "{bad}");
        }
    }

    fn cached(confirmed_at: Option<u64>) -> Cached {
        Cached {
            bytes: b"[]".to_vec(),
            sha256: [0; 32],
            state: Some(CacheState {
                confirmed_at,
                ..CacheState::default()
            }),
            modified: None,
            identity: None,
            state_problem: None,
        }
    }

    /// Every row of the start-up table, decided without a server.
    #[test]
    fn start_up_decides_from_the_setting_the_cache_and_the_clock() {
        let five_min = DEFAULT_INTERVAL;
        let now = 1_000_000;
        let recent = cached(Some(now - 60));
        let old = cached(Some(now - 600));
        let never = cached(None);
        let future = cached(Some(now + 3600));
        let decide = |auto, cached, interval, wait| decide(auto, cached, interval, now, wait);
        for wait in [false, true] {
            assert_eq!(decide(false, Some(&old), five_min, wait), Decision::Offline);
            assert_eq!(decide(false, None, five_min, wait), Decision::Offline);
            assert_eq!(decide(true, Some(&recent), five_min, wait), Decision::Cache);
        }
        // Nobody waits for the network unless they ask to.
        assert_eq!(decide(true, None, five_min, false), Decision::Later);
        assert_eq!(decide(true, None, five_min, true), Decision::Wait);
        assert_eq!(decide(true, Some(&old), five_min, false), Decision::Later);
        assert_eq!(decide(true, Some(&old), five_min, true), Decision::Wait);
        assert_eq!(decide(true, Some(&never), five_min, false), Decision::Later);
        // A confirmation from the future (a clock set back) is not trusted.
        assert_eq!(
            decide(true, Some(&future), five_min, false),
            Decision::Later
        );
        // 0 revalidates at every start.
        assert_eq!(
            decide(true, Some(&recent), Duration::ZERO, false),
            Decision::Later
        );
        let just_now = cached(Some(now));
        assert_eq!(
            decide(true, Some(&just_now), Duration::ZERO, false),
            Decision::Later
        );
    }

    #[test]
    fn disabled_default_providers_is_empty_without_network() {
        let tmp = tempfile::tempdir().unwrap();
        let options = StartupOptions {
            auto_update: true,
            default_providers: false,
            url: "http://127.0.0.1:1/v2/providers".parse().unwrap(),
            timeout: DEFAULT_TIMEOUT,
            interval: DEFAULT_INTERVAL,
            background: Background::Thread,
            wait: false,
            watch: Watch::default(),
            keys: None,
            hyper: None,
        };
        let catalog = load(&CacheFiles::in_dir(tmp.path()), &options);
        assert_eq!(catalog.provenance, Provenance::Disabled);
        assert_eq!(&catalog.bytes[..], b"[]");
        assert!(catalog.warnings.is_empty());
        assert!(catalog.refresh.is_none());
    }
}
