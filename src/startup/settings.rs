//! The start-up's options built from the settings, in one call
//! ([`StartupOptions::from_settings`]), as Crush's start reads them: the
//! environment's URL, bound and interval, the pinned keys (one that
//! cannot be read means no refresh), whether the start may go out, and
//! Hyper's provider beside the catalog, with what it tells.

use super::network::{self, Network};
use super::{Background, EnvOptions, HyperOptions, StartupOptions, Warning, options_from_env};
use crate::catalog::target::{DEFAULT_CATWALK_URL, url_env};
use crate::catalog::{Target, quoted};
use crate::config::hyper::HyperKey;
use crate::config::{self, Settings, shown, shown_path};
use crate::environment::{self, Source};
use crate::error::{Cause, Failure};
use crate::fetch::credential::Routed;
use crate::fetch::http::Bearer;
use crate::fetch::source::{self, redacted};
use crate::store::cache::CacheFiles;
use crate::store::paths::process_env;
use crate::trust::signature::TrustedKeys;

/// The start-up's options built from the settings, and what building them
/// found.
#[derive(Debug)]
pub struct Prepared {
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
    pub fn from_settings(settings: &Settings, files: &CacheFiles) -> Prepared {
        let mut warnings = Vec::new();
        let env = env_options(&mut warnings);
        // A pinned key that cannot be read must not leave catalogs
        // unchecked: no refresh until it is fixed.
        let keys = pinned_keys(settings).map_err(|failure| {
            let bad = failure.to_string();
            warnings.push(Warning::BadKey { failure });
            bad
        });
        let network = network::decide(settings, &env.url, keys.clone().err());
        let (auto_update, url) = match &network {
            Network::Allowed(url) => (true, url.clone()),
            // Never used: no request is made.
            Network::Off(_) => (
                false,
                source::catalog_url(DEFAULT_CATWALK_URL).expect("valid"),
            ),
        };
        warnings.extend(
            auto_update
                .then(|| routed(Target::Catalog, &url, false))
                .flatten(),
        );
        let hyper = auto_update.then(|| hyper_options(settings, files, &mut warnings));
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
            hyper: hyper.flatten(),
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
        let scheme = value.get(..8).unwrap_or(&value).to_ascii_lowercase();
        let why = match scheme.starts_with("http://") || scheme.starts_with("https://") {
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

/// Hyper's provider for the start-up on `files` to keep fresh
/// ([`at_start_up`]), what makes it none told.
fn hyper_options(
    settings: &Settings,
    files: &CacheFiles,
    warnings: &mut Vec<Warning>,
) -> Option<HyperOptions> {
    let key = config::hyper::hyper_key_in(settings, &process_env);
    match at_start_up(files, key.as_ref()) {
        Ok(options) => {
            warnings.extend(routed(Target::Hyper, &options.url, true));
            Some(options)
        }
        Err(NotAtStartUp::Told(why)) => {
            warnings.push(Warning::HyperNotRefreshed { why });
            None
        }
        Err(NotAtStartUp::Quiet(_)) => None,
    }
}

/// What a start says of its refresh of `target` from `url` when it
/// carries a credential (`bearer`: the Hyper key) and a project's `.env`
/// sets its proxy or CA: it goes without them (the HTTP client of such a
/// request reads the user's own environment alone).
fn routed(target: Target, url: &reqwest::Url, bearer: bool) -> Option<Warning> {
    Routed::of(url, bearer, None).map(|routed| Warning::Routed { target, routed })
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
