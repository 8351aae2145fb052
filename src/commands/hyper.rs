//! What `providers --status` says of Hyper's provider: its cache
//! (`hyper.json`), its last refresh and what that held back, and whether
//! the start-up keeps it fresh (only with a Hyper key).

use serde::Serialize;

use super::ago;
use super::providers::LastRefresh;
use crate::catalog::Target;
use crate::config::hyper::HyperKey;
use crate::environment;
use crate::fetch::source;
use crate::startup::settings::{NotAtStartUp, at_start_up};
use crate::store::cache::{self, CacheFiles, Found};
use crate::store::digest::hex;
use crate::store::state::{self, CacheState};

/// Hyper's provider, as `--status` shows it.
#[derive(Debug, Serialize)]
pub(super) struct HyperStatus {
    /// Where the start-up refresh asks, and what said so.
    url: String,
    url_origin: String,
    cache: String,
    cache_state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    problem: Option<String>,
    source: Option<String>,
    fetched_at: Option<String>,
    age_seconds: Option<u64>,
    confirmed_at: Option<String>,
    confirmed_age_seconds: Option<u64>,
    last_refresh: Option<LastRefresh>,
    signed_at: Option<String>,
    etag: Option<String>,
    last_modified: Option<String>,
    sha256: Option<String>,
    models: Option<usize>,
    /// Where the Hyper key is set, when it is.
    key: Option<String>,
    /// Whether start-up keeps `hyper.json` fresh, and why not.
    refresh_at_start_up: String,
}

/// Reads what is known of Hyper's provider beside the catalog of
/// `files`, without any network access; `key` is the Hyper key, and
/// `network_on` whether start-up may go out.
pub(super) fn status(files: &CacheFiles, key: Option<&HyperKey>, network_on: bool) -> HyperStatus {
    let refresh_at_start_up = match at_start_up(files, key) {
        _ if !network_on => "no: start-up makes no request".to_string(),
        Ok(_) => "yes, with the Hyper key, on the catalog's interval".to_string(),
        Err(NotAtStartUp::Quiet(why) | NotAtStartUp::Told(why)) => format!("no: {why}"),
    };
    let files = files.with_target(Target::Hyper);
    let name = crate::catalog::target::url_env(Target::Hyper);
    let env_url = super::inputs::env_origin(name);
    let url = source::startup_url_for(
        Target::Hyper,
        environment::var(name).as_deref().and_then(|v| v.to_str()),
    )
    .map_or_else(
        |value| format!("none: {} is not an http(s) URL", source::redacted(&value)),
        |url| source::redacted(url.as_str()),
    );
    let mut status = HyperStatus {
        url,
        url_origin: env_url.unwrap_or_else(|| "default".into()),
        cache: files.catalog.display().to_string(),
        cache_state: "missing",
        problem: None,
        source: None,
        fetched_at: None,
        age_seconds: None,
        confirmed_at: None,
        confirmed_age_seconds: None,
        last_refresh: None,
        signed_at: None,
        etag: None,
        last_modified: None,
        sha256: None,
        models: None,
        key: key.map(key_origin),
        refresh_at_start_up,
    };
    let state = match cache::read(&files, cache::Bytes::Read) {
        Found::Unusable(e) => {
            status.cache_state = "unreadable";
            status.problem = Some(e.to_string());
            None
        }
        Found::Missing(state) => state,
        Found::Vouched(cached) | Found::Foreign(cached) => {
            status.sha256 = Some(hex(&cached.sha256));
            match Target::Hyper.validate(&cached.bytes) {
                Ok(provider) => {
                    status.cache_state = "valid";
                    status.models = Some(provider.model_count());
                }
                Err(e) => {
                    status.cache_state = "invalid";
                    status.problem = Some(e.to_string());
                }
            }
            let now = state::now();
            status.fetched_at = cached.written_at().map(state::rfc3339);
            status.age_seconds = cached.written_at().map(|at| now.saturating_sub(at));
            let validators = cached.validators();
            status.etag = validators.etag;
            status.last_modified = validators.last_modified;
            cached.state
        }
    };
    if let Some(state) = state {
        describe_state(&state, &mut status);
    }
    status
}

/// Where `key` is set, as `--status` shows it: `HYPER_API_KEY`, with the
/// `.env` file and line when it comes from one (never its value).
fn key_origin(key: &HyperKey) -> String {
    let name = crate::config::hyper::HYPER_KEY_ENV;
    match environment::source(name) {
        Some(environment::Source::DotEnv(path, line)) if key.origin == name => {
            format!("{name} at {}:{line}", path.display())
        }
        _ => key.origin.clone(),
    }
}

fn describe_state(state: &CacheState, status: &mut HyperStatus) {
    let now = state::now();
    if !state.sha256.is_empty() {
        status.source = Some(state.source.clone());
        status.confirmed_at = state.confirmed_at.map(state::rfc3339);
        status.confirmed_age_seconds = state.confirmed_at.map(|at| now.saturating_sub(at));
        status.signed_at = state.signed_at.map(state::rfc3339);
    }
    status.last_refresh = state
        .refresh
        .as_ref()
        .map(|r| LastRefresh::of(r, Target::Hyper, now));
}

impl HyperStatus {
    /// The rows of the text status, key and value.
    pub(super) fn rows(&self) -> Vec<(String, String)> {
        let state = match (self.cache_state, &self.problem) {
            ("valid", _) => String::new(),
            ("missing", _) => " (none: Crush uses its own embedded Hyper provider)".to_string(),
            (other, Some(problem)) => format!(" ({other}: {problem})"),
            (other, None) => format!(" ({other})"),
        };
        let mut rows = vec![("hyper".to_string(), format!("{}{state}", self.cache))];
        let mut add = |key: &str, value: Option<String>| {
            let key = match key {
                "" => String::new(),
                key => format!("hyper {key}"),
            };
            rows.extend(value.map(|v| (key, v)));
        };
        let aged = |at: &Option<String>, age: Option<u64>| {
            at.as_ref().map(|at| {
                format!(
                    "{at}{}",
                    age.map(|a| format!(" ({})", ago(a))).unwrap_or_default()
                )
            })
        };
        add("source", self.source.clone());
        add("fetched", aged(&self.fetched_at, self.age_seconds));
        add(
            "confirmed",
            aged(&self.confirmed_at, self.confirmed_age_seconds),
        );
        for (key, value) in self.last_refresh.iter().flat_map(LastRefresh::rows) {
            add(key, Some(value));
        }
        add("signed", self.signed_at.clone());
        add("etag", self.etag.clone());
        add("last-modified", self.last_modified.clone());
        add("models", self.models.map(|m| super::count(m, "model")));
        add("url", Some(format!("{} ({})", self.url, self.url_origin)));
        add("key", Some(self.key.clone().unwrap_or("none".into())));
        add("at start-up", Some(self.refresh_at_start_up.clone()));
        rows
    }
}
