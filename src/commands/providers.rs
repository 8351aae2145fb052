//! `crush providers`: the start-up catalog's providers, or with `--status`
//! what the cache and the settings are, without any network access.

use std::io::{self, Write};
use std::time::Duration;

use serde::Serialize;
use unicode_width::UnicodeWidthStr;

use super::context::{self, Context, cache_files};
use super::{Exit, Table, ago, count, inputs, listed, print, program, terminal, warn};
use super::{write_catalog, write_json};
use crate::catalog::escape::safe;
use crate::catalog::{self, Catalog, Target, embedded};
use crate::commands::cli::ProvidersArgs;
use crate::config::hyper::{HYPER_KEY_ENV, HyperKey};
use crate::config::{self, Disagreement, Setting, Settings};
use crate::environment::{self, Source};
use crate::fetch::source;
use crate::startup::network::{self, Network};
use crate::startup::settings::{NotAtStartUp, at_start_up};
use crate::startup::{self, Provenance, StartupCatalog};
use crate::store::cache::{self, CacheFiles};
use crate::store::digest;
use crate::store::state::{self, RefreshOutcome, RefreshRecord};
use crate::trust::memory;

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
    let rows: Vec<[String; 4]> = catalog
        .providers
        .iter()
        .map(|p| {
            let models = p.models().len().to_string();
            [
                text(Some(&p.id)),
                text(Some(&p.name)),
                text(p.kind.as_ref()),
                models,
            ]
        })
        .collect();
    // On a pipe, one provider a line, its fields separated by tabs, for a
    // script (`cut -f1`); where the catalog came from, with `--debug`.
    let Some(width) = terminal::stdout_width() else {
        context.say_debug(header(loaded));
        return rows.iter().try_for_each(|row| {
            let fields: Vec<_> = row.iter().map(|field| safe(field)).collect();
            writeln!(out, "{}", fields.join("\t"))
        });
    };
    let header = terminal::wrap(&safe(&header(loaded)), Some(width), "  ");
    writeln!(out, "{header}")?;
    Table {
        head: ["ID", "NAME", "TYPE", "MODELS"],
        rows: &rows,
        droppable: &[2],
    }
    .write(out, Some(width))
}

fn header(loaded: &StartupCatalog) -> String {
    let when = |t: Option<u64>| {
        t.map(|t| format!(" {}", ago(state::now().saturating_sub(t))))
            .unwrap_or_default()
    };
    let snapshot = embedded::origin();
    let origin = match (loaded.provenance, loaded.source.as_deref()) {
        (Provenance::Fresh, from) => {
            let from = from.map(|s| format!(" from {s}")).unwrap_or_default();
            return format!("Providers: fresh{from}, fetched just now");
        }
        (Provenance::Disabled, _) => return "No providers".into(),
        (Provenance::Embedded, _) if loaded.refreshing.contains(&Target::Catalog) => {
            return format!(
                "Providers: embedded snapshot ({snapshot}); fetching the current catalog in the background"
            );
        }
        (Provenance::Embedded, _) => return format!("Providers: embedded snapshot ({snapshot})"),
        (_, Some(s)) if s == EMBEDDED => {
            let written = when(loaded.fetched_at);
            format!("the embedded snapshot ({snapshot}), installed in the cache{written}")
        }
        (_, Some(s)) if s.starts_with("http://") || s.starts_with("https://") => {
            // Only a server confirms a catalog current.
            let confirmed = loaded
                .confirmed_at
                .map(|t| format!(", confirmed current{}", when(Some(t))));
            let confirmed = confirmed.unwrap_or_default();
            format!(
                "cached, fetched from {s}{}{confirmed}",
                when(loaded.fetched_at)
            )
        }
        (_, Some(s)) => format!("cached, read from {s}{}", when(loaded.fetched_at)),
        (_, None) => format!(
            "cached, written{} by another program",
            when(loaded.fetched_at)
        ),
    };
    let refreshing = match loaded.refreshing.contains(&Target::Catalog) {
        true => "; refreshing in the background",
        false => "",
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
    public_keys: Option<PinnedJson>,
    refresh_interval_seconds: f64,
    refresh_interval_origin: String,
    embedded_snapshot: &'static str,
    provider_auto_update: SettingJson,
    default_providers: SettingJson,
    /// The real Crush this program stands in front of, when invoked as
    /// `crush`.
    #[serde(skip_serializing_if = "Option::is_none")]
    crush: Option<super::front::Status>,
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
    /// `valid` is given the valid catalog that the memory knows the places
    /// of (not one another program stood in for the snapshot).
    fn read(files: &CacheFiles, valid: impl FnOnce(Option<&Catalog<'_>>)) -> Cached {
        let (target, now) = (files.target, state::now());
        let aged = |at: Option<u64>| (at.map(state::rfc3339), at.map(|at| now.saturating_sub(at)));
        let mut doc = Cached {
            target,
            cache: files.catalog.display().to_string(),
            ..Cached::default()
        };
        let state = match cache::read(files) {
            Err(e) => {
                doc.cache_state = match e {
                    cache::CacheError::Read { .. } => CacheState::Unreadable,
                    _ => CacheState::Untrusted,
                };
                doc.problem = Some(e.to_string());
                None
            }
            Ok(None) => cache::absent_state(files),
            Ok(Some(cached)) => {
                doc.sha256 = Some(digest::hex(&cached.sha256));
                match target.validate(&cached.bytes) {
                    Ok(catalog) => {
                        doc.cache_state = CacheState::Valid;
                        doc.providers =
                            (target == Target::Catalog).then_some(catalog.providers.len());
                        doc.models = Some(catalog.model_count());
                        valid(Some(&catalog).filter(|_| !cached.is_stand_in()));
                    }
                    Err(e) => {
                        doc.cache_state = CacheState::Invalid;
                        doc.problem = Some(e.to_string());
                    }
                }
                (doc.fetched_at, doc.age_seconds) = aged(cached.written_at());
                let validators = cached.validators();
                (doc.etag, doc.last_modified) = (validators.etag, validators.last_modified);
                cached.state
            }
        };
        if let Some(state) = state {
            // An absent document's state records only its last refresh.
            if !state.sha256.is_empty() {
                doc.source = Some(state.source.clone());
                (doc.confirmed_at, doc.confirmed_age_seconds) = aged(state.confirmed_at);
                doc.signed_at = state.signed_at.map(state::rfc3339);
            }
            doc.last_refresh = (state.refresh.as_ref()).map(|r| LastRefresh::of(r, target, now));
        }
        doc
    }

    /// The rows of the text status, key and value: Hyper's named so.
    fn rows(&self) -> Vec<(String, String)> {
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
            (state, problem) => format!(
                " ({}: {})",
                json_word(state),
                problem.as_deref().unwrap_or("")
            ),
        };
        let aged = |at: &Option<String>, age: Option<u64>| {
            at.as_ref().map(|at| {
                format!(
                    "{at}{}",
                    age.map(|a| format!(" ({})", ago(a))).unwrap_or_default()
                )
            })
        };
        // The embedded snapshot was installed, not fetched.
        let fetched = match self.source.as_deref() == Some(EMBEDDED) {
            true => "installed",
            false => "fetched",
        };
        let mut rows = vec![
            ("source", self.source.clone()),
            (fetched, aged(&self.fetched_at, self.age_seconds)),
            (
                confirmed,
                aged(&self.confirmed_at, self.confirmed_age_seconds),
            ),
        ];
        let last = self.last_refresh.iter().flat_map(LastRefresh::rows);
        rows.extend(last.map(|(key, value)| (key, Some(value))));
        rows.extend([
            ("signed", self.signed_at.clone()),
            ("etag", self.etag.clone()),
            ("last-modified", self.last_modified.clone()),
            ("sha256", self.sha256.clone()),
        ]);
        let models = self.models.map(|m| count(m, "model"));
        match self.providers {
            Some(p) => rows.push(("", models.map(|m| format!("{}, {m}", count(p, "provider"))))),
            None => rows.push(("models", models)),
        }
        let prefixed = rows.into_iter().filter_map(|(key, value)| {
            let key = match (key, self.providers) {
                ("", Some(_)) => "catalog".to_owned(),
                ("", None) => String::new(),
                (key, _) => format!("{prefix}{key}"),
            };
            Some((key, value?))
        });
        std::iter::once((first.to_owned(), format!("{}{state}", self.cache)))
            .chain(prefixed)
            .collect()
    }
}

/// `state` as the JSON names it.
fn json_word(state: CacheState) -> String {
    serde_json::to_value(state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

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
        LastRefresh {
            at: state::rfc3339(r.at),
            age_seconds: now.saturating_sub(r.at),
            url: r.url.clone(),
            outcome: r.outcome,
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
    fn rows(&self) -> Vec<(&'static str, String)> {
        let cause = self.cause.as_ref().map(|c| format!(": {c}"));
        let (outcome, age) = (self.outcome.word(), ago(self.age_seconds));
        let outcome = format!(
            "{outcome} {age} from {}{}",
            self.url,
            cause.unwrap_or_default()
        );
        let first = |i: usize, label: &'static str| if i == 0 { label } else { "" };
        let held = self.held.iter().flatten().enumerate();
        let commands = self.accept.iter().flat_map(|a| a.lines()).enumerate();
        let kept = "kept the one in use over it; a refresh bringing it again says nothing";
        std::iter::once(("last refresh", outcome))
            .chain(held.map(|(i, f)| (first(i, "held back"), f.clone())))
            .chain(commands.map(|(i, c)| (first(i, "to settle it"), c.trim().to_owned())))
            .chain(self.kept.then(|| ("settled", kept.to_owned())))
            .collect()
    }
}

/// The pinned keys, as `--status` shows them.
#[derive(Debug, Serialize)]
struct PinnedJson {
    keys: Vec<String>,
    origin: String,
}

/// A setting, and each order's value when the two orders of the files
/// differ, with the order that keeps the network off (`spec` or
/// `crush_v0_90`).
#[derive(Debug, Serialize)]
struct SettingJson {
    value: bool,
    origin: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    orders: Option<Box<OrdersJson>>,
}

#[derive(Debug, Serialize)]
struct OrdersJson {
    spec: SettingJson,
    crush_v0_90: SettingJson,
    kept_off_by: &'static str,
}

impl SettingJson {
    fn of(setting: &Setting, orders: Option<&Disagreement>) -> SettingJson {
        SettingJson {
            value: setting.value,
            origin: setting.origin.to_string(),
            orders: orders.map(|both| {
                Box::new(OrdersJson {
                    spec: SettingJson::of(&both.spec, None),
                    crush_v0_90: SettingJson::of(&both.crush_v090, None),
                    kept_off_by: both.kept_off_by().key(),
                })
            }),
        }
    }
}

fn status(settings: &Settings, files: &CacheFiles, json: bool) -> Result<(), Exit> {
    let mut warnings = Vec::new();
    let env = context::env_options(&mut warnings);
    for warning in &warnings {
        warn(warning);
    }
    let bad_key = context::pinned_keys(settings).err().map(|f| f.to_string());
    let network = network::decide(settings, &env.url, bad_key);
    let mut memory = memory::summary(files, None);
    let catalog = Cached::read(files, |valid| memory = memory::summary(files, valid));
    let key = config::hyper::hyper_key_in(settings, &crate::store::paths::process_env);
    let status = Status {
        catalog,
        memory,
        public_keys: settings.public_keys.as_ref().map(|p| PinnedJson {
            keys: p.entries.clone(),
            origin: p.origin.to_string(),
        }),
        refresh_interval_seconds: env.interval.as_secs_f64(),
        refresh_interval_origin: env.interval_origin.clone(),
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
        hyper: hyper_status(files, key.as_ref(), matches!(network, Network::Allowed(_))),
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
    let name = catalog::target::url_env(Target::Hyper);
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
        cache: Cached::read(&files.with_target(Target::Hyper), |_| {}),
        key,
        refresh_at_start_up,
    }
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

fn write_status(out: &mut impl Write, status: &Status, settings: &Settings) -> io::Result<()> {
    let width = terminal::stdout_width();
    let (where_keys_went, floor) = describe_memory(&status.memory);
    let mut rows = status.catalog.rows();
    rows.push(("where keys went".into(), where_keys_went));
    rows.push(("floor".into(), floor));
    rows.extend(status.hyper.cache.rows());
    let hyper = &status.hyper;
    rows.extend(
        [
            ("hyper url", format!("{} ({})", hyper.url, hyper.url_origin)),
            ("hyper key", hyper.key.clone().unwrap_or("none".into())),
            ("hyper at start-up", hyper.refresh_at_start_up.clone()),
            ("embedded snapshot", status.embedded_snapshot.to_string()),
            ("provider-auto-update", settings.auto_update.to_string()),
        ]
        .map(|(key, value)| (key.to_owned(), value)),
    );
    let both = |orders: &Option<Disagreement>| {
        orders
            .as_ref()
            .map(|both| (String::new(), both.to_string()))
    };
    rows.extend(both(&settings.auto_update_orders));
    // The pinned keys, and where from: the variable, not its value again.
    if let Some(pinned) = &status.public_keys {
        let env = format!("{}=", crate::trust::signature::KEYS_ENV);
        let origin = match pinned.origin.starts_with(&env) {
            true => crate::trust::signature::KEYS_ENV,
            false => pinned.origin.as_str(),
        };
        rows.push((
            "public keys".into(),
            format!("{} (from {origin})", pinned.keys.join(", ")),
        ));
    }
    let interval = Duration::from_secs_f64(status.refresh_interval_seconds);
    let interval = humantime::format_duration(interval);
    rows.push((
        "refresh interval".into(),
        format!("{interval} ({})", status.refresh_interval_origin),
    ));
    rows.push((
        "default-providers".into(),
        settings.default_providers.to_string(),
    ));
    rows.extend(both(&settings.default_providers_orders));
    rows.extend(
        status
            .inputs
            .rows()
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value)),
    );
    rows.extend(
        status
            .crush
            .as_ref()
            .map(|crush| ("crush".into(), crush.describe())),
    );
    rows.into_iter()
        .try_for_each(|(key, value)| status_row(out, width, &key, value))
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
            let missing = match state == "missing" {
                true => " (no file yet: the embedded snapshot's and the cache's)",
                false => "",
            };
            format!(
                "{}: {} and the configured keys of {} followed{missing}{signed}",
                memory.path,
                count(memory.variables, "variable"),
                count(memory.providers, "provider"),
            )
        }
    };
    let (source, providers, models) = match &memory.floor {
        Some(floor) => (
            format!(
                "the catalog applied with --allow-shrink from {}",
                floor.source
            ),
            floor.providers,
            floor.models,
        ),
        None => {
            let snapshot = embedded::catalog();
            let models = snapshot.model_count();
            (
                "the embedded snapshot".into(),
                snapshot.providers.len(),
                models,
            )
        }
    };
    let (providers, models) = (count(providers, "provider"), count(models, "model"));
    (followed, format!("{source} ({providers}, {models})"))
}
