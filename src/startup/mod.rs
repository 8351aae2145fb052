//! The start-up policy: what Crush calls when it starts. A user waits for a
//! start-up; nobody waits for a refresh. So a valid cache is handed over at
//! once, and revalidated off the critical path when it was last confirmed
//! longer ago than the refresh interval ([`crate::startup::refresh`]); only a
//! machine without a valid cache waits, bounded, for its first catalog,
//! and falls back to the embedded snapshot. It never fails.
//!
//! | situation | the caller gets | network |
//! |---|---|---|
//! | auto-update off | the cache, else the embedded snapshot | none |
//! | valid cache, confirmed less than the interval ago | the cache | none |
//! | valid cache, confirmed longer ago (or never) | the cache | one conditional request, in the background |
//! | no valid cache | a fresh catalog, else the embedded snapshot | one request, waited for |
//!
//! What to do is decided by [`decide`], a pure function of the settings,
//! the cache and the clock; [`load`] carries it out.

pub mod refresh;

use std::borrow::Cow;
use std::path::PathBuf;
use std::time::Duration;

use reqwest::Url;

use self::refresh::{Answer, Refresh, RequestError};
use crate::catalog;
use crate::catalog::embedded;
use crate::fetch::http::{self, FetchError};
use crate::fetch::source;
use crate::fetch::validators::Validators;
use crate::store::cache::{self, CacheFiles, Cached};
use crate::store::state::{self, RefreshOutcome};
use crate::trust::signature::TrustedKeys;

/// Default bound on a refresh, and on the first fetch.
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
    /// Bound on one refresh, or on the first fetch.
    pub timeout: Duration,
    /// A cache confirmed less than this long ago is used without a request.
    pub interval: Duration,
    /// Where a background refresh runs.
    pub background: Background,
    /// Whether Ctrl-C or SIGTERM ends the first fetch (see
    /// [`StartupCatalog::interrupted`]). For the command line; a library
    /// host keeps its own signal handling, untouched, with this off.
    pub interruptible: bool,
    /// The pinned keys: a catalog from the network must be signed by one of
    /// them, or it is not applied.
    pub keys: Option<TrustedKeys>,
}

/// Where a background refresh runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Background {
    /// On a thread of this process; [`StartupCatalog::refresh`] reports its
    /// outcome, so that a long-lived host can swap a new catalog in while it
    /// runs.
    Thread,
    /// In a detached helper process, this program (the path) run with
    /// [`refresh::HELPER_COMMAND`]: for a short-lived command, which prints
    /// and exits at once; a new catalog shows from the next start on.
    Process(PathBuf),
}

/// Where the catalog returned at start-up came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Provenance {
    /// Just downloaded (there was no valid cache) and written to the cache.
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
    /// What went wrong on the way, one line each; never fatal.
    pub warnings: Vec<String>,
    /// The refresh started on a thread ([`Background::Thread`]), when one
    /// was.
    pub refresh: Option<Refresh>,
    /// Whether a refresh was started in the background, either way.
    pub refreshing: bool,
    /// The exit code when Ctrl-C (130) or SIGTERM (143) ended the first
    /// fetch; nothing was written. Only with
    /// [`StartupOptions::interruptible`].
    pub interrupted: Option<u8>,
}

/// What start-up does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// No network: the cache, else the embedded snapshot.
    Offline,
    /// The cache, confirmed recently enough: no network.
    Cache,
    /// The cache at once, and a refresh in the background.
    CacheAndRefresh,
    /// No valid cache: wait for a first catalog.
    FetchFirst,
}

/// Decides what start-up does, given the settings, the valid cache (if
/// any), the refresh interval and the time now (seconds since the epoch).
pub fn decide(
    auto_update: bool,
    cached: Option<&Cached>,
    interval: Duration,
    now: u64,
) -> Decision {
    match cached {
        _ if !auto_update => Decision::Offline,
        None => Decision::FetchFirst,
        Some(cached) if refresh::is_confirmed(cached.state.as_ref(), interval, now) => {
            Decision::Cache
        }
        Some(_) => Decision::CacheAndRefresh,
    }
}

/// The hint appended to every start-up refresh warning.
pub const REFRESH_HINT: &str = "to stop refreshing at start-up set `option provider-auto-update false` in a crushrc or CRUSH_DISABLE_PROVIDER_AUTO_UPDATE=1; to update by hand run `crush update-providers`";

/// Loads the catalog for start-up, at once unless there is no valid cache.
/// Never fails: every problem becomes a warning and a fallback.
pub fn load(files: &CacheFiles, options: &StartupOptions) -> StartupCatalog {
    if !options.default_providers {
        return StartupCatalog {
            bytes: Cow::Borrowed(b"[]"),
            provenance: Provenance::Disabled,
            ..embedded(Vec::new())
        };
    }
    let mut warnings = Vec::new();
    let cached = match cache::read_valid(files) {
        Ok(cached) => cached,
        Err(problem) => {
            warnings.push(format!("{problem}; ignoring it"));
            None
        }
    };
    let now = state::now();
    let decision = decide(options.auto_update, cached.as_ref(), options.interval, now);
    let Some(cached) = cached else {
        return match decision {
            Decision::Offline => embedded(warnings),
            _ => first_fetch(files, options, warnings),
        };
    };
    if decision == Decision::Offline {
        return from_cache(cached, warnings);
    }
    report_refresh(files, &cached, &mut warnings);
    let mut loaded = from_cache(cached, warnings);
    if decision == Decision::CacheAndRefresh {
        let request = refresh::Request {
            url: options.url.clone(),
            timeout: options.timeout,
            interval: options.interval,
            keys: options.keys.clone(),
        };
        match &options.background {
            Background::Thread => {
                let known = loaded.sha256;
                loaded.refresh = Some(Refresh::start(files.clone(), request, known));
                loaded.refreshing = true;
            }
            Background::Process(exe) => match refresh::spawn_helper(exe, files, &request) {
                Ok(()) => loaded.refreshing = true,
                Err(e) => loaded.warnings.push(format!(
                    "cannot start the background refresh ({}): {e}; using the cached catalog",
                    exe.display()
                )),
            },
        }
    }
    loaded
}

/// Tells of what the last background refresh held back (at every start,
/// while it is held), or, once, of its failure (marking it told in the
/// state file).
fn report_refresh(files: &CacheFiles, cached: &Cached, warnings: &mut Vec<String>) {
    let Some(state) = &cached.state else {
        return;
    };
    if let Some((refresh, held)) = state.held() {
        let more = match held.changes.len() {
            0 | 1 => String::new(),
            n => format!(
                " (and {} more: `crush providers --status` lists them)",
                n - 1
            ),
        };
        warnings.push(format!(
            "a refresh of the provider catalog from {} was held at {}, the cache is kept: {}{more}; to review and apply it run `{}`",
            refresh.url,
            state::rfc3339(refresh.at),
            held.changes.first().map_or("", String::as_str),
            held.accept
        ));
    }
    let Some(failure) = state.untold_failure() else {
        return;
    };
    warnings.push(format!(
        "the last refresh of the provider catalog from {} failed at {}: {}; using the cached catalog; {REFRESH_HINT}",
        failure.url,
        state::rfc3339(failure.at),
        failure.cause.as_deref().unwrap_or("no cause recorded")
    ));
    let cause = failure.cause.clone();
    // Best effort: should it not be saved, the warning shows once more. By
    // cause, not time: a refresh that failed the same way meanwhile is the
    // same failure.
    let _ = cache::update_state(files, cached, Duration::from_millis(200), |state| {
        if let Some(refresh) = &mut state.refresh
            && refresh.outcome == RefreshOutcome::Failed
            && refresh.cause == cause
        {
            refresh.told = true;
        }
    });
}

/// No valid cache: one request, waited for within the bounds; the catalog
/// it brings is written to the cache; else the embedded snapshot.
fn first_fetch(
    files: &CacheFiles,
    options: &StartupOptions,
    mut warnings: Vec<String>,
) -> StartupCatalog {
    let answer = refresh::request(
        &options.url,
        options.timeout,
        Validators::default(),
        options.keys.as_ref(),
        options.interruptible,
    );
    let (bytes, validators, signed_at) = match answer {
        Ok(Answer::Catalog {
            bytes,
            validators,
            signed_at,
        }) => (bytes, validators, signed_at),
        // An unconditional request gets no 304 past `fetch`, which refuses
        // it.
        Ok(Answer::NotModified) => {
            return refresh_failed(
                options,
                "the server answered 304 Not Modified".into(),
                warnings,
            );
        }
        Err(RequestError::Fetch(FetchError::Interrupted(code))) => {
            return StartupCatalog {
                interrupted: Some(code),
                ..embedded(warnings)
            };
        }
        Err(e) => return refresh_failed(options, e.explain(), warnings),
    };
    let digest = catalog::sha256(&bytes);
    let now = state::now();
    let fetched = refresh::NewCatalog {
        bytes: &bytes,
        digest: &digest,
        validators,
        signed_at,
    };
    if let Err(e) = refresh::save(files, &options.url, fetched, now) {
        warnings.push(format!(
            "could not save the refreshed catalog: {e}; it is used for this run only"
        ));
    }
    StartupCatalog {
        bytes: Cow::Owned(bytes),
        sha256: Some(digest),
        provenance: Provenance::Fresh,
        fetched_at: Some(now),
        confirmed_at: Some(now),
        source: Some(options.url.to_string()),
        ..embedded(warnings)
    }
}

fn refresh_failed(
    options: &StartupOptions,
    failure: String,
    mut warnings: Vec<String>,
) -> StartupCatalog {
    warnings.push(format!(
        "could not refresh the provider catalog from {}: {failure}; using the embedded catalog; {REFRESH_HINT}",
        options.url
    ));
    embedded(warnings)
}

fn from_cache(cached: Cached, warnings: Vec<String>) -> StartupCatalog {
    StartupCatalog {
        fetched_at: cached.written_at(),
        confirmed_at: cached.state.as_ref().and_then(|s| s.confirmed_at),
        source: cached.state.as_ref().map(|s| s.source.clone()),
        sha256: Some(cached.sha256),
        bytes: Cow::Owned(cached.bytes),
        provenance: Provenance::Cached,
        ..embedded(warnings)
    }
}

fn embedded(warnings: Vec<String>) -> StartupCatalog {
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
        interrupted: None,
    }
}

/// The start-up settings that come from the environment, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvOptions {
    /// From `CATWALK_URL`, else the default Catwalk server.
    pub url: Url,
    /// From [`TIMEOUT_ENV`], else [`DEFAULT_TIMEOUT`].
    pub timeout: Duration,
    /// From [`INTERVAL_ENV`], else [`DEFAULT_INTERVAL`].
    pub interval: Duration,
}

/// Reads the start-up settings from the environment (`env` looks up one
/// variable). Bad values become warnings and defaults: start-up must not
/// fail on them.
pub fn options_from_env(
    env: impl Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) -> EnvOptions {
    let catwalk_url = env("CATWALK_URL");
    let url = match source::resolve(None, catwalk_url.as_deref()) {
        Ok(source::Source::Url(url)) => url,
        Ok(_) | Err(_) => {
            warnings.push(format!(
                "CATWALK_URL={:?} is not an http:// or https:// URL; using {}",
                catwalk_url.unwrap_or_default(),
                source::DEFAULT_CATWALK_URL
            ));
            source::catalog_url(source::DEFAULT_CATWALK_URL).expect("the default URL is valid")
        }
    };
    let timeout = env(TIMEOUT_ENV).map_or(DEFAULT_TIMEOUT, |text| {
        http::parse_seconds(&text).unwrap_or_else(|_| {
            warnings.push(format!(
                "{TIMEOUT_ENV}={text:?} is not a positive number of seconds; using {}",
                DEFAULT_TIMEOUT.as_secs()
            ));
            DEFAULT_TIMEOUT
        })
    });
    let interval = env(INTERVAL_ENV).map_or(DEFAULT_INTERVAL, |text| {
        parse_interval(&text).unwrap_or_else(|| {
            warnings.push(format!(
                "{INTERVAL_ENV}={text:?} is not a duration (seconds, or e.g. 90s, 5m, 1h; 0 to refresh at every start); using 5m"
            ));
            DEFAULT_INTERVAL
        })
    });
    EnvOptions {
        url,
        timeout,
        interval,
    }
}

/// A refresh interval: whole or fractional seconds (`300`, `0`), or a
/// number with a unit (`90s`, `5m`, `1h`, `1h30m`).
pub fn parse_interval(text: &str) -> Option<Duration> {
    let text = text.trim();
    if let Ok(seconds) = text.parse::<f64>() {
        return (0.0..1e12)
            .contains(&seconds)
            .then(|| Duration::from_secs_f64(seconds));
    }
    humantime::parse_duration(text).ok()
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
            options.url.as_str(),
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
        assert_eq!(options.url.as_str(), "http://127.0.0.1:1/x/v2/providers");
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
            options.url.as_str(),
            "https://catwalk.charm.land/v2/providers"
        );
        assert_eq!(options.timeout, DEFAULT_TIMEOUT);
        assert_eq!(options.interval, DEFAULT_INTERVAL);
        assert_eq!(warnings.len(), 3, "{warnings:?}");
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
        assert_eq!(decide(false, Some(&old), five_min, now), Decision::Offline);
        assert_eq!(decide(false, None, five_min, now), Decision::Offline);
        assert_eq!(decide(true, None, five_min, now), Decision::FetchFirst);
        assert_eq!(decide(true, Some(&recent), five_min, now), Decision::Cache);
        assert_eq!(
            decide(true, Some(&old), five_min, now),
            Decision::CacheAndRefresh
        );
        assert_eq!(
            decide(true, Some(&never), five_min, now),
            Decision::CacheAndRefresh
        );
        // A confirmation from the future (a clock set back) is not trusted.
        assert_eq!(
            decide(true, Some(&future), five_min, now),
            Decision::CacheAndRefresh
        );
        // 0 revalidates at every start.
        assert_eq!(
            decide(true, Some(&recent), Duration::ZERO, now),
            Decision::CacheAndRefresh
        );
        let just_now = cached(Some(now));
        assert_eq!(
            decide(true, Some(&just_now), Duration::ZERO, now),
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
            interruptible: false,
            keys: None,
        };
        let catalog = load(&CacheFiles::in_dir(tmp.path()), &options);
        assert_eq!(catalog.provenance, Provenance::Disabled);
        assert_eq!(&catalog.bytes[..], b"[]");
        assert!(catalog.warnings.is_empty());
        assert!(catalog.refresh.is_none());
    }
}
