//! `crush update-providers`: runs [`crate::update`] and reports what it did
//! in text a person can read at a glance (counts first, then the changes
//! that matter most, in at most [`MAX_LINES`] lines no wider than the
//! terminal or [`MAX_COLUMNS`]), every change one to a line with
//! `--verbose`, or as one JSON object.

use std::io::{IsTerminal, Write};
use std::path::Path;

use unicode_width::UnicodeWidthStr;

use super::context::{Context, cache_files, pinned_keys};
use super::terminal::{self, fit, shorten};
use super::{Exit, count, print, say, write_catalog, write_json};
use crate::catalog::changes::{Changes, FieldChange, ModelChange, ProviderChanges, Scalar};
use crate::catalog::escape::{json_text, safe};
use crate::catalog::{Target, printable};
use crate::commands::cli::{Provider, UpdateArgs};
use crate::config::Format;
use crate::error::{Cause, program};
use crate::fetch::http::{Bearer, FetchError};
use crate::fetch::source::ReadError;
use crate::fetch::source::{self, Source};
use crate::store::paths::process_env;
use crate::update::{self, UpdateOptions, UpdateReport};

/// Most lines of the default text report.
pub const MAX_LINES: usize = 60;
/// Widest line of the default text report, and of a terminal's.
pub const MAX_COLUMNS: usize = 120;
/// Widest a provider id is shown in a shortened list.
const MAX_ID_COLUMNS: usize = 40;
/// The fewest columns a model's id is shortened to, to make room for a
/// change of it shown whole.
const MIN_ID_COLUMNS: usize = 20;

/// The exit code of `--check` when the update would change the cache.
pub const WOULD_CHANGE: u8 = 3;

/// `crush update-providers`.
pub fn run(context: &Context, args: UpdateArgs) -> Result<(), Exit> {
    let target = match args.provider {
        Provider::Catwalk => Target::Catalog,
        Provider::Hyper => Target::Hyper,
    };
    let source = source_of(context, target, args.source.as_deref())?;
    let to_stdout = args.output.as_deref() == Some(Path::new(update::STDOUT));
    if to_stdout && args.json {
        return Err(Exit::Usage(
            "--output - and --json both write to standard output; give --output a file".into(),
        ));
    }
    let cache = cache_files()?.with_target(target);
    if target == Target::Hyper && source == Source::Embedded {
        return Err(Exit::Usage(format!(
            "--source hyper embedded: this build carries no snapshot of Hyper's provider (only of the Catwalk catalog); give Hyper's URL or a file, or remove {} to have Crush use its own embedded Hyper provider",
            cache.catalog.display()
        )));
    }
    // A recovery command: a crushrc that cannot be read is skipped (it pins
    // no key), and so is a JSON config when the embedded snapshot, which
    // needs no signature, is asked for.
    let embedded = source == Source::Embedded;
    let settings = context.settings_tolerating(|format| format == Format::Crushrc || embedded)?;
    let keys = pinned_keys(&settings)?;
    if keys.is_none() && args.signature.is_some() {
        // A signature nothing checks would be a promise not kept.
        return Err(Exit::Usage(
            "--signature is checked against a pinned key, and none is pinned; set CRUSH_PROVIDER_PUBLIC_KEY (or options.provider_public_keys) to the mirror's public key".into(),
        ));
    }
    let options = UpdateOptions {
        dry_run: args.dry_run || args.check,
        output: args.output.clone(),
        sha256: args.sha256.clone(),
        timeout: args.timeout,
        progress: !args.quiet && !args.json,
        keys,
        signature: args.signature.clone(),
        allow_shrink: args.allow_shrink,
        allow_downgrade: args.allow_downgrade,
        allow_key_move: args.allow_key_move,
        interruptible: true,
        bearer: bearer(context, &settings, target, &source),
    };
    let shown = update::update_providers(&source, &cache, &options, |report| show(report, &args))
        .map_err(|failure| {
        if let Cause::Read(ReadError::Fetch(FetchError::Interrupted(code))) = failure.cause {
            return Exit::Interrupted(code);
        }
        if args.verbose {
            Exit::FailedVerbose(Box::new(failure))
        } else {
            Exit::from(failure)
        }
    })?;
    let up_to_date = shown?;
    if args.check && !up_to_date {
        return Err(Exit::Code(WOULD_CHANGE));
    }
    Ok(())
}

/// The Hyper key a request for Hyper's provider from `source` carries
/// (`HYPER_API_KEY`, else the config's), told under `--debug`.
fn bearer(
    context: &Context,
    settings: &crate::config::Settings,
    target: Target,
    source: &Source,
) -> Option<Bearer> {
    let Source::Url(url) = source else {
        return None;
    };
    if target != Target::Hyper {
        return None;
    }
    let key = crate::config::front::hyper_key_in(&settings.files, &process_env);
    let shown = source::redacted(url.as_str());
    match &key {
        Some(crate::config::front::HyperKey {
            origin,
            value: Some(_),
        }) => context.say_debug(format_args!(
            "GET {shown}: with Authorization: Bearer, the Hyper key of {}",
            crate::config::shown(origin)
        )),
        Some(crate::config::front::HyperKey { origin, value: None }) => {
            context.say_debug(format_args!(
                "GET {shown}: without a key: the Hyper key of {} is set by a command only a shell can run",
                crate::config::shown(origin)
            ))
        }
        None => context.say_debug(format_args!(
            "GET {shown}: without a key: none is set (HYPER_API_KEY, providers.hyper.api_key)"
        )),
    }
    key.and_then(|k| k.value).map(Bearer)
}

/// The source `SOURCE` (else `CATWALK_URL`, else the public server; for
/// Hyper's provider `HYPER_URL`, else Hyper's server) names, or the usage
/// error that a source written like a URL, or read from a terminal, is.
fn source_of(context: &Context, target: Target, arg: Option<&str>) -> Result<Source, Exit> {
    let env_url = process_env(source::url_env(target)).map(|v| v.to_string_lossy().into_owned());
    let (text, given) = source::given_for(target, arg, env_url.as_deref());
    let source = source::resolve_for(target, arg, env_url.as_deref())
        .map_err(|e| Exit::Usage(e.to_string()))?;
    context.say_debug(format_args!(
        "SOURCE: {} ({})",
        crate::config::shown(&source::redacted(text)),
        match given {
            source::Given::Argument => "the argument".to_string(),
            source::Given::Variable(name) => super::inputs::env_origin(name).unwrap_or_default(),
            source::Given::Default => "default".to_string(),
        }
    ));
    match &source {
        Source::File(path) if !path.exists() => {
            if let Some(url) = source::meant_url(text) {
                return Err(Exit::Usage(match given {
                    source::Given::Variable(name) => format!(
                        "{name}={} names no file; for a URL, write its scheme: {name}={url}",
                        crate::catalog::quoted(text)
                    ),
                    _ => format!(
                        "there is no file {}; for a URL, write its scheme: {url}",
                        path.display()
                    ),
                }));
            }
        }
        Source::Url(url) => context.say_debug(format_args!(
            "GET {shown}, then {shown}.minisig when a key is pinned; proxy: {}",
            super::inputs::route_of(url),
            shown = source::redacted(url.as_str())
        )),
        Source::Stdin if std::io::stdin().is_terminal() => {
            return Err(Exit::Usage(format!(
                "`-` reads the catalog from standard input, which is this terminal; pipe one in: curl -s https://mirror.corp/catwalk/v2/providers | {} update-providers -",
                program()
            )));
        }
        _ => {}
    }
    Ok(source)
}

/// Prints the report as `args` ask; whether the target was up to date.
fn show(report: &UpdateReport<'_>, args: &UpdateArgs) -> Result<bool, Exit> {
    print(|out| {
        if let Some(catalog) = report.catalog {
            write_catalog(out, catalog)?;
        }
        if args.json {
            return write_json(out, report);
        }
        // What a person allowed, or what was not trusted, is told however
        // quiet they asked it to be.
        let warnings = if args.quiet {
            &report.notices
        } else {
            &report.warnings
        };
        for warning in warnings {
            say(format_args!("warning: {warning}"));
        }
        if args.quiet {
            return Ok(());
        }
        let width = terminal::stdout_width().map_or(MAX_COLUMNS, |w| w.min(MAX_COLUMNS));
        let lines = if args.verbose {
            every_line(report)
        } else {
            summary_lines(report, width, MAX_LINES)
        };
        // With the catalog on standard output, the report goes beside it.
        if report.catalog.is_some() {
            lines.iter().for_each(|line| say(format_args!("{line}")));
            return Ok(());
        }
        // Ids, names and values come from the catalogs.
        lines
            .iter()
            .try_for_each(|line| writeln!(out, "{}", safe(line)))
    })?;
    Ok(report.up_to_date)
}

/// What the update did, in one line, and where it wrote.
fn head(report: &UpdateReport<'_>) -> Vec<String> {
    let counts = format!(
        "{}, {}",
        count(report.providers, "provider"),
        count(report.models, "model")
    );
    let mut lines = Vec::new();
    if report.up_to_date {
        lines.push(format!(
            "Already up to date: {} holds the same catalog as {} ({counts})",
            report.target.display(),
            report.source
        ));
    } else if report.catalog.is_some() {
        lines.push(format!(
            "Checked providers from {}: {counts}; written to standard output",
            report.source
        ));
    } else {
        let done = if report.written { "Updated" } else { "Checked" };
        lines.push(format!("{done} providers from {}: {counts}", report.source));
        let target = if report.written {
            "written to"
        } else {
            "dry run: not written to"
        };
        lines.push(format!("  {target} {}", report.target.display()));
    }
    lines.push(format!("  sha256 {}", report.sha256));
    lines
}

/// The report with every change, one to a line.
fn every_line(report: &UpdateReport<'_>) -> Vec<String> {
    let mut lines = head(report);
    let Some(changes) = report.changes.as_ref().filter(|_| !report.up_to_date) else {
        return lines;
    };
    lines.extend(counts(changes, usize::MAX));
    for id in &changes.providers_added {
        lines.push(format!("  + provider {id}"));
    }
    for id in &changes.providers_removed {
        lines.push(format!("  - provider {id}"));
    }
    for p in &changes.providers_changed {
        lines.push(format!("  ~ provider {}", p.provider));
        for field in &p.fields {
            lines.push(format!("      {}", field_text(field)));
        }
        for id in &p.models_added {
            lines.push(format!("      + model {id}"));
        }
        for id in &p.models_removed {
            lines.push(format!("      - model {id}"));
        }
        for m in &p.models_changed {
            lines.push(format!("      ~ model {}", m.model()));
            for field in &m.fields() {
                lines.push(format!("          {}", field_text(field)));
            }
        }
    }
    lines
}

/// The report in at most `max_lines` lines of at most `width` columns:
/// counts first, then the changes that matter most to a user of the
/// catalog (where requests go, then providers, then prices and context
/// windows), then how much was left out.
fn summary_lines(report: &UpdateReport<'_>, width: usize, max_lines: usize) -> Vec<String> {
    let mut lines = head(report);
    let Some(changes) = report.changes.as_ref().filter(|_| !report.up_to_date) else {
        return lines;
    };
    lines.extend(counts(changes, width));
    let mut body: Vec<String> = Vec::new();
    for (sign, ids) in [
        ('+', &changes.providers_added),
        ('-', &changes.providers_removed),
    ] {
        if !ids.is_empty() {
            let head = format!("  {sign} {}: ", count(ids.len(), "provider"));
            let list = fit(ids, width.saturating_sub(head.width()));
            body.push(format!("{head}{list}").trim_end().to_owned());
        }
    }
    // Per provider, the line of its own changes; then its models' field
    // changes, most relevant first. Only the model lines there is room for
    // are written out: a whole new catalog changes every model.
    let mut providers: Vec<&ProviderChanges> = changes.providers_changed.iter().collect();
    providers.sort_by_key(|p| std::cmp::Reverse(relevance(&p.fields)));
    body.extend(providers.iter().map(|p| provider_line(p, width)));
    let mut models: Vec<(u8, &str, &ModelChange)> = providers
        .iter()
        .flat_map(|p| p.models_changed.iter().map(|m| (p.provider, m)))
        .map(|(provider, m)| (relevance(&m.fields()), provider, m))
        .collect();
    models.sort_by_key(|(relevance, _, _)| std::cmp::Reverse(*relevance));
    let room = max_lines.saturating_sub(lines.len());
    let shown = if body.len() + models.len() > room {
        room.saturating_sub(1)
    } else {
        room
    };
    let hidden = (body.len() + models.len()).saturating_sub(shown);
    body.truncate(shown);
    let models_shown = shown.saturating_sub(body.len());
    body.extend(
        models
            .iter()
            .take(models_shown)
            .map(|(_, provider, m)| model_line(provider, m, width)),
    );
    if hidden > 0 {
        let lines = if hidden == 1 { "line" } else { "lines" };
        body.push(format!(
            "  … and {hidden} more {lines}; --verbose lists every change (--json too)"
        ));
    }
    lines.extend(body);
    lines
}

/// `changes: providers 1 added, 2 changed; models 3 added`: counts of
/// everything that changed, wrapped to `width`.
fn counts(changes: &Changes, width: usize) -> Vec<String> {
    if changes.is_empty() {
        return vec![
            "  no change Crush would see (the bytes differ only in what it does not read)".into(),
        ];
    }
    let (added, removed, changed) = changes.model_counts();
    let group = |what: &str, counts: [usize; 3]| {
        let parts: Vec<String> = counts
            .iter()
            .zip(["added", "removed", "changed"])
            .filter(|(n, _)| **n > 0)
            .map(|(n, how)| format!("{n} {how}"))
            .collect();
        (!parts.is_empty()).then(|| format!("{what} {}", parts.join(", ")))
    };
    let groups: Vec<String> = [
        group(
            "providers",
            [
                changes.providers_added.len(),
                changes.providers_removed.len(),
                changes.providers_changed.len(),
            ],
        ),
        group("models", [added, removed, changed]),
    ]
    .into_iter()
    .flatten()
    .collect();
    let line = format!("  changes: {}", groups.join("; "));
    terminal::wrap(&line, Some(width), "    ")
        .lines()
        .map(str::to_owned)
        .collect()
}

/// `      anthropic/claude-x: cost_per_1m_in 3 → 4, …`, fitted to `width`.
fn model_line(provider: &str, m: &ModelChange, width: usize) -> String {
    let id = format!("{}/{}", shorten(provider, MAX_ID_COLUMNS), m.model());
    // The context window, then prices, first: on a narrow screen the line
    // has room for one or two fields, and in the catalog's order four
    // prices come before the context window.
    let mut fields = m.fields();
    fields.sort_by_key(|f| {
        (
            std::cmp::Reverse(field_relevance(f.field)),
            f.field != "context_window",
        )
    });
    let fields: Vec<String> = fields.iter().map(field_text).collect();
    let head = format!("      {id}: ");
    let list = fit(&fields, width.saturating_sub(head.width()));
    if !list.is_empty() {
        return format!("{head}{list}");
    }
    // Not even the first field with its `… and N more`: that field whole
    // and `…` for the rest, the id shortened to make room (a number cut
    // short reads as another number; an id ending in `…` does not).
    let first = match fields.as_slice() {
        [] => String::new(),
        [only] => only.clone(),
        [first, ..] => format!("{first}, …"),
    };
    let id_room = width.saturating_sub("      : ".len() + first.width());
    if id_room >= MIN_ID_COLUMNS {
        format!("      {}: {first}", shorten(&id, id_room))
    } else {
        // A long value (a list, a text) is cut: the id stays whole.
        shorten(&format!("{head}{first}"), width)
    }
}

/// How much a user of the catalog cares about these field changes: the
/// most of any of them.
fn relevance(fields: &[FieldChange]) -> u8 {
    fields
        .iter()
        .map(|f| field_relevance(f.field))
        .max()
        .unwrap_or(0)
}

/// How much a user of the catalog cares about a change of `field`: where
/// requests go first, then prices and context windows, then the rest.
fn field_relevance(field: &str) -> u8 {
    match field {
        "api_endpoint" | "api_key" | "default_headers" | "type" => 3,
        "cost_per_1m_in" | "cost_per_1m_out" | "context_window" => 2,
        "cost_per_1m_in_cached"
        | "cost_per_1m_out_cached"
        | "default_max_tokens"
        | "default_large_model_id"
        | "default_small_model_id" => 1,
        _ => 0,
    }
}

/// `  ~ anthropic: name "A" → "B", +2 models (a, b), -1 model (c), 3
/// models changed`, fitted to `width`: the two id lists share what room is
/// left.
fn provider_line(p: &ProviderChanges, width: usize) -> String {
    let head = format!("  ~ {}: ", shorten(p.provider, MAX_ID_COLUMNS));
    let fields: Vec<String> = p.fields.iter().map(field_text).collect();
    let changed = (!p.models_changed.is_empty())
        .then(|| format!("{} changed", count(p.models_changed.len(), "model")));
    let lists: Vec<(String, &Vec<&str>)> = [('+', &p.models_added), ('-', &p.models_removed)]
        .into_iter()
        .filter(|(_, ids)| !ids.is_empty())
        .map(|(sign, ids)| (format!("{sign}{}", count(ids.len(), "model")), ids))
        .collect();
    // What is shown whatever the room: each part and its `, `; each list
    // also costs ` (` and `)`.
    let fixed = head.width()
        + fields
            .iter()
            .chain(&changed)
            .map(|s| s.width() + 2)
            .sum::<usize>()
        + lists
            .iter()
            .map(|(counted, _)| counted.width() + 5)
            .sum::<usize>();
    let share = width
        .saturating_sub(fixed)
        .checked_div(lists.len())
        .unwrap_or(0);
    let mut parts = fields;
    for (counted, ids) in lists {
        parts.push(match fit(ids, share) {
            list if list.is_empty() => counted,
            list => format!("{counted} ({list})"),
        });
    }
    parts.extend(changed);
    shorten(&format!("{head}{}", parts.join(", ")), width)
}

/// `cost_per_1m_in 10 → 99`.
fn field_text(field: &FieldChange) -> String {
    format!(
        "{} {} → {}",
        field.field,
        value_text(&field.before),
        value_text(&field.after)
    )
}

/// A value as a person reads it: numbers plain, strings quoted.
fn value_text(value: &Scalar<'_>) -> String {
    match *value {
        Scalar::None | Scalar::Text("") => "(none)".into(),
        Scalar::Text(s) => printable(s),
        Scalar::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
        Scalar::Int(i) => i.to_string(),
        Scalar::Bool(b) => b.to_string(),
        _ => json_text(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::changes::compare;
    use crate::catalog::validate;

    fn report(changes: Changes<'_>) -> UpdateReport<'_> {
        UpdateReport {
            source: "https://catwalk.charm.land/v2/providers".into(),
            providers: 40,
            models: 1517,
            target: "/home/u/.local/share/crush/providers.json".into(),
            written: true,
            up_to_date: false,
            sha256: "ab".repeat(32),
            signed_at: None,
            changes: Some(changes),
            warnings: Vec::new(),
            notices: Vec::new(),
            catalog: None,
        }
    }

    /// The report of an update from the catalog `old` to `new`.
    fn with_report<R>(old: &str, new: &str, f: impl FnOnce(&UpdateReport<'_>) -> R) -> R {
        let (old, new) = (
            validate(old.as_bytes()).unwrap(),
            validate(new.as_bytes()).unwrap(),
        );
        f(&report(compare(&old, &new)))
    }

    /// Two catalogs: `providers` providers removed, as many added, and as
    /// many renamed, each of these with `models` models added, as many
    /// given a new price and half as many removed; every id `id_len`
    /// characters longer.
    fn catalogs(providers: usize, models: usize, id_len: usize) -> (String, String) {
        let long = "x".repeat(id_len);
        let model = |id: &str, price: u32| format!(r#"{{"id":"{id}","cost_per_1m_in":{price}}}"#);
        let provider = |id: &str, name: &str, models: Vec<String>| {
            format!(
                r#"{{"id":"{id}","name":"{name}","models":[{}]}}"#,
                models.join(",")
            )
        };
        let (mut old, mut new) = (Vec::new(), Vec::new());
        for p in 0..providers {
            old.push(provider(&format!("gone-{p}"), "G", Vec::new()));
            new.push(provider(&format!("new{long}-{p}"), "N", Vec::new()));
            let id = format!("provider-{p}-{long}");
            let long = long.as_str();
            let changed = |price| (0..models).map(move |m| model(&format!("m{m}{long}"), price));
            old.push(provider(
                &id,
                "A",
                changed(10)
                    .chain((0..models / 2).map(|m| model(&format!("old-{m}"), 1)))
                    .collect(),
            ));
            new.push(provider(
                &id,
                &format!("B{long}"),
                changed(99)
                    .chain((0..models).map(|m| model(&format!("model{long}-{m}"), 1)))
                    .collect(),
            ));
        }
        let list = |providers: Vec<String>| format!("[{}]", providers.join(","));
        if providers == 0 {
            let same = list(vec![provider("same", "S", Vec::new())]);
            return (same.clone(), same);
        }
        (list(old), list(new))
    }

    /// Whatever the catalogs, the default report fits a screen: at most 60
    /// lines of at most the width, and says how much it left out.
    #[test]
    fn the_summary_fits_the_screen() {
        for (providers, models, id_len) in [
            (0, 0, 0),
            (1, 1, 0),
            (3, 5, 0),
            (40, 300, 10),
            (200, 2000, 0),
            (500, 3, 230),
        ] {
            let (old, new) = catalogs(providers, models, id_len);
            with_report(&old, &new, |report| {
                for width in [80, 120] {
                    let lines = summary_lines(report, width, MAX_LINES);
                    assert!(lines.len() <= MAX_LINES, "{providers}: {}", lines.len());
                    for line in &lines {
                        // The head names the user's own source and target.
                        if line.starts_with("Updated") || line.starts_with("  written") {
                            continue;
                        }
                        assert!(line.width() <= width, "{} columns: {line}", line.width());
                    }
                    if providers >= 40 {
                        assert!(
                            lines
                                .last()
                                .unwrap()
                                .contains("--verbose lists every change")
                        );
                    }
                }
            });
        }
    }

    #[test]
    fn prices_and_context_windows_are_named_old_and_new() {
        let lines = with_report(
            r#"[{"id":"anthropic","name":"A","models":[{"id":"claude-x","cost_per_1m_in":10,"context_window":200000}]}]"#,
            r#"[{"id":"anthropic","name":"A","models":[{"id":"claude-x","cost_per_1m_in":99,"context_window":5}]}]"#,
            |report| summary_lines(report, 80, MAX_LINES),
        );
        assert!(
            lines.contains(&"  changes: providers 1 changed; models 1 changed".to_string()),
            "{lines:#?}"
        );
        assert!(
            lines.contains(
                &"      anthropic/claude-x: context_window 200000 → 5, cost_per_1m_in 10 → 99"
                    .to_string()
            ),
            "{lines:#?}"
        );
    }

    /// Where a screen has room for one field, it is the context window, not
    /// the prices that come before it in a model; a field is shown whole or
    /// not at all.
    #[test]
    fn a_narrow_line_shows_the_context_window_first() {
        for (old, new, line) in [
            (
                r#"[{"id":"openrouter","name":"O","models":[{"id":"vendor/model-x","cost_per_1m_in_cached":1,"cost_per_1m_out_cached":2,"context_window":163840,"default_max_tokens":10}]}]"#,
                r#"[{"id":"openrouter","name":"O","models":[{"id":"vendor/model-x","cost_per_1m_in_cached":5,"cost_per_1m_out_cached":6,"context_window":128000,"default_max_tokens":20}]}]"#,
                "      openrouter/vendor/model-x: context_window 163840 → 128000, … and 3 more",
            ),
            (
                r#"[{"id":"openrouter","name":"O","models":[{"id":"deepseek/deepseek-chat","cost_per_1m_in":0.32,"cost_per_1m_out":0.89,"context_window":163840}]}]"#,
                r#"[{"id":"openrouter","name":"O","models":[{"id":"deepseek/deepseek-chat","cost_per_1m_in":0.2574,"cost_per_1m_out":1.0287,"context_window":128000}]}]"#,
                "      openrouter/deepseek/deepseek-chat: context_window 163840 → 128000, …",
            ),
        ] {
            let lines = with_report(old, new, |report| summary_lines(report, 80, MAX_LINES));
            assert!(lines.iter().any(|l| l == line), "{lines:#?}");
        }
    }

    #[test]
    fn verbose_lists_one_change_a_line() {
        let (old, new) = catalogs(2, 3, 0);
        let lines = with_report(&old, &new, every_line);
        assert!(lines.contains(&"  + provider new-0".to_string()));
        assert!(lines.contains(&"      + model model-2".to_string()));
        assert!(lines.contains(&"          cost_per_1m_in 10 → 99".to_string()));
        assert!(lines[4..].iter().all(|l| !l.contains(", ")), "{lines:#?}");
    }

    #[test]
    fn an_unchanged_catalog_is_already_up_to_date() {
        let mut unchanged = report(Changes::default());
        unchanged.up_to_date = true;
        unchanged.written = false;
        let lines = summary_lines(&unchanged, 80, MAX_LINES);
        assert!(lines[0].starts_with("Already up to date"), "{lines:?}");
        assert_eq!(lines.len(), 2);
    }
}
