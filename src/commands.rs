//! The read-side commands: `providers`, `models` and `dirs`. They load the
//! catalog through the start-up policy, exactly as Crush does when it starts.

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;

use crate::cache::{self, CacheFiles, Cached};
use crate::catalog::{self, Catalog, ValidationError};
use crate::cli::{Exit, ModelsArgs, ProvidersArgs, cache_files, count, print, say, write_json};
use crate::embedded;
use crate::error::{Cause, Failure};
use crate::paths::{self, process_env};
use crate::settings::{self, Setting, Settings};
use crate::startup::{self, Provenance, StartupCatalog, StartupOptions};
use crate::summary::Listed;

fn load_settings(cwd: &Path) -> Result<Settings, Exit> {
    let settings = settings::resolve(cwd, &process_env).map_err(|e| {
        let source = e.path.display().to_string();
        let place = e.line.map(|l| format!("line {l}: ")).unwrap_or_default();
        Exit::Failed(Failure::new(
            source,
            Cause::Config(format!("{place}{}", e.message)),
        ))
    })?;
    for warning in &settings.warnings {
        say(format_args!("warning: {warning}"));
    }
    Ok(settings)
}

/// Runs the start-up policy with the given settings on the cache `files`,
/// printing its warnings.
fn startup_catalog(settings: &Settings, files: &CacheFiles) -> StartupCatalog {
    let env_text = |name| process_env(name).map(|v| v.to_string_lossy().into_owned());
    let mut warnings = Vec::new();
    let (url, timeout) = startup::options_from_env(
        env_text("CATWALK_URL").as_deref(),
        env_text(startup::TIMEOUT_ENV).as_deref(),
        &mut warnings,
    );
    let options = StartupOptions {
        auto_update: settings.auto_update.value,
        default_providers: settings.default_providers.value,
        url,
        timeout,
    };
    let mut loaded = startup::load(files, &options);
    for warning in warnings {
        say(format_args!("warning: {warning}"));
    }
    print_warnings(&mut loaded);
    loaded
}

fn print_warnings(loaded: &mut StartupCatalog) {
    for warning in loaded.warnings.drain(..) {
        say(format_args!("warning: {warning}"));
    }
}

/// The start-up catalog's bytes, printing the warning that reading them may
/// add (see [`StartupCatalog::bytes`]).
fn catalog_bytes(loaded: &mut StartupCatalog) -> &[u8] {
    loaded.bytes();
    print_warnings(loaded);
    loaded.bytes()
}

/// `crush providers`.
pub fn providers(cwd: &Path, args: &ProvidersArgs) -> Result<(), Exit> {
    let settings = load_settings(cwd)?;
    let files = cache_files()?;
    if args.status {
        return status(&settings, &files, args.json);
    }
    let mut loaded = startup_catalog(&settings, &files);
    if args.json {
        return print(|out| out.write_all(catalog_bytes(&mut loaded)));
    }
    if loaded.provenance == Provenance::Disabled {
        return print(|out| {
            writeln!(
                out,
                "No providers: default-providers is {}.",
                settings.default_providers
            )
        });
    }
    let listed = list(&mut loaded, &files)?;
    print(|out| write_providers(out, &loaded, &listed))
}

fn write_providers(
    out: &mut impl Write,
    loaded: &StartupCatalog,
    listed: &[Listed],
) -> io::Result<()> {
    writeln!(out, "{}", header(loaded))?;
    let rows: Vec<[String; 4]> = listed
        .iter()
        .map(|p| {
            [
                printable_cell(&p.id),
                printable_cell(p.name.as_deref().unwrap_or_default()),
                printable_cell(p.kind.as_deref().unwrap_or_default()),
                p.models.to_string(),
            ]
        })
        .collect();
    write_table(out, ["ID", "NAME", "TYPE", "MODELS"], &rows)
}

/// The providers of the start-up catalog for listing: from the cache's
/// index when it describes these bytes, which spares parsing them on every
/// start; otherwise from the bytes themselves.
fn list(loaded: &mut StartupCatalog, files: &CacheFiles) -> Result<Vec<Listed>, Exit> {
    let indexed = loaded
        .sha256
        .and_then(|sha256| Listed::from_index(&files.index, &catalog::hex(&sha256)));
    indexed
        .or_else(|| Listed::parse(catalog_bytes(loaded)))
        .ok_or_else(|| {
            let bug = ValidationError("valid, yet it cannot be listed (a bug)".into());
            Exit::Failed(Failure::new("start-up catalog", bug))
        })
}

/// A cell as is when it is plain text; quoted and escaped when it holds
/// control characters, which a hand-edited index could carry.
fn printable_cell(text: &str) -> String {
    if catalog::has_control(text) {
        catalog::printable(text)
    } else {
        text.to_owned()
    }
}

fn header(loaded: &StartupCatalog) -> String {
    let age = loaded
        .fetched_at
        .map(|t| ago(cache::now().saturating_sub(t)));
    let from = loaded
        .source
        .as_deref()
        .map(|s| format!(" from {s}"))
        .unwrap_or_default();
    match loaded.provenance {
        Provenance::Fresh => format!("Providers: fresh{from}, fetched just now"),
        Provenance::Revalidated => format!(
            "Providers: cached{from}, confirmed current by the server (fetched {})",
            age.unwrap_or_else(|| "at an unknown time".into())
        ),
        Provenance::Cached => format!(
            "Providers: cached{from}, {}",
            age.map_or_else(|| "of unknown age".to_string(), |a| format!("fetched {a}"))
        ),
        Provenance::Embedded => format!(
            "Providers: embedded snapshot of {}",
            embedded::snapshot_date()
        ),
        Provenance::Disabled => "No providers".into(),
    }
}

/// `3 hours ago`.
pub fn ago(seconds: u64) -> String {
    let (n, unit) = match seconds {
        0..60 => return "just now".into(),
        60..3600 => (seconds / 60, "minute"),
        3600..86400 => (seconds / 3600, "hour"),
        _ => (seconds / 86400, "day"),
    };
    format!("{} ago", count(n as usize, unit))
}

fn write_table<const N: usize>(
    out: &mut impl Write,
    head: [&str; N],
    rows: &[[String; N]],
) -> io::Result<()> {
    let mut widths = head.map(str::len);
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut text = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == N {
                text.push_str(cell);
            } else {
                text.push_str(&format!("{cell:<width$}  ", width = widths[i]));
            }
        }
        text.trim_end().to_string()
    };
    writeln!(out, "{}", line(head.to_vec()))?;
    for row in rows {
        writeln!(out, "{}", line(row.iter().map(String::as_str).collect()))?;
    }
    Ok(())
}

/// One model in `models --json`.
#[derive(Debug, Serialize)]
struct ModelRow<'a> {
    provider: &'a str,
    id: &'a str,
    name: Option<&'a str>,
    context_window: Option<i64>,
    default_max_tokens: Option<i64>,
    cost_per_1m_in: Option<f64>,
    cost_per_1m_out: Option<f64>,
    can_reason: Option<bool>,
    supports_attachments: Option<bool>,
}

/// `crush models`.
pub fn models(cwd: &Path, args: &ModelsArgs) -> Result<(), Exit> {
    let settings = load_settings(cwd)?;
    let mut loaded = startup_catalog(&settings, &cache_files()?);
    if loaded.provenance == Provenance::Disabled {
        return print(|out| {
            if args.json {
                writeln!(out, "[]")
            } else {
                writeln!(
                    out,
                    "No models: default-providers is {}.",
                    settings.default_providers
                )
            }
        });
    }
    // Valid by construction; a failure here would be a bug, reported as
    // such rather than a panic.
    let catalog = catalog::validate(catalog_bytes(&mut loaded))
        .map_err(|e| Exit::Failed(Failure::new("start-up catalog", e)))?;
    print(|out| write_models(out, args, &catalog))
}

fn write_models(out: &mut impl Write, args: &ModelsArgs, catalog: &Catalog<'_>) -> io::Result<()> {
    let terms: Vec<String> = args.terms.iter().map(|t| t.to_lowercase()).collect();
    let mut rows = Vec::new();
    for provider in &catalog.providers {
        for model in provider.models() {
            let name = model.name.as_ref().map(|n| n.as_str());
            let haystack = [
                provider.id.as_str(),
                provider.name.as_str(),
                model.id.as_str(),
                name.unwrap_or(""),
            ]
            .map(str::to_lowercase);
            if terms
                .iter()
                .all(|t| haystack.iter().any(|h| h.contains(t.as_str())))
            {
                rows.push(ModelRow {
                    provider: provider.id.as_str(),
                    id: model.id.as_str(),
                    name,
                    context_window: model.context_window,
                    default_max_tokens: model.default_max_tokens,
                    cost_per_1m_in: model.cost_per_1m_in,
                    cost_per_1m_out: model.cost_per_1m_out,
                    can_reason: model.can_reason,
                    supports_attachments: model.supports_attachments,
                });
            }
        }
    }
    if args.json {
        return write_json(out, &rows);
    }
    if rows.is_empty() {
        say(format_args!("No model matches {}.", args.terms.join(" ")));
        return Ok(());
    }
    let table: Vec<[String; 4]> = rows
        .iter()
        .map(|r| {
            [
                format!("{}/{}", r.provider, r.id),
                r.name.unwrap_or("").to_string(),
                r.context_window.map(tokens).unwrap_or_default(),
                match (r.cost_per_1m_in, r.cost_per_1m_out) {
                    (Some(i), Some(o)) => format!("${i}/${o}"),
                    _ => String::new(),
                },
            ]
        })
        .collect();
    write_table(out, ["MODEL", "NAME", "CONTEXT", "$/1M IN/OUT"], &table)
}

fn tokens(n: i64) -> String {
    match n {
        1_000_000.. if n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        1_000.. => format!("{}K", n / 1_000),
        _ => n.to_string(),
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
    etag: Option<String>,
    last_modified: Option<String>,
    sha256: Option<String>,
    providers: Option<usize>,
    models: Option<usize>,
    embedded_snapshot: &'static str,
    provider_auto_update: SettingJson,
    default_providers: SettingJson,
}

#[derive(Debug, Serialize)]
struct SettingJson {
    value: bool,
    origin: String,
}

impl From<&Setting> for SettingJson {
    fn from(s: &Setting) -> Self {
        SettingJson {
            value: s.value,
            origin: s.origin.to_string(),
        }
    }
}

fn status(settings: &Settings, files: &CacheFiles, json: bool) -> Result<(), Exit> {
    let mut cached = cache::read(files);
    let mut status = Status {
        cache: files.catalog.display().to_string(),
        cache_state: "missing",
        problem: None,
        source: None,
        fetched_at: None,
        age_seconds: None,
        etag: None,
        last_modified: None,
        sha256: None,
        providers: None,
        models: None,
        embedded_snapshot: embedded::snapshot_date(),
        provider_auto_update: (&settings.auto_update).into(),
        default_providers: (&settings.default_providers).into(),
    };
    match &mut cached {
        Err(e) => {
            status.cache_state = "unreadable";
            status.problem = Some(e.to_string());
        }
        Ok(None) => {}
        Ok(Some(cached)) => describe_cache(cached, &mut status),
    }
    print(|out| {
        if json {
            write_json(out, &status)
        } else {
            write_status(out, &status, settings)
        }
    })
}

fn write_status(out: &mut impl Write, status: &Status, settings: &Settings) -> io::Result<()> {
    let mut row = |key: &str, value: String| writeln!(out, "{:<21} {value}", format!("{key}:"));
    let state = match (status.cache_state, &status.problem) {
        ("valid", _) => String::new(),
        ("missing", _) => format!(
            " (none: the embedded snapshot of {} is used)",
            status.embedded_snapshot
        ),
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
    row("embedded snapshot", status.embedded_snapshot.to_string())?;
    row("provider-auto-update", settings.auto_update.to_string())?;
    row("default-providers", settings.default_providers.to_string())
}

fn describe_cache(cached: &mut Cached, status: &mut Status) {
    status.sha256 = Some(catalog::hex(&cached.sha256));
    match cached.bytes().map(catalog::validate) {
        Ok(Ok(catalog)) => {
            status.cache_state = "valid";
            status.providers = Some(catalog.providers.len());
            status.models = Some(catalog.model_count());
        }
        Ok(Err(e)) => {
            status.cache_state = "invalid";
            status.problem = Some(e.to_string());
        }
        Err(e) => {
            status.cache_state = "unreadable";
            status.problem = Some(e.to_string());
        }
    }
    if let Some(at) = cached.written_at() {
        let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(at);
        status.fetched_at = Some(humantime::format_rfc3339_seconds(time).to_string());
        status.age_seconds = Some(cache::now().saturating_sub(at));
    }
    let validators = cached.validators();
    status.source = cached.state.as_ref().map(|s| s.source.clone());
    status.etag = validators.etag;
    status.last_modified = validators.last_modified;
}

/// `crush dirs`.
pub fn dirs() -> Result<(), Exit> {
    let config = paths::config_dir(&process_env).map_err(|e| Failure::new("config folder", e))?;
    let data = paths::data_dir(&process_env).map_err(|e| Failure::new("data folder", e))?;
    let files = cache::CacheFiles::in_dir(&data);
    print(|out| {
        writeln!(
            out,
            "config: {}\ndata:   {}\ncache:  {}",
            config.display(),
            data.display(),
            files.catalog.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_naturally() {
        assert_eq!(ago(5), "just now");
        assert_eq!(ago(60), "1 minute ago");
        assert_eq!(ago(7200), "2 hours ago");
        assert_eq!(ago(86400 * 3 + 5), "3 days ago");
    }

    #[test]
    fn token_counts_are_short() {
        assert_eq!(tokens(200_000), "200K");
        assert_eq!(tokens(1_000_000), "1M");
        assert_eq!(tokens(1_048_576), "1048K");
        assert_eq!(tokens(512), "512");
    }

    #[test]
    fn tables_align_columns() {
        let mut out = Vec::new();
        write_table(
            &mut out,
            ["A", "BB"],
            &[["long".into(), "x".into()], ["s".into(), "".into()]],
        )
        .unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "A     BB\nlong  x\ns\n");
    }
}
