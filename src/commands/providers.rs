//! `crush providers`: the start-up catalog's providers, or with `--status`
//! what the cache and the settings are, without any network access.

use std::io::{self, Write};

use serde::Serialize;

use super::context::{self, Context, cache_files};
use super::program;
use super::terminal;
use super::{Exit, Table, ago, count, inputs, listed, print, warn, write_catalog, write_json};
use crate::catalog::embedded;
use crate::catalog::escape::safe;
use crate::catalog::{self, Catalog, Target};
use crate::commands::cli::ProvidersArgs;
use crate::config::{Disagreement, Setting, Settings};
use crate::startup::network;
use crate::startup::{self, Provenance, StartupCatalog};
use crate::store::cache::{self, CacheFiles, Cached, Found};
use crate::store::digest;
use crate::store::state::{self, RefreshRecord};
use crate::trust::memory;
use unicode_width::UnicodeWidthStr;

/// `crush providers`.
pub(super) fn run(context: &Context, args: &ProvidersArgs) -> Result<(), Exit> {
    let settings = context.settings()?;
    let files = cache_files()?;
    if args.status {
        return status(&settings, &files, args.json);
    }
    let loaded = context.startup(&settings, &files, args.wait)?;
    if args.json {
        return print(|out| write_catalog(out, &loaded.bytes));
    }
    let Some(catalog) = listed(&loaded, &settings, "providers", false)? else {
        return Ok(());
    };
    print(|out| write_providers(out, context, &loaded, &catalog))
}

fn write_providers(
    out: &mut impl Write,
    context: &Context,
    loaded: &StartupCatalog,
    catalog: &Catalog<'_>,
) -> io::Result<()> {
    let text = |t: Option<&catalog::Text<'_>>| t.map_or("", |t| t.as_str()).to_owned();
    // On a pipe, one provider a line, its fields separated by tabs, for a
    // script (`cut -f1`); where the catalog came from, with `--debug`.
    let Some(width) = terminal::stdout_width() else {
        context.say_debug(header(loaded));
        for p in &catalog.providers {
            let fields = [
                text(Some(&p.id)),
                text(Some(&p.name)),
                text(p.kind.as_ref()),
                p.models().len().to_string(),
            ];
            let fields: Vec<String> = fields.iter().map(|f| safe(f).into_owned()).collect();
            writeln!(out, "{}", fields.join("\t"))?;
        }
        return Ok(());
    };
    writeln!(
        out,
        "{}",
        terminal::wrap(&safe(&header(loaded)), Some(width), "  ")
    )?;
    let rows: Vec<[String; 4]> = catalog
        .providers
        .iter()
        .map(|p| {
            [
                text(Some(&p.id)),
                text(Some(&p.name)),
                text(p.kind.as_ref()),
                p.models().len().to_string(),
            ]
        })
        .collect();
    Table {
        head: ["ID", "NAME", "TYPE", "MODELS"],
        rows: &rows,
        droppable: &[2],
    }
    .write(out, Some(width))
}

fn header(loaded: &StartupCatalog) -> String {
    let now = state::now();
    let from = loaded
        .source
        .as_deref()
        .map(|s| format!(" from {s}"))
        .unwrap_or_default();
    match loaded.provenance {
        Provenance::Fresh => format!("Providers: fresh{from}, fetched just now"),
        Provenance::Cached => {
            let when = |t: Option<u64>| {
                t.map(|t| format!(" {}", ago(now.saturating_sub(t))))
                    .unwrap_or_default()
            };
            let written = when(loaded.fetched_at);
            let embedded_source = crate::fetch::source::Source::Embedded.to_string();
            let origin = match loaded.source.as_deref() {
                Some(s) if s == embedded_source => format!(
                    "the embedded snapshot ({}), installed in the cache{written}",
                    embedded::origin()
                ),
                Some(s) if s.starts_with("http://") || s.starts_with("https://") => {
                    format!("cached, fetched from {s}{written}")
                }
                Some(s) => format!("cached, read from {s}{written}"),
                None => format!("cached, written{written} by another program"),
            };
            // Only a server confirms a catalog current.
            let confirmed = loaded
                .confirmed_at
                .filter(|_| origin.starts_with("cached, fetched"))
                .map(|t| format!(", confirmed current{}", when(Some(t))))
                .unwrap_or_default();
            let refreshing = if loaded.refreshing {
                "; refreshing in the background"
            } else {
                ""
            };
            format!("Providers: {origin}{confirmed}{refreshing}")
        }
        Provenance::Embedded if loaded.refreshing => format!(
            "Providers: embedded snapshot ({}); fetching the current catalog in the background",
            embedded::origin()
        ),
        Provenance::Embedded => format!("Providers: embedded snapshot ({})", embedded::origin()),
        Provenance::Disabled => "No providers".into(),
    }
}

/// `providers --status` as JSON.
#[derive(Debug, Serialize)]
struct Status {
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
    /// What is remembered of where keys went.
    memory: memory::Summary,
    public_keys: Option<PinnedJson>,
    refresh_interval_seconds: f64,
    refresh_interval_origin: String,
    etag: Option<String>,
    last_modified: Option<String>,
    sha256: Option<String>,
    providers: Option<usize>,
    models: Option<usize>,
    embedded_snapshot: &'static str,
    provider_auto_update: SettingJson,
    default_providers: SettingJson,
    /// The real Crush this program stands in front of, when invoked as
    /// `crush`.
    #[serde(skip_serializing_if = "Option::is_none")]
    crush: Option<super::front::Status>,
    /// Hyper's provider, `hyper.json`.
    hyper: super::hyper::HyperStatus,
    /// Every other input, and where it came from.
    #[serde(flatten)]
    inputs: inputs::Inputs,
}

/// The last automatic refresh, as `--status` shows it.
#[derive(Debug, Serialize)]
pub(super) struct LastRefresh {
    at: String,
    age_seconds: u64,
    url: String,
    outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    cause: Option<String>,
    /// What a held refresh held back, one change a line.
    #[serde(skip_serializing_if = "Option::is_none")]
    held: Option<Vec<String>>,
    /// The commands that review it, apply it or keep the catalog in use.
    #[serde(skip_serializing_if = "Option::is_none")]
    accept: Option<String>,
    /// Whether a person kept the catalog in use over what was held.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    kept: bool,
}

impl LastRefresh {
    /// The record `r` of a refresh of `target`'s document, as of `now`.
    pub(super) fn of(r: &RefreshRecord, target: Target, now: u64) -> LastRefresh {
        LastRefresh {
            at: state::rfc3339(r.at),
            age_seconds: now.saturating_sub(r.at),
            url: r.url.clone(),
            outcome: r.outcome.word(),
            cause: r.cause.clone(),
            held: r.held.as_ref().map(|h| h.changes.clone()),
            accept: r
                .held
                .as_ref()
                .filter(|h| !h.kept)
                .map(|h| startup::held_hint_for(program(), target, &r.url, &h.needs)),
            kept: r.held.as_ref().is_some_and(|h| h.kept),
        }
    }

    /// Its rows of the text status: how it ended, what it held back, and
    /// the commands that settle it (or that a person settled it).
    pub(super) fn rows(&self) -> Vec<(&'static str, String)> {
        let cause = self
            .cause
            .as_ref()
            .map(|c| format!(": {c}"))
            .unwrap_or_default();
        let outcome = format!(
            "{} {} from {}{cause}",
            self.outcome,
            ago(self.age_seconds),
            self.url
        );
        let held = self.held.iter().flatten().enumerate();
        std::iter::once(("last refresh", outcome))
            .chain(held.map(|(i, f)| (if i == 0 { "held back" } else { "" }, f.clone())))
            .chain(
                self.accept
                    .iter()
                    .flat_map(|a| a.lines())
                    .enumerate()
                    .map(|(i, command)| {
                        let label = if i == 0 { "to settle it" } else { "" };
                        (label, command.trim().to_owned())
                    }),
            )
            .chain(self.kept.then(|| {
                (
                    "settled",
                    "kept the one in use over it; a refresh bringing it again says nothing"
                        .to_string(),
                )
            }))
            .collect()
    }
}

/// The pinned keys, as `--status` shows them.
#[derive(Debug, Serialize)]
struct PinnedJson {
    keys: Vec<String>,
    origin: String,
}

#[derive(Debug, Serialize)]
struct SettingJson {
    value: bool,
    origin: String,
    /// Each order's value, when the two orders of the files differ.
    #[serde(skip_serializing_if = "Option::is_none")]
    orders: Option<OrdersJson>,
}

#[derive(Debug, Serialize)]
struct ValueJson {
    value: bool,
    origin: String,
}

/// A setting by each order of the files, and the order that keeps the
/// network off (`spec` or `crush_v0_90`).
#[derive(Debug, Serialize)]
struct OrdersJson {
    spec: ValueJson,
    crush_v0_90: ValueJson,
    kept_off_by: &'static str,
}

impl SettingJson {
    fn of(setting: &Setting, orders: Option<&Disagreement>) -> SettingJson {
        let value = |s: &Setting| ValueJson {
            value: s.value,
            origin: s.origin.to_string(),
        };
        SettingJson {
            value: setting.value,
            origin: setting.origin.to_string(),
            orders: orders.map(|both| OrdersJson {
                spec: value(&both.spec),
                crush_v0_90: value(&both.crush_v090),
                kept_off_by: both.kept_off_by().key(),
            }),
        }
    }
}

fn status(settings: &Settings, files: &CacheFiles, json: bool) -> Result<(), Exit> {
    let cached = cache::read(files, cache::Bytes::Read);
    let mut warnings = Vec::new();
    let env = context::env_options(&mut warnings);
    for warning in &warnings {
        warn(warning);
    }
    let bad_key = context::pinned_keys(settings).err().map(|f| f.to_string());
    let network = network::decide(settings, &env.url, bad_key);
    let mut status = Status {
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
        memory: memory::summary(files, None),
        public_keys: settings.public_keys.as_ref().map(|p| PinnedJson {
            keys: p.entries.clone(),
            origin: p.origin.to_string(),
        }),
        refresh_interval_seconds: env.interval.as_secs_f64(),
        refresh_interval_origin: env.interval_origin.clone(),
        etag: None,
        last_modified: None,
        sha256: None,
        providers: None,
        models: None,
        embedded_snapshot: embedded::origin(),
        provider_auto_update: SettingJson::of(
            &settings.auto_update,
            settings.auto_update_orders.as_ref(),
        ),
        default_providers: SettingJson::of(
            &settings.default_providers,
            settings.default_providers_orders.as_ref(),
        ),
        crush: super::front::status(settings),
        hyper: super::hyper::status(
            files,
            crate::config::hyper::hyper_key_in(settings, &crate::store::paths::process_env)
                .as_ref(),
            matches!(network, network::Network::Allowed(_)),
        ),
        inputs: inputs::gather(settings, &env, &network),
    };
    match &cached {
        Found::Unusable(e) => {
            status.cache_state = match e {
                cache::CacheError::Read { .. } => "unreadable",
                _ => "untrusted",
            };
            status.problem = Some(e.to_string());
        }
        Found::Missing(_) => {}
        Found::Vouched(cached) | Found::Foreign(cached) => {
            describe_cache(cached, &mut status, files)
        }
    }
    print(|out| {
        if json {
            write_json(out, &status)
        } else {
            write_status(out, &status, settings)
        }
    })
}

/// One row of `--status`, `key: value`; a value too long for the
/// terminal wraps under itself.
fn status_row(
    out: &mut impl Write,
    width: Option<usize>,
    key: &str,
    value: String,
) -> io::Result<()> {
    let key = if key.is_empty() {
        String::new()
    } else {
        format!("{key}:")
    };
    // A source, a cause, a finding: from a server or the state file.
    let value = safe(&value);
    let line = format!("{key:<21} {value}");
    let wrapped = terminal::wrap(&line, width, &" ".repeat(22));
    // A word too long for the value's column (a digest, a path) goes on a
    // line of its own under the key, rather than past the edge.
    let fits = width.is_none_or(|w| wrapped.lines().all(|l| l.width() <= w));
    if fits {
        writeln!(out, "{wrapped}")
    } else {
        let value = terminal::wrap(&format!("  {value}"), width, "  ");
        writeln!(out, "{key}\n{value}")
    }
}

/// The pinned public keys and where they come from: the variable, not its
/// value again (the keys are just before).
fn pinned_keys_row(pinned: &PinnedJson) -> String {
    let env = format!("{}=", crate::trust::signature::KEYS_ENV);
    let origin = match pinned.origin.strip_prefix(&env) {
        Some(_) => crate::trust::signature::KEYS_ENV,
        None => pinned.origin.as_str(),
    };
    format!("{} (from {origin})", pinned.keys.join(", "))
}

fn write_status(out: &mut impl Write, status: &Status, settings: &Settings) -> io::Result<()> {
    let width = terminal::stdout_width();
    let mut row = |key: &str, value: String| status_row(&mut *out, width, key, value);
    let state = match (status.cache_state, &status.problem) {
        ("valid", _) => String::new(),
        ("missing", _) => " (none: the embedded snapshot is used)".to_string(),
        (_, Some(problem)) => format!(" ({}: {problem})", status.cache_state),
        (other, None) => format!(" ({other})"),
    };
    row("cache", format!("{}{state}", status.cache))?;
    if let Some(source) = &status.source {
        row("source", source.clone())?;
    }
    if let (Some(at), Some(age)) = (&status.fetched_at, status.age_seconds) {
        row("fetched", format!("{at} ({})", ago(age)))?;
    }
    if let (Some(at), Some(age)) = (&status.confirmed_at, status.confirmed_age_seconds) {
        row("confirmed current", format!("{at} ({})", ago(age)))?;
    }
    for (key, value) in status.last_refresh.iter().flat_map(LastRefresh::rows) {
        row(key, value)?;
    }
    if let Some(signed) = &status.signed_at {
        row("signed", signed.clone())?;
    }
    let (where_keys_went, floor) = describe_memory(&status.memory);
    row("where keys went", where_keys_went)?;
    row("floor", floor)?;
    for (key, value) in [
        ("etag", &status.etag),
        ("last-modified", &status.last_modified),
        ("sha256", &status.sha256),
    ] {
        if let Some(value) = value {
            row(key, value.clone())?;
        }
    }
    if let (Some(p), Some(m)) = (status.providers, status.models) {
        row(
            "catalog",
            format!("{}, {}", count(p, "provider"), count(m, "model")),
        )?;
    }
    for (key, value) in status.hyper.rows() {
        row(&key, value)?;
    }
    row("embedded snapshot", status.embedded_snapshot.to_string())?;
    row("provider-auto-update", settings.auto_update.to_string())?;
    if let Some(both) = &settings.auto_update_orders {
        row("", both.to_string())?;
    }
    if let Some(pinned) = &status.public_keys {
        row("public keys", pinned_keys_row(pinned))?;
    }
    row(
        "refresh interval",
        format!(
            "{} ({})",
            humantime::format_duration(std::time::Duration::from_secs_f64(
                status.refresh_interval_seconds,
            )),
            status.refresh_interval_origin
        ),
    )?;
    row("default-providers", settings.default_providers.to_string())?;
    if let Some(both) = &settings.default_providers_orders {
        row("", both.to_string())?;
    }
    for (key, value) in status.inputs.rows() {
        row(key, value)?;
    }
    if let Some(crush) = &status.crush {
        row("crush", crush.describe())?;
    }
    Ok(())
}

/// The two rows of what is remembered of where keys went: what it
/// follows, and the floor.
fn describe_memory(memory: &memory::Summary) -> (String, String) {
    let followed = match (memory.state, &memory.problem) {
        (_, Some(why)) => why.clone(),
        (state, None) => {
            let signed = memory
                .signed_at
                .as_ref()
                .map(|at| format!(", newest signature seen {at}"))
                .unwrap_or_default();
            let missing = if state == "missing" {
                " (no file yet: the embedded snapshot's and the cache's)"
            } else {
                ""
            };
            format!(
                "{}: {} and the configured keys of {} followed{missing}{signed}",
                memory.path,
                count(memory.variables, "variable"),
                count(memory.providers, "provider"),
            )
        }
    };
    let floor = match &memory.floor {
        Some(floor) => format!(
            "the catalog applied with --allow-shrink from {} ({}, {})",
            floor.source,
            count(floor.providers, "provider"),
            count(floor.models, "model")
        ),
        None => {
            let snapshot = embedded::catalog();
            format!(
                "the embedded snapshot ({}, {})",
                count(snapshot.providers.len(), "provider"),
                count(snapshot.model_count(), "model")
            )
        }
    };
    (followed, floor)
}

fn describe_cache(cached: &Cached, status: &mut Status, files: &CacheFiles) {
    status.sha256 = Some(digest::hex(&cached.sha256));
    match catalog::validate(&cached.bytes) {
        Ok(catalog) => {
            status.cache_state = "valid";
            status.providers = Some(catalog.providers.len());
            status.models = Some(catalog.model_count());
            // What the guard knows with this cache (without a memory file,
            // the cache's places are known too).
            let previous = Some(&catalog).filter(|_| !cached.is_stand_in());
            status.memory = memory::summary(files, previous);
        }
        Err(e) => {
            status.cache_state = "invalid";
            status.problem = Some(e.to_string());
        }
    }
    let now = state::now();
    if let Some(at) = cached.written_at() {
        status.fetched_at = Some(state::rfc3339(at));
        status.age_seconds = Some(now.saturating_sub(at));
    }
    if let Some(state) = &cached.state {
        status.confirmed_at = state.confirmed_at.map(state::rfc3339);
        status.confirmed_age_seconds = state.confirmed_at.map(|at| now.saturating_sub(at));
        status.last_refresh = state
            .refresh
            .as_ref()
            .map(|r| LastRefresh::of(r, Target::Catalog, now));
        status.signed_at = state.signed_at.map(state::rfc3339);
    }
    let validators = cached.validators();
    status.source = cached.state.as_ref().map(|s| s.source.clone());
    status.etag = validators.etag;
    status.last_modified = validators.last_modified;
}
