//! The start-up settings that come from the environment.

use std::time::Duration;

use reqwest::Url;

use super::{DEFAULT_INTERVAL, DEFAULT_TIMEOUT, INTERVAL_ENV, TIMEOUT_ENV, Warning};
use crate::fetch::{http, source};

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
    let url = source::startup_url(env("CATWALK_URL").as_deref());
    if let Err(value) = &url {
        let value = value.clone();
        warnings.push(Warning::NotHttp { value });
    }
    let timeout = env(TIMEOUT_ENV).map_or(Some(DEFAULT_TIMEOUT), |value| {
        let timeout = http::parse_seconds(&value).ok();
        warnings.extend(timeout.is_none().then_some(Warning::BadTimeout { value }));
        timeout
    });
    let interval = env(INTERVAL_ENV).map(|value| {
        let interval = parse_interval(&value);
        let origin = format!("{INTERVAL_ENV}={value}");
        warnings.extend(interval.is_none().then_some(Warning::BadInterval { value }));
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
