//! The start-up policy: what Crush calls when it starts. It refreshes the
//! cache with one conditional request when automatic updates are on, falls
//! back to the cache and then to the embedded snapshot, and never fails.

use std::borrow::Cow;
use std::time::Duration;

use reqwest::Url;

use crate::cache::{self, CacheFiles, CacheState, Cached};
use crate::catalog::{self, hex};
use crate::embedded;
use crate::http::{self, FetchOptions, Fetched};
use crate::source;
use crate::validators::Validators;

/// Default bound on the whole start-up refresh.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// Bound on establishing the connection at start-up.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// How long start-up waits for another writer of the cache; past it the
/// fresh catalog is used without being saved.
const LOCK_WAIT: Duration = Duration::from_secs(2);
/// Environment variable that changes [`DEFAULT_TIMEOUT`] (seconds).
pub const TIMEOUT_ENV: &str = "CRUSH_PROVIDER_TIMEOUT";

/// What the start-up policy needs to know.
#[derive(Debug, Clone)]
pub struct StartupOptions {
    /// `provider-auto-update`.
    pub auto_update: bool,
    /// `default-providers`: when off the catalog is empty.
    pub default_providers: bool,
    /// The catalog URL to refresh from.
    pub url: Url,
    /// Bound on the whole refresh.
    pub timeout: Duration,
}

/// Where the catalog returned at start-up came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Provenance {
    /// Just downloaded and written to the cache.
    Fresh,
    /// The cache, confirmed current by the server (304).
    Revalidated,
    /// The cache, without asking the server (updates off, or it failed).
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
    /// Where the cached bytes were originally fetched from, when known.
    pub source: Option<String>,
    /// What went wrong on the way, one line each; never fatal.
    pub warnings: Vec<String>,
}

/// The hint appended to every start-up refresh warning.
pub const REFRESH_HINT: &str = "to stop refreshing at start-up set `option provider-auto-update false` in a crushrc or CRUSH_DISABLE_PROVIDER_AUTO_UPDATE=1; to update by hand run `crush update-providers`";

/// Loads the catalog for start-up. Never fails: every problem becomes a
/// warning and a fallback.
pub fn load(files: &CacheFiles, options: &StartupOptions) -> StartupCatalog {
    let mut warnings = Vec::new();
    if !options.default_providers {
        return StartupCatalog {
            bytes: Cow::Borrowed(b"[]"),
            sha256: None,
            provenance: Provenance::Disabled,
            fetched_at: None,
            source: None,
            warnings,
        };
    }
    let cached = read_valid_cache(files, &mut warnings);
    if !options.auto_update {
        return fallback(cached, warnings);
    }
    let conditional = cached.as_ref().map(Cached::validators).unwrap_or_default();
    let fetch = FetchOptions {
        timeout: options.timeout,
        connect_timeout: CONNECT_TIMEOUT.min(options.timeout),
        conditional,
        progress: false,
        max_body: http::MAX_BODY_BYTES,
    };
    let failure = match http::fetch(&options.url, &fetch) {
        Ok(Fetched::NotModified) => {
            // `fetch` only accepts a 304 to a conditional request, which is
            // only sent when there is a cache.
            if let Some(cached) = cached {
                return from_cache(cached, Provenance::Revalidated, warnings);
            }
            "the server answered 304 Not Modified without a cache to confirm".to_string()
        }
        Ok(Fetched::Body { bytes, validators }) => match catalog::validate(&bytes) {
            Ok(_) => {
                let digest = catalog::sha256(&bytes);
                // A server that ignores validators may send the same bytes
                // again: then only the state (its new validators) is worth
                // writing.
                let save = match cached {
                    Some(cached) if cached.sha256 == digest => Save::State(cached.identity),
                    _ => Save::All,
                };
                return fresh(files, options, bytes, digest, save, validators, warnings);
            }
            Err(e) => format!("not a valid catalog: {e}"),
        },
        Err(e) => e.to_string(),
    };
    warnings.push(format!(
        "could not refresh the provider catalog from {}: {failure}; using the {}; {REFRESH_HINT}",
        options.url,
        if cached.is_some() {
            "cached catalog"
        } else {
            "embedded catalog"
        }
    ));
    fallback(cached, warnings)
}

/// The cache, when it holds a valid catalog. A state file that matches the
/// bytes proves they were validated when written, which spares parsing them
/// on every start.
fn read_valid_cache(files: &CacheFiles, warnings: &mut Vec<String>) -> Option<Cached> {
    let cached = match cache::read(files) {
        Ok(cached) => cached?,
        Err(e) => {
            warnings.push(format!(
                "cannot read the cached catalog {}: {e}; ignoring it",
                files.catalog.display()
            ));
            return None;
        }
    };
    if cached.state.is_some() {
        return Some(cached);
    }
    match catalog::validate(&cached.bytes) {
        Ok(_) => Some(cached),
        Err(e) => {
            warnings.push(format!(
                "the cached catalog {} is not valid ({e}); ignoring it",
                files.catalog.display()
            ));
            None
        }
    }
}

/// What a fresh catalog needs written.
enum Save {
    /// Only the state: the cache already holds these bytes, with this
    /// identity.
    State(Option<String>),
    /// The bytes.
    All,
}

fn fresh(
    files: &CacheFiles,
    options: &StartupOptions,
    bytes: Vec<u8>,
    digest: [u8; 32],
    save: Save,
    validators: Validators,
    mut warnings: Vec<String>,
) -> StartupCatalog {
    let state = CacheState {
        sha256: hex(&digest),
        file: None,
        validators,
        source: options.url.to_string(),
        fetched_at: cache::now(),
    };
    let result = match save {
        Save::State(identity) => {
            let state = CacheState {
                file: identity,
                ..state.clone()
            };
            cache::record_state(files, &state, LOCK_WAIT)
        }
        Save::All => cache::write(files, &bytes, &state, LOCK_WAIT),
    };
    if let Err(e) = result {
        warnings.push(format!(
            "could not save the refreshed catalog: {e}; it is used for this run only"
        ));
    }
    StartupCatalog {
        bytes: Cow::Owned(bytes),
        sha256: Some(digest),
        provenance: Provenance::Fresh,
        fetched_at: Some(state.fetched_at),
        source: Some(state.source),
        warnings,
    }
}

fn from_cache(cached: Cached, provenance: Provenance, warnings: Vec<String>) -> StartupCatalog {
    StartupCatalog {
        fetched_at: cached.written_at(),
        source: cached.state.as_ref().map(|s| s.source.clone()),
        sha256: Some(cached.sha256),
        bytes: Cow::Owned(cached.bytes),
        provenance,
        warnings,
    }
}

fn fallback(cached: Option<Cached>, warnings: Vec<String>) -> StartupCatalog {
    match cached {
        Some(cached) => from_cache(cached, Provenance::Cached, warnings),
        None => embedded(warnings),
    }
}

fn embedded(warnings: Vec<String>) -> StartupCatalog {
    StartupCatalog {
        bytes: Cow::Borrowed(embedded::catalog_bytes()),
        sha256: None,
        provenance: Provenance::Embedded,
        fetched_at: None,
        source: None,
        warnings,
    }
}

/// The start-up refresh URL from `CATWALK_URL` (or the default), and the
/// timeout from `CRUSH_PROVIDER_TIMEOUT`. Bad values become warnings and
/// defaults: start-up must not fail on them.
pub fn options_from_env(
    catwalk_url: Option<&str>,
    timeout: Option<&str>,
    warnings: &mut Vec<String>,
) -> (Url, Duration) {
    let url = match source::resolve(None, catwalk_url) {
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
    let timeout = match timeout {
        None => DEFAULT_TIMEOUT,
        Some(text) => match http::parse_seconds(text) {
            Ok(timeout) => timeout,
            Err(_) => {
                warnings.push(format!(
                    "{TIMEOUT_ENV}={text:?} is not a positive number of seconds; using {}",
                    DEFAULT_TIMEOUT.as_secs()
                ));
                DEFAULT_TIMEOUT
            }
        },
    };
    (url, timeout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_options_default_and_warn() {
        let mut warnings = Vec::new();
        let (url, timeout) = options_from_env(None, None, &mut warnings);
        assert_eq!(url.as_str(), "https://catwalk.charm.land/v2/providers");
        assert_eq!(timeout, DEFAULT_TIMEOUT);
        assert!(warnings.is_empty());
        let (url, timeout) =
            options_from_env(Some("http://127.0.0.1:1/x/"), Some("0.25"), &mut warnings);
        assert_eq!(url.as_str(), "http://127.0.0.1:1/x/v2/providers");
        assert_eq!(timeout, Duration::from_millis(250));
        let (url, timeout) = options_from_env(Some("ftp://x"), Some("-1"), &mut warnings);
        assert_eq!(url.as_str(), "https://catwalk.charm.land/v2/providers");
        assert_eq!(timeout, DEFAULT_TIMEOUT);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
    }

    #[test]
    fn disabled_default_providers_is_empty_without_network() {
        let tmp = tempfile::tempdir().unwrap();
        let options = StartupOptions {
            auto_update: true,
            default_providers: false,
            url: "http://127.0.0.1:1/v2/providers".parse().unwrap(),
            timeout: DEFAULT_TIMEOUT,
        };
        let catalog = load(&CacheFiles::in_dir(tmp.path()), &options);
        assert_eq!(catalog.provenance, Provenance::Disabled);
        assert_eq!(&catalog.bytes[..], b"[]");
        assert!(catalog.warnings.is_empty());
    }
}
