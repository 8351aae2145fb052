//! The start-up's options built from the settings, in one call
//! ([`StartupOptions::from_settings`]), as Crush's start reads them: the
//! environment's URL, bound and interval ([`options_from_env`]), the
//! pinned keys (one that
//! cannot be read means no refresh), whether the start may go out, and
//! Hyper's provider beside the catalog, with what it tells.

use std::time::Duration;

use reqwest::Url;

use super::network::{self, Network};
use super::{Background, HyperOptions, StartupOptions, Warning};
use super::{DEFAULT_INTERVAL, DEFAULT_TIMEOUT, INTERVAL_ENV, TIMEOUT_ENV};
use crate::catalog::target::{DEFAULT_CATWALK_URL, url_env};
use crate::catalog::{Target, quoted};
use crate::config::hyper::HyperKey;
use crate::config::{Settings, shown, shown_path};
use crate::environment::{self, Source};
use crate::error::{Cause, Failure};
use crate::fetch::credential::Routed;
use crate::fetch::http::{self, Bearer};
use crate::fetch::source::{self, redacted};
use crate::store::cache::CacheFiles;
use crate::store::paths::process_env;
use crate::trust::signature::TrustedKeys;

/// The start-up's options built from the settings, and what building them
/// found.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// The options. Refreshes run on a thread of this process
    /// ([`Background::Thread`]), are not waited for and report no
    /// progress: a caller that wants otherwise changes `background`,
    /// `wait` and `watch`.
    pub options: StartupOptions,
    /// What building them found worth telling: a variable that cannot be
    /// used, a pinned key that cannot be read (then no refresh), a Hyper
    /// URL the start does not send the key to.
    pub warnings: Vec<Warning>,
    /// The start-up settings of the environment, as read.
    pub env: EnvOptions,
    /// Whether the start may go out, and why not.
    pub(crate) network: Network,
}

impl StartupOptions {
    /// The start-up's options for the cache `files` from `settings` and
    /// the environment, as the `crush` command line builds them for every
    /// start: `provider-auto-update`, `default-providers` and the pinned
    /// keys of the settings, `CATWALK_URL` and the refresh's bound and
    /// interval of the environment, and Hyper's provider when a Hyper key
    /// is configured. Never fails: what cannot be used is a warning, and a
    /// pinned key that cannot be read turns the refresh off.
    pub(crate) fn from_settings(settings: &Settings, files: &CacheFiles) -> Prepared {
        let mut warnings = Vec::new();
        let env = env_options(&mut warnings);
        // A pinned key that cannot be read must not leave catalogs
        // unchecked: no refresh until it is fixed.
        let keys = pinned_keys(settings).map_err(|failure| {
            let bad = failure.to_string();
            warnings.push(Warning::BadKey(failure));
            bad
        });
        let network = network::decide(settings, &env.url, keys.clone().err());
        let (auto_update, url) = match &network {
            Network::Allowed(url) => (true, url.clone()),
            // Never used: no request is made.
            Network::Off(_) => (
                false,
                source::document_url(Target::Catalog, DEFAULT_CATWALK_URL).expect("valid"),
            ),
        };
        let mut hyper = None;
        if auto_update {
            warnings.extend(routed(Target::Catalog, &url, false));
            match at_start_up(files, settings.hyper_key.as_ref()) {
                Ok(options) => {
                    warnings.extend(routed(Target::Hyper, &options.url, true));
                    hyper = Some(options);
                }
                Err(NotAtStartUp::Told(why)) => warnings.push(Warning::HyperNotRefreshed(why)),
                Err(NotAtStartUp::Quiet(_)) => {}
            }
        }
        let options = StartupOptions {
            auto_update,
            default_providers: settings.default_providers.value,
            url,
            timeout: env.timeout,
            interval: env.interval,
            background: Background::Thread,
            wait: false,
            watch: Default::default(),
            keys: keys.unwrap_or(None),
            hyper,
        };
        Prepared {
            options,
            warnings,
            env,
            network,
        }
    }
}

/// Why a start does not refresh Hyper's provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NotAtStartUp {
    /// Nothing to tell at a start (no key, or one only a shell knows).
    Quiet(String),
    /// Told at every start: where it would ask cannot be used.
    Told(String),
}

/// Hyper's provider for the start-up beside the catalog of `files` to
/// keep fresh, `key` being the Hyper key: when its value is known (one
/// only a shell could tell is not sent, and nothing is fetched without
/// it), from `HYPER_URL` when it is an http(s) URL Go reads (else
/// nowhere), else Hyper's server. A `HYPER_URL` of a project's `.env`
/// gets the key only at a place it is known to go
/// ([`crate::trust::hyper::is_known_place`]): nothing automatic sends a
/// key to a place a project's file names.
pub(crate) fn at_start_up(
    files: &CacheFiles,
    key: Option<&HyperKey>,
) -> Result<HyperOptions, NotAtStartUp> {
    use NotAtStartUp::{Quiet, Told};
    let Some(key) = key else {
        let why = "no Hyper key is set (HYPER_API_KEY, providers.hyper.api_key)";
        return Err(Quiet(why.into()));
    };
    let Some(secret) = &key.value else {
        let why =
            "the Hyper key is set by a command only a shell can run, so its value is not known";
        return Err(Quiet(why.into()));
    };
    // Go refuses to send such a header too: the request fails.
    if reqwest::header::HeaderValue::from_str(&format!("Bearer {secret}")).is_err() {
        return Err(Told(format!(
            "the Hyper key of {} holds a line break or another control character, which no HTTP header can carry: Hyper's provider is not refreshed; remove it from the key there",
            shown(&key.origin)
        )));
    }
    let name = url_env(Target::Hyper);
    let value = environment::var(name).map(|v| v.to_string_lossy().into_owned());
    let url = source::startup_url_for(Target::Hyper, value.as_deref()).map_err(|value| {
        let shown = quoted(&redacted(&value));
        let why = match source::is_http(&value) {
            // An http(s) URL all the same: Go refuses it for another reason.
            true => "is a URL Go refuses (a control character, or a space or backslash before the path)",
            false => "is not an http:// or https:// URL",
        };
        Told(format!(
            "{name}={shown} {why}: Hyper's provider is not refreshed at start-up (Crush's request with it fails too)"
        ))
    })?;
    let from_dotenv = matches!(environment::source(name), Some(Source::DotEnv(..)));
    if from_dotenv && !crate::trust::hyper::is_known_place(files, &url) {
        let origin = env_origin(name).unwrap_or_else(|| name.into());
        return Err(Told(format!(
            "{origin} is not a place the Hyper key is known to go, so the start-up does not send it there: Hyper's provider is not refreshed (a project's .env does not choose where the key goes); set HYPER_URL in your own environment to refresh it from there, or remove it from that file"
        )));
    }
    let key = Bearer(secret.clone());
    Ok(HyperOptions { url, key })
}

/// Where the environment variable `name` came from, with its value:
/// `NAME=value`, `NAME=value at /path/.env:3`, or `None` when unset.
pub(crate) fn env_origin(name: &str) -> Option<String> {
    let value = shown(&redacted(&environment::var(name)?.to_string_lossy()));
    Some(match environment::source(name) {
        Some(Source::DotEnv(path, line)) => {
            format!("{name}={value} at {}:{line}", shown_path(&path))
        }
        _ => format!("{name}={value}"),
    })
}

/// What a start says of its refresh of `target` from `url` when it
/// carries a credential (`bearer`: the Hyper key) and a project's `.env`
/// sets its proxy or CA: it goes without them (the HTTP client of such a
/// request reads the user's own environment alone).
fn routed(target: Target, url: &Url, bearer: bool) -> Option<Warning> {
    Routed::of(url, bearer, None).map(|routed| Warning::Routed(target, routed))
}

/// The start-up's options from the environment.
pub(crate) fn env_options(warnings: &mut Vec<Warning>) -> EnvOptions {
    let env = |name: &str| process_env(name).map(|v| v.to_string_lossy().into_owned());
    options_from_env(env, warnings)
}

/// The pinned keys of `settings`; one that cannot be read is a failure
/// naming where it was set, never a key silently dropped.
pub fn pinned_keys(settings: &Settings) -> Result<Option<TrustedKeys>, Failure> {
    let Some(pinned) = &settings.public_keys else {
        return Ok(None);
    };
    TrustedKeys::parse(&pinned.entries)
        .map_err(|e| Failure::new(pinned.origin.to_string(), Cause::Key(e)))
}

/// The start-up settings that come from the environment, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvOptions {
    /// The catalog to refresh from: `CATWALK_URL`, else the default
    /// Catwalk server; `Err` holds a `CATWALK_URL` that is not an http(s)
    /// URL, with which no refresh is made.
    pub url: Result<Url, String>,
    /// From [`TIMEOUT_ENV`], else [`DEFAULT_TIMEOUT`].
    pub timeout: Duration,
    /// From [`INTERVAL_ENV`], else [`DEFAULT_INTERVAL`].
    pub interval: Duration,
    /// Where the interval came from: `default`, or `NAME=value`.
    pub interval_origin: String,
}

/// Reads the start-up settings from the environment (`env` looks up one
/// variable). Bad values become warnings and defaults: start-up must not
/// fail on them.
pub fn options_from_env(
    env: impl Fn(&str) -> Option<String>,
    warnings: &mut Vec<Warning>,
) -> EnvOptions {
    let url = source::startup_url_for(Target::Catalog, env("CATWALK_URL").as_deref());
    if let Err(value) = &url {
        warnings.push(Warning::NotHttp(value.clone()));
    }
    let timeout = env(TIMEOUT_ENV).map_or(Some(DEFAULT_TIMEOUT), |value| {
        let timeout = http::parse_seconds(&value).ok();
        warnings.extend(timeout.is_none().then_some(Warning::BadTimeout(value)));
        timeout
    });
    let interval = env(INTERVAL_ENV).map(|value| {
        let interval = parse_interval(&value);
        let origin = format!("{INTERVAL_ENV}={value}");
        warnings.extend(interval.is_none().then_some(Warning::BadInterval(value)));
        interval.map(|interval| (interval, origin))
    });
    let (interval, interval_origin) = interval
        .flatten()
        .unwrap_or((DEFAULT_INTERVAL, "default".into()));
    EnvOptions {
        url,
        timeout: timeout.unwrap_or(DEFAULT_TIMEOUT),
        interval,
        interval_origin,
    }
}

/// A refresh interval: whole or fractional seconds (`300`, `0`), or a
/// number with a unit (`90s`, `5m`, `1h`, `1h30m`).
pub(crate) fn parse_interval(text: &str) -> Option<Duration> {
    let text = text.trim();
    if let Ok(seconds) = text.parse::<f64>() {
        return (0.0..1e12)
            .contains(&seconds)
            .then(|| Duration::from_secs_f64(seconds));
    }
    humantime::parse_duration(text).ok()
}
