//! `crush providers`: the start-up catalog's providers, or with `--status`
//! what the cache and the settings are, without any network access.

use std::io::{self, Write};
use std::time::Duration;

use serde::Serialize;
use unicode_width::UnicodeWidthStr;

use super::context::{self, Context, cache_files};
use super::output::{Said, say};
use super::{Exit, ago, count, inputs, listed, print, terminal};
use super::{write_catalog, write_json, write_table};
use crate::catalog::escape::safe;
use crate::catalog::{Catalog, Target, embedded};
use crate::commands::cli::ProvidersArgs;
use crate::config::hyper::{HYPER_KEY_ENV, HyperKey};
use crate::config::{self, Disagreement, Setting, Settings};
use crate::environment::{self, Source};
use crate::fetch::source;
use crate::startup::network::{self, Network};
use crate::startup::settings::{NotAtStartUp, at_start_up, env_options};
use crate::startup::{self, Provenance, StartupCatalog};
use crate::store::cache::{self, CacheFiles, Found};
use crate::store::digest;
use crate::store::state::{self, RefreshOutcome, RefreshRecord};
use crate::trust::memory;

/// `crush providers`.
pub(super) fn run(context: &Context, args: &ProvidersArgs) -> Result<(), Exit> {
    let (settings, _) = context.read_settings(false)?;
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
    let rows: Vec<[String; 4]> = (catalog.providers.iter())
        .map(|p| {
            let kind = p.kind.as_deref().unwrap_or("");
            let models = p.models().len().to_string();
            [p.id.as_str(), p.name.as_str(), kind, &models].map(String::from)
        })
        .collect();
    print(|out| match terminal::stdout_width() {
        // On a pipe, one provider a line, its fields separated by tabs, for
        // a script (`cut -f1`); where the catalog came from, with `--debug`.
        None => {
            context.say_debug(header(&loaded));
            rows.iter().try_for_each(|row| {
                let fields: Vec<_> = row.iter().map(|field| safe(field)).collect();
                writeln!(out, "{}", fields.join("\t"))
            })
        }
        Some(width) => {
            let header = terminal::wrap(&safe(&header(&loaded)), Some(width), "  ");
            writeln!(out, "{header}")?;
            write_table(out, ["ID", "NAME", "TYPE", "MODELS"], &rows, &[2], width)
        }
    })
}

/// Where the catalog came from, in a line.
fn header(loaded: &StartupCatalog) -> String {
    let ago = |t: u64| ago(state::now().saturating_sub(t));
    let when = |t: Option<u64>| t.map_or(String::new(), |t| format!(" {}", ago(t)));
    let (written, snapshot) = (when(loaded.fetched_at), embedded::origin());
    let origin = match (loaded.provenance, loaded.source.as_deref()) {
        (Provenance::Disabled, _) => return "No providers".into(),
        (Provenance::Fresh, Some(s)) => format!("fresh from {s}, fetched just now"),
        (Provenance::Fresh, None) => "fresh, fetched just now".into(),
        (Provenance::Embedded, _) => format!("embedded snapshot ({snapshot})"),
        (_, Some(EMBEDDED)) => {
            format!("the embedded snapshot ({snapshot}), installed in the cache{written}")
        }
        // Only a server confirms a catalog current.
        (_, Some(s)) if source::is_http(s) => {
            let confirmed = match loaded.confirmed_at {
                Some(_) => format!(", confirmed current{}", when(loaded.confirmed_at)),
                None => String::new(),
            };
            format!("cached, fetched from {s}{written}{confirmed}")
        }
        (_, Some(s)) => format!("cached, read from {s}{written}"),
        (_, None) => format!("cached, written{written} by another program"),
    };
    let refreshing = match loaded.provenance {
        _ if !loaded.refreshing.contains(&Target::Catalog) => "",
        Provenance::Embedded => "; fetching the current catalog in the background",
        _ => "; refreshing in the background",
    };
    format!("Providers: {origin}{refreshing}")
}

/// The source a cache records for the embedded snapshot installed there.
const EMBEDDED: &str = "embedded snapshot";

/// `providers --status` as JSON.
#[derive(Debug, Serialize)]
struct Status {
    /// The catalog's cache.
    #[serde(flatten)]
    catalog: Cached,
    /// What is remembered of where keys went.
    memory: memory::Summary,
    public_keys: Option<serde_json::Value>,
    refresh_interval_seconds: f64,
    refresh_interval_origin: String,
    embedded_snapshot: &'static str,
    provider_auto_update: serde_json::Value,
    default_providers: serde_json::Value,
    /// The real Crush this program stands in front of, when invoked as
    /// `crush`.
    #[serde(skip_serializing_if = "Option::is_none")]
    crush: Option<serde_json::Value>,
    /// Its row in the status table.
    #[serde(skip)]
    crush_row: Option<String>,
    /// Hyper's provider, `hyper.json`.
    hyper: HyperStatus,
    /// Every other input, and where it came from.
    #[serde(flatten)]
    inputs: inputs::Inputs,
}

/// Hyper's provider, as `--status` shows it: its cache, and whether the
/// start-up keeps it fresh (only with a Hyper key).
#[derive(Debug, Serialize)]
struct HyperStatus {
    /// Where the start-up refresh asks, and what said so.
    url: String,
    url_origin: String,
    #[serde(flatten)]
    cache: Cached,
    /// Where the Hyper key is set, when it is.
    key: Option<String>,
    /// Whether start-up keeps `hyper.json` fresh, and why not.
    refresh_at_start_up: String,
}

/// What a cache holds, as `--status` names it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum CacheState {
    /// No file.
    #[default]
    Missing,
    /// A valid document.
    Valid,
    /// A file that is not a valid document.
    Invalid,
    /// A file that cannot be read.
    Unreadable,
    /// A file, or a folder, another user may have written.
    Untrusted,
}

/// A cached document, the catalog or Hyper's provider, as `--status`
/// shows it.
#[derive(Debug, Default, Serialize)]
struct Cached {
    #[serde(skip)]
    target: Target,
    cache: String,
    cache_state: CacheState,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    providers: Option<usize>,
    models: Option<usize>,
}

impl Cached {
    /// What is known of `files`' document, without any network access;
    /// and, when it is a valid catalog, the catalog the memory knows the
    /// places of (not one another program stood in for the snapshot).
    fn read(files: &CacheFiles) -> (Cached, Option<Catalog>) {
        let (target, now) = (files.target, state::now());
        let aged = |at: Option<u64>| (at.map(state::rfc3339), at.map(|at| now.saturating_sub(at)));
        let cache = files.catalog.display().to_string();
        let mut doc = Cached {
            target,
            cache,
            ..Cached::default()
        };
        let mut valid = None;
        let state = match cache::read(files, cache::Bytes::Read) {
            Found::Missing(state) => state,
            Found::Unusable(e) => {
                doc.cache_state = match e {
                    cache::CacheError::Read { .. } => CacheState::Unreadable,
                    _ => CacheState::Untrusted,
                };
                doc.problem = Some(e.to_string());
                None
            }
            Found::Vouched(cached) | Found::Foreign(cached) => {
                doc.cache_state = CacheState::Valid;
                match target.validate(&cached.bytes) {
                    Ok(catalog) => {
                        let providers = catalog.providers.len();
                        doc.providers = (target == Target::Catalog).then_some(providers);
                        doc.models = Some(catalog.model_count());
                        valid = Some(catalog).filter(|_| !cached.is_stand_in());
                    }
                    Err(e) => {
                        (doc.cache_state, doc.problem) = (CacheState::Invalid, Some(e.to_string()))
                    }
                }
                doc.sha256 = Some(digest::hex(&cached.sha256));
                (doc.fetched_at, doc.age_seconds) = aged(cached.written_at());
                let validators = cached.validators();
                (doc.etag, doc.last_modified) = (validators.etag, validators.last_modified);
                cached.state
            }
        };
        // An absent document's state records only its last refresh.
        if let Some(state) = state {
            if !state.sha256.is_empty() {
                doc.source = Some(state.source);
                (doc.confirmed_at, doc.confirmed_age_seconds) = aged(state.confirmed_at);
                doc.signed_at = state.signed_at.map(state::rfc3339);
            }
            doc.last_refresh = state.refresh.map(|r| LastRefresh::of(&r, target, now));
        }
        (doc, valid)
    }

    /// The rows of the text status: Hyper's named so.
    fn rows(&self) -> Vec<Row> {
        // Hyper's rows named so.
        let (first, none, confirmed, prefix) = match self.target {
            Target::Catalog => (
                "cache",
                "the embedded snapshot is used",
                "confirmed current",
                "",
            ),
            Target::Hyper => (
                "hyper",
                "Crush uses its own embedded Hyper provider",
                "confirmed",
                "hyper ",
            ),
        };
        let state = match (self.cache_state, &self.problem) {
            (CacheState::Valid, _) => String::new(),
            (CacheState::Missing, _) => format!(" (none: {none})"),
            (state, problem) => {
                let state = format!("{state:?}").to_lowercase();
                format!(" ({state}: {})", problem.as_deref().unwrap_or(""))
            }
        };
        let aged = |at: &Option<String>, age: Option<u64>| {
            Some(format!("{} ({})", at.as_ref()?, ago(age?)))
        };
        // Only a server's catalog was fetched, and only a server confirms a
        // catalog current: the embedded snapshot was installed, a file read,
        // until a refresh confirms them.
        let from_server = self.source.as_deref().is_some_and(source::is_http);
        let fetched = match self.source.as_deref() {
            Some(EMBEDDED) => "installed",
            Some(_) if from_server => "fetched",
            Some(_) => "read",
            None => "written",
        };
        let confirmed_at = (self.confirmed_at.clone())
            .filter(|at| from_server || Some(at) != self.fetched_at.as_ref());
        let models = self.models.map(|m| count(m, "model"));
        let counts = match self.providers {
            Some(p) => (
                "catalog",
                models.map(|m| format!("{}, {m}", count(p, "provider"))),
            ),
            None => ("models", models),
        };
        let mut rows = vec![
            ("source", self.source.clone()),
            (fetched, aged(&self.fetched_at, self.age_seconds)),
            (confirmed, aged(&confirmed_at, self.confirmed_age_seconds)),
        ];
        rows.extend(self.last_refresh.iter().flat_map(LastRefresh::rows));
        rows.extend([
            ("signed", self.signed_at.clone()),
            ("etag", self.etag.clone()),
            ("last-modified", self.last_modified.clone()),
            ("sha256", self.sha256.clone()),
            counts,
        ]);
        // A row that goes on (no key) is not named.
        let key = |key: &str| match key {
            "" => String::new(),
            key => format!("{prefix}{key}"),
        };
        let first = (first.to_owned(), Some(format!("{}{state}", self.cache)));
        let rows = rows.into_iter().map(|(k, value)| (key(k), value));
        std::iter::once(first).chain(rows).collect()
    }
}

/// A row of the text status: a key (empty: the row above goes on) and a
/// value (none: no row).
type Row = (String, Option<String>);

/// The last automatic refresh, as `--status` shows it.
#[derive(Debug, Serialize)]
struct LastRefresh {
    at: String,
    age_seconds: u64,
    url: String,
    outcome: RefreshOutcome,
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
    fn of(r: &RefreshRecord, target: Target, now: u64) -> LastRefresh {
        let held = r.held.as_ref();
        let pending = held.filter(|h| !h.kept);
        LastRefresh {
            at: state::rfc3339(r.at),
            age_seconds: now.saturating_sub(r.at),
            url: r.url.clone(),
            outcome: r.outcome,
            cause: r.cause.clone(),
            held: held.map(|h| h.changes.clone()),
            accept: pending.map(|h| startup::held_hint_for(target, &r.url, &h.needs)),
            kept: held.is_some_and(|h| h.kept),
        }
    }

    /// Its rows of the text status: how it ended, what it held back, and
    /// the commands that settle it (or that a person settled it).
    fn rows(&self) -> Vec<(&'static str, Option<String>)> {
        let cause = self
            .cause
            .as_ref()
            .map_or(String::new(), |c| format!(": {c}"));
        let (outcome, age) = (self.outcome.word(), ago(self.age_seconds));
        let outcome = format!("{outcome} {age} from {}{cause}", self.url);
        let first = |i: usize, label: &'static str| if i == 0 { label } else { "" };
        let held = self.held.iter().flatten().enumerate();
        let commands = self.accept.iter().flat_map(|a| a.lines()).enumerate();
        let kept = "kept the one in use over it; a refresh bringing it again says nothing";
        std::iter::once(("last refresh", outcome))
            .chain(held.map(|(i, f)| (first(i, "held back"), f.clone())))
            .chain(commands.map(|(i, c)| (first(i, "to settle it"), c.trim().to_owned())))
            .chain(self.kept.then(|| ("settled", kept.to_owned())))
            .map(|(key, value)| (key, Some(value)))
            .collect()
    }
}

/// A setting as `--status --json` shows it: its value and origin, and
/// each order's when the two orders of the files differ, with the order
/// that keeps the network off (`spec` or `crush_v0_90`).
fn setting_json(setting: &Setting, orders: &Option<Disagreement>) -> serde_json::Value {
    let mut json =
        serde_json::json!({ "value": setting.value, "origin": setting.origin.to_string() });
    if let Some(both) = orders {
        json["orders"] = serde_json::json!({
            "spec": setting_json(&both.spec, &None),
            "crush_v0_90": setting_json(&both.crush_v090, &None),
            "kept_off_by": both.kept_off_by(),
        });
    }
    json
}

fn status(settings: &Settings, files: &CacheFiles, json: bool) -> Result<(), Exit> {
    let mut warnings = Vec::new();
    let env = env_options(&mut warnings);
    for warning in &warnings {
        say(Said::Warning, format_args!("{warning}"));
    }
    let bad_key = context::pinned_keys(settings).err().map(|f| f.to_string());
    let network = network::decide(settings, &env.url, bad_key);
    let (catalog, valid) = Cached::read(files);
    let public_keys = (settings.public_keys.as_ref())
        .map(|p| serde_json::json!({ "keys": p.entries, "origin": p.origin.to_string() }));
    let on = matches!(network, Network::Allowed(_));
    let (crush, crush_row) = super::front::status(settings, files).unzip();
    let status = Status {
        catalog,
        memory: memory::summary(files, valid.as_ref()),
        public_keys,
        refresh_interval_seconds: env.interval.as_secs_f64(),
        refresh_interval_origin: env.interval_origin.clone(),
        embedded_snapshot: embedded::origin(),
        provider_auto_update: setting_json(&settings.auto_update, &settings.auto_update_orders),
        default_providers: setting_json(
            &settings.default_providers,
            &settings.default_providers_orders,
        ),
        crush,
        crush_row,
        hyper: hyper_status(files, settings.hyper_key.as_ref(), on),
        inputs: inputs::gather(settings, &env, &network),
    };
    print(|out| match json {
        true => write_json(out, &status),
        false => write_status(out, &status, settings),
    })
}

/// Hyper's provider beside the catalog of `files`; `key` is the Hyper
/// key, and `network_on` whether start-up may go out.
fn hyper_status(files: &CacheFiles, key: Option<&HyperKey>, network_on: bool) -> HyperStatus {
    let refresh_at_start_up = match at_start_up(files, key) {
        _ if !network_on => "no: start-up makes no request".to_string(),
        Ok(_) => "yes, with the Hyper key, on the catalog's interval".to_string(),
        Err(NotAtStartUp::Quiet(why) | NotAtStartUp::Told(why)) => format!("no: {why}"),
    };
    let name = crate::catalog::target::url_env(Target::Hyper);
    let value = environment::var(name);
    let url = source::startup_url_for(Target::Hyper, value.as_deref().and_then(|v| v.to_str()));
    // Where the key is set: `HYPER_API_KEY`, with the `.env` file and
    // line when it comes from one (never its value).
    let key = key.map(|key| match environment::source(HYPER_KEY_ENV) {
        Some(Source::DotEnv(path, line)) if key.origin == HYPER_KEY_ENV => {
            format!("{HYPER_KEY_ENV} at {}:{line}", path.display())
        }
        _ => key.origin.clone(),
    });
    HyperStatus {
        url: url.map_or_else(
            |value| format!("none: {} is not an http(s) URL", source::redacted(&value)),
            |url| source::redacted(url.as_str()),
        ),
        url_origin: inputs::env_origin(name).unwrap_or_else(|| "default".into()),
        cache: Cached::read(&files.with_target(Target::Hyper)).0,
        key,
        refresh_at_start_up,
    }
}

fn write_status(out: &mut impl Write, status: &Status, settings: &Settings) -> io::Result<()> {
    let hyper = &status.hyper;
    let (followed, floor) = describe_memory(&status.memory);
    let both = |orders: &Option<Disagreement>| orders.as_ref().map(ToString::to_string);
    // The pinned keys, and where from: the variable, not its value again.
    let keys = settings.public_keys.as_ref().map(|pinned| {
        let origin = match &pinned.origin {
            config::Origin::Env { name, .. } => (*name).to_owned(),
            origin => origin.to_string(),
        };
        format!("{} (from {origin})", pinned.entries.join(", "))
    });
    let interval = Duration::from_secs_f64(status.refresh_interval_seconds);
    let interval = humantime::format_duration(interval);
    let origin = &status.refresh_interval_origin;
    let mut rows = status.catalog.rows();
    rows.push(("where keys went".into(), Some(followed)));
    rows.push(("floor".into(), Some(floor)));
    rows.extend(hyper.cache.rows());
    let hyper_url = format!("{} ({})", hyper.url, hyper.url_origin);
    let hyper_key = hyper.key.as_deref().unwrap_or("none");
    let (auto_update, default_providers) = (&settings.auto_update, &settings.default_providers);
    let more = [
        ("hyper url", Some(hyper_url)),
        ("hyper key", Some(hyper_key.into())),
        ("hyper at start-up", Some(hyper.refresh_at_start_up.clone())),
        ("embedded snapshot", Some(status.embedded_snapshot.into())),
        ("provider-auto-update", Some(auto_update.to_string())),
        ("", both(&settings.auto_update_orders)),
        ("public keys", keys),
        ("refresh interval", Some(format!("{interval} ({origin})"))),
        ("default-providers", Some(default_providers.to_string())),
        ("", both(&settings.default_providers_orders)),
    ];
    let inputs = status.inputs.rows().into_iter().map(|(k, v)| (k, Some(v)));
    let crush = ("crush", status.crush_row.clone());
    rows.extend((more.into_iter().chain(inputs).chain([crush])).map(|(k, v)| (k.into(), v)));
    let width = terminal::stdout_width();
    for (key, value) in rows {
        let Some(value) = value else { continue };
        let key = format!("{key}{}", if key.is_empty() { "" } else { ":" });
        // A source, a cause, a finding: from a server or the state file.
        let value = safe(&value);
        let wrapped = terminal::wrap(&format!("{key:<21} {value}"), width, &" ".repeat(22));
        // A word too long for the value's column (a digest, a path) goes
        // on a line of its own under the key, rather than past the edge.
        if width.is_none_or(|w| wrapped.lines().all(|l| l.width() <= w)) {
            writeln!(out, "{wrapped}")?;
        } else {
            writeln!(
                out,
                "{key}\n{}",
                terminal::wrap(&format!("  {value}"), width, "  ")
            )?;
        }
    }
    Ok(())
}

/// The two rows of what is remembered of where keys went: what it
/// follows, and the floor.
fn describe_memory(memory: &memory::Summary) -> (String, String) {
    let signed = (memory.signed_at.as_ref()).map(|at| format!(", newest signature seen {at}"));
    let missing = match memory.state {
        memory::FileState::Missing => " (no file yet: the embedded snapshot's and the cache's)",
        _ => "",
    };
    let followed = memory.problem.clone().unwrap_or_else(|| {
        format!(
            "{}: {} and the configured keys of {} followed{missing}{}",
            memory.path,
            count(memory.variables, "variable"),
            count(memory.providers, "provider"),
            signed.unwrap_or_default()
        )
    });
    let snapshot = embedded::outline();
    let (source, providers, models) = match &memory.floor {
        Some(floor) => {
            let source = format!(
                "the catalog applied with --allow-shrink from {}",
                floor.source
            );
            (source, floor.providers, floor.models)
        }
        None => (
            "the embedded snapshot".into(),
            snapshot.providers.len(),
            embedded::model_ids().map(|(_, ids)| ids.len()).sum(),
        ),
    };
    let (providers, models) = (count(providers, "provider"), count(models, "model"));
    (followed, format!("{source} ({providers}, {models})"))
}
