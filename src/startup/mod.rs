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

mod env;
pub(crate) mod hyper;
pub(crate) mod network;
pub(crate) mod refresh;
pub(crate) mod settings;
mod tell;

use std::borrow::Cow;
use std::path::PathBuf;
use std::time::Duration;

use reqwest::Url;

pub(crate) use self::env::parse_interval;
pub use self::env::{EnvOptions, options_from_env};
pub use self::hyper::HyperOptions;
pub use self::refresh::{Outcome, Refresh};
pub use self::settings::{Prepared, pinned_keys};
pub(crate) use self::tell::held_hint_for;
pub use self::tell::{InUse, ToldBy, Warning};
use self::tell::{crushrc, held_needs, mark_told, report_held, report_refresh};
use crate::catalog::{Target, embedded};
use crate::fetch::source;
use crate::fetch::watch::{Signal, Watch};
use crate::store::cache::{self, Bytes, CacheFiles, Cached};
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
    /// Hyper's provider, kept fresh beside the catalog by the same rules
    /// (`hyper`): when a Hyper key is configured.
    pub hyper: Option<HyperOptions>,
}

impl StartupOptions {
    /// The watch of a refresh: the caller's for one waited for, none for
    /// one in the background.
    pub(crate) fn refresh_watch(&self) -> Watch {
        if self.wait {
            self.watch.clone()
        } else {
            Watch::default()
        }
    }
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
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
    /// Their SHA-256, when they are (or were just written to) the cache.
    pub sha256: Option<[u8; 32]>,
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
    /// The refresh started on a thread ([`Background::Thread`]), when one
    /// was.
    pub refresh: Option<Refresh>,
    /// Whether a refresh was started in the background, either way.
    pub refreshing: bool,
    /// Whether a refresh of Hyper's provider was started in the
    /// background.
    pub hyper_refreshing: bool,
    /// The signal [`StartupOptions::watch`]'s cancellation ended a refresh
    /// that was waited for with; nothing was written. Only with
    /// [`StartupOptions::wait`].
    pub interrupted: Option<Signal>,
}

/// What start-up does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// No network: the cache, else the embedded snapshot.
    Offline,
    /// The cache, confirmed recently enough: no network.
    Cache,
    /// The cache at once, and a refresh in the background.
    CacheAndRefresh,
    /// No valid cache: the embedded snapshot at once, and a first fetch in
    /// the background.
    EmbeddedAndFetch,
    /// A refresh (or first fetch) waited for, then its catalog.
    Wait,
}

/// Decides what start-up does, given the settings, the valid cache (if
/// any), the refresh interval, the time now (seconds since the epoch), and
/// whether the caller waits for a refresh that is due.
pub(crate) fn decide(
    auto_update: bool,
    cached: Option<&Cached>,
    interval: Duration,
    now: u64,
    wait: bool,
) -> Decision {
    match cached {
        _ if !auto_update => Decision::Offline,
        Some(cached) if refresh::is_confirmed(cached.state.as_ref(), interval, now) => {
            Decision::Cache
        }
        _ if wait => Decision::Wait,
        None => Decision::EmbeddedAndFetch,
        Some(_) => Decision::CacheAndRefresh,
    }
}

/// Loads the catalog for start-up, at once unless the caller waits.
/// Never fails: every problem becomes a warning and a fallback.
pub fn load(files: &CacheFiles, options: &StartupOptions) -> StartupCatalog {
    run(files, options, true)
}

/// The start-up policy for a caller that hands no catalog over (the front,
/// whose Crush reads the cache itself) and has reviewed what another
/// program wrote ([`foreign::settle`]): [`load`], but the cache is not
/// read when its state vouches for it, and what it tells is all it gives.
pub(crate) fn keep_fresh(files: &CacheFiles, options: &StartupOptions) -> Vec<Warning> {
    run(files, options, false).warnings
}

fn run(files: &CacheFiles, options: &StartupOptions, hand_over: bool) -> StartupCatalog {
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
        warnings.push(Warning::UntrustedFolder {
            problem: e.to_string(),
            fix: e.fix(),
        });
        return snapshot(warnings);
    }
    // What another program wrote is reviewed before anything calls it
    // current; one that cannot be reviewed is not handed over. A caller
    // that hands nothing over (the front) has reviewed it already.
    let pinned = options.keys.is_some();
    // Told as found: the review of another program's document may replace
    // a state file that cannot be read.
    let state_problem = hand_over.then(|| state::read(&files.state).err()).flatten();
    let unreviewed = |files: &CacheFiles| match foreign::settle(files, pinned, Duration::ZERO) {
        _ if !hand_over => None,
        Ok(settled) if settled.readable() => None,
        Ok(_) => Some(foreign::unreviewed(files)),
        Err(e) => Some(e.to_string()),
    };
    if let Some(problem) = unreviewed(&files.with_target(Target::Hyper)) {
        warnings.push(Warning::InvalidHyperCache { problem });
    }
    let cached = match unreviewed(files) {
        Some(problem) => Err(problem),
        None => {
            let bytes = if hand_over { Bytes::Read } else { Bytes::Peek };
            let found = cache::read(files, bytes);
            found.valid(files).map_err(|e| e.to_string())
        }
    };
    let cached = match cached {
        Ok(cached) => cached,
        Err(problem) => {
            warnings.push(Warning::InvalidCache { problem });
            None
        }
    };
    warnings.extend(
        cached
            .as_ref()
            .and_then(|c| c.state_problem.clone())
            .or(state_problem)
            .map(|problem| Warning::UnreadableState { problem }),
    );
    let decision = decide(
        options.auto_update,
        cached.as_ref(),
        options.interval,
        state::now(),
        options.wait,
    );
    // A refresh waited for tells its own outcome: the last one's is stale
    // by then.
    if let Some(cached) = &cached
        && !matches!(decision, Decision::Offline | Decision::Wait)
    {
        report_refresh(files, Some(cached), &mut warnings);
    } else if decision == Decision::Offline {
        // Still held, with updates off: told all the same.
        report_held(files, cached.as_ref(), &mut warnings);
    }
    let hyper = hyper::plan(files, options, &mut warnings);
    if hyper.is_none() {
        // Crush may have written Hyper's provider without a key here.
        let files = files.with_target(Target::Hyper);
        let cached = cache::read(&files, Bytes::Read).valid(&files);
        report_held(&files, cached.ok().flatten().as_ref(), &mut warnings);
    }
    let hyper = hyper.as_ref().filter(|plan| plan.is_due());
    let request = refresh::Request {
        url: options.url.clone(),
        timeout: options.timeout,
        interval: options.interval,
        keys: options.keys.clone(),
        watch: options.refresh_watch(),
        bearer: None,
    };
    match decision {
        Decision::Offline | Decision::Cache => {
            hyper::alone(hyper, &options.background, at_hand(cached, warnings))
        }
        Decision::CacheAndRefresh | Decision::EmbeddedAndFetch => {
            let mut loaded = at_hand(cached, warnings);
            start_refresh(files, options, request, hyper, &mut loaded);
            loaded
        }
        Decision::Wait => waited(files, options, &request, hyper, cached, warnings),
    }
}

/// The catalog at hand without a refresh: the cache, else the embedded
/// snapshot.
fn at_hand(cached: Option<Cached>, warnings: Vec<Warning>) -> StartupCatalog {
    match cached {
        Some(cached) => from_cache(cached, warnings),
        None => snapshot(warnings),
    }
}

/// The catalog's refresh `request` (and Hyper's, when `hyper` has one
/// due) waited for, and the catalog it brings, else the one at hand
/// (`cached`), with what came of it told.
fn waited(
    files: &CacheFiles,
    options: &StartupOptions,
    request: &refresh::Request,
    hyper: Option<&hyper::Plan>,
    cached: Option<Cached>,
    mut warnings: Vec<Warning>,
) -> StartupCatalog {
    let catalog = refresh::Job {
        files,
        request,
        known: cached.as_ref().map(|c| c.sha256),
    };
    match hyper::waited(catalog, hyper, &mut warnings) {
        Outcome::Updated(bytes) => fresh(bytes, &options.url, warnings),
        Outcome::Unsaved(bytes, why) => {
            warnings.push(Warning::Unsaved { cause: why });
            fresh(bytes, &options.url, warnings)
        }
        Outcome::Interrupted(code) => StartupCatalog {
            interrupted: Some(code),
            ..snapshot(warnings)
        },
        Outcome::Unchanged => match cache::read(files, Bytes::Read).valid(files) {
            Ok(Some(cached)) => from_cache(cached, warnings),
            _ => at_hand(cached, warnings),
        },
        // The cause carries its fix; a person who waits for the network
        // is online.
        Outcome::Failed(why) => {
            // Told now: the next start does not tell it again.
            if let Ok(Some(now)) = cache::read(files, Bytes::Read).valid(files) {
                mark_told(files, Some(&now), Some(why.clone()));
            }
            warnings.push(Warning::RefreshFailed {
                url: source::redacted(options.url.as_str()),
                cause: why,
                using: InUse::catalog(cached.as_ref()),
            });
            at_hand(cached, warnings)
        }
        // The findings are in the state, told by the next start as by
        // every start while it is held; told now too.
        Outcome::Held(findings) => {
            warnings.push(Warning::Held {
                target: Target::Catalog,
                url: source::redacted(options.url.as_str()),
                at: None,
                findings,
                needs: held_needs(files),
                foreign: false,
            });
            at_hand(cached, warnings)
        }
    }
}

/// Starts the refresh of `files` in the background, as `options` say, for
/// the catalog handed over in `loaded`, and of Hyper's provider when it is
/// due (in the same helper process, or on a thread of its own).
fn start_refresh(
    files: &CacheFiles,
    options: &StartupOptions,
    request: refresh::Request,
    hyper: Option<&hyper::Plan>,
    loaded: &mut StartupCatalog,
) {
    match &options.background {
        Background::Thread => {
            let known = loaded
                .sha256
                .unwrap_or_else(|| digest::sha256(&loaded.bytes));
            loaded.refresh = Some(Refresh::start(files.clone(), request, Some(known)));
            loaded.refreshing = true;
            if let Some(plan) = hyper {
                loaded.hyper_refreshing =
                    hyper::start(plan, &options.background, &mut loaded.warnings);
            }
        }
        Background::Process(exe) => {
            let catalog = refresh::Job {
                files,
                request: &request,
                known: None,
            };
            match refresh::spawn_helper(exe, &hyper::with(catalog, hyper)) {
                Ok(()) => {
                    loaded.refreshing = true;
                    loaded.hyper_refreshing = hyper.is_some();
                }
                Err(e) => loaded.warnings.push(Warning::NoBackground {
                    helper: exe.clone(),
                    cause: e.to_string(),
                    using: match loaded.provenance {
                        Provenance::Cached => InUse::Cached,
                        _ => InUse::Embedded,
                    },
                }),
            }
        }
    }
}

/// A catalog just fetched from `url`.
fn fresh(bytes: Vec<u8>, url: &Url, warnings: Vec<Warning>) -> StartupCatalog {
    StartupCatalog {
        sha256: Some(digest::sha256(&bytes)),
        bytes: Cow::Owned(bytes),
        provenance: Provenance::Fresh,
        fetched_at: Some(state::now()),
        confirmed_at: Some(state::now()),
        source: Some(crate::fetch::source::redacted(url.as_str())),
        ..snapshot(warnings)
    }
}

fn from_cache(cached: Cached, warnings: Vec<Warning>) -> StartupCatalog {
    StartupCatalog {
        fetched_at: cached.written_at(),
        confirmed_at: cached.state.as_ref().and_then(|s| s.confirmed_at),
        source: cached.state.as_ref().map(|s| s.source.clone()),
        sha256: Some(cached.sha256),
        bytes: Cow::Owned(cached.bytes),
        provenance: Provenance::Cached,
        ..snapshot(warnings)
    }
}

fn snapshot(warnings: Vec<Warning>) -> StartupCatalog {
    StartupCatalog {
        bytes: Cow::Borrowed(embedded::catalog_bytes()),
        sha256: None,
        provenance: Provenance::Embedded,
        fetched_at: None,
        confirmed_at: None,
        source: None,
        warnings,
        refresh: None,
        refreshing: false,
        hyper_refreshing: false,
        interrupted: None,
    }
}

#[cfg(test)]
mod tests {
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
        assert_eq!(
            decide(true, None, five_min, false),
            Decision::EmbeddedAndFetch
        );
        assert_eq!(decide(true, None, five_min, true), Decision::Wait);
        assert_eq!(
            decide(true, Some(&old), five_min, false),
            Decision::CacheAndRefresh
        );
        assert_eq!(decide(true, Some(&old), five_min, true), Decision::Wait);
        assert_eq!(
            decide(true, Some(&never), five_min, false),
            Decision::CacheAndRefresh
        );
        // A confirmation from the future (a clock set back) is not trusted.
        assert_eq!(
            decide(true, Some(&future), five_min, false),
            Decision::CacheAndRefresh
        );
        // 0 revalidates at every start.
        assert_eq!(
            decide(true, Some(&recent), Duration::ZERO, false),
            Decision::CacheAndRefresh
        );
        let just_now = cached(Some(now));
        assert_eq!(
            decide(true, Some(&just_now), Duration::ZERO, false),
            Decision::CacheAndRefresh
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
