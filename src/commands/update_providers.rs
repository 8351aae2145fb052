//! `crush update-providers`: runs [`crate::update`] and reports what it did
//! in text a person can read at a glance (counts first, then the changes
//! that matter most, in at most [`MAX_LINES`] lines no wider than the
//! terminal or [`MAX_COLUMNS`]), every change one to a line with
//! `--verbose`, or as one JSON object.

use std::io::{IsTerminal, Write};
use std::path::Path;

use serde_json::Value;
use unicode_width::UnicodeWidthStr;

use super::terminal::{self, fit, shorten};
use super::{
    Exit, cache_files, count, load_settings_tolerating, pinned_keys, print, say, write_json,
};
use crate::catalog::changes::{Changes, FieldChange, ProviderChanges};
use crate::catalog::printable;
use crate::commands::cli::UpdateArgs;
use crate::config::Format;
use crate::error::{Cause, program};
use crate::fetch::http::FetchError;
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

/// The exit code of `--check` when the update would change the cache.
pub const WOULD_CHANGE: u8 = 3;

/// `crush update-providers`.
pub fn run(cwd: &Path, args: UpdateArgs) -> Result<(), Exit> {
    let catwalk_url = process_env("CATWALK_URL").map(|v| v.to_string_lossy().into_owned());
    let source = source::resolve(args.source.as_deref(), catwalk_url.as_deref())
        .map_err(|e| Exit::Usage(e.to_string()))?;
    match &source {
        Source::File(path) if !path.exists() => {
            if let Some(url) = args.source.as_deref().and_then(source::meant_url) {
                return Err(Exit::Usage(format!(
                    "there is no file {}; for a URL, write its scheme: {url}",
                    path.display()
                )));
            }
        }
        Source::Stdin if std::io::stdin().is_terminal() => {
            return Err(Exit::Usage(format!(
                "`-` reads the catalog from standard input, which is this terminal; pipe one in: curl -s https://mirror.corp/catwalk/v2/providers | {} update-providers -",
                program()
            )));
        }
        _ => {}
    }
    let to_stdout = args.output.as_deref() == Some(Path::new(update::STDOUT));
    if to_stdout && args.json {
        return Err(Exit::Usage(
            "--output - and --json both write to standard output; give --output a file".into(),
        ));
    }
    let cache = cache_files()?;
    // A recovery command: a crushrc that cannot be read is skipped (it pins
    // no key), and so is a JSON config when the embedded snapshot, which
    // needs no signature, is asked for.
    let embedded = source == Source::Embedded;
    let settings = load_settings_tolerating(cwd, |format| format == Format::Crushrc || embedded)?;
    let keys = pinned_keys(&settings)?;
    if keys.is_none() && args.signature.is_some() {
        // A signature nothing checks would be a promise not kept.
        return Err(Exit::Usage(
            "--signature is checked against a pinned key, and none is pinned; set CRUSH_PROVIDER_PUBLIC_KEY (or options.provider_public_keys) to the mirror's public key".into(),
        ));
    }
    let options = UpdateOptions {
        dry_run: args.dry_run || args.check,
        output: args.output,
        sha256: args.sha256,
        timeout: args.timeout,
        progress: !args.quiet && !args.json,
        keys,
        signature: args.signature,
        allow_shrink: args.allow_shrink,
        allow_downgrade: args.allow_downgrade,
        interruptible: true,
    };
    let report = update::update_providers(&source, &cache, &options).map_err(|failure| {
        if let Cause::Read(ReadError::Fetch(FetchError::Interrupted(code))) = failure.cause {
            return Exit::Interrupted(code);
        }
        if args.verbose {
            Exit::FailedVerbose(Box::new(failure))
        } else {
            Exit::from(failure)
        }
    })?;
    print(|out| {
        if let Some(catalog) = &report.catalog {
            out.write_all(catalog)?;
        }
        if args.json {
            return write_json(out, &report);
        }
        if args.quiet {
            return Ok(());
        }
        for warning in &report.warnings {
            say(format_args!("warning: {warning}"));
        }
        let width = terminal::stdout_width().map_or(MAX_COLUMNS, |w| w.min(MAX_COLUMNS));
        let lines = if args.verbose {
            every_line(&report)
        } else {
            summary_lines(&report, width, MAX_LINES)
        };
        // With the catalog on standard output, the report goes beside it.
        if report.catalog.is_some() {
            lines.iter().for_each(|line| say(format_args!("{line}")));
            return Ok(());
        }
        lines.iter().try_for_each(|line| writeln!(out, "{line}"))
    })?;
    if args.check && !report.up_to_date {
        return Err(Exit::Code(WOULD_CHANGE));
    }
    Ok(())
}

/// What the update did, in one line, and where it wrote.
fn head(report: &UpdateReport) -> Vec<String> {
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
fn every_line(report: &UpdateReport) -> Vec<String> {
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
            lines.push(format!("      ~ model {}", m.model));
            for field in &m.fields {
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
fn summary_lines(report: &UpdateReport, width: usize, max_lines: usize) -> Vec<String> {
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
    // changes, most relevant first.
    let mut providers: Vec<&ProviderChanges> = changes.providers_changed.iter().collect();
    providers.sort_by_key(|p| std::cmp::Reverse(relevance(&p.fields)));
    let mut model_lines: Vec<(u8, String)> = Vec::new();
    for p in &providers {
        body.push(provider_line(p, width));
        for m in &p.models_changed {
            let head = format!(
                "      {}/{}: ",
                shorten(&p.provider, MAX_ID_COLUMNS),
                m.model
            );
            let fields: Vec<String> = m.fields.iter().map(field_text).collect();
            let list = fit(&fields, width.saturating_sub(head.width()));
            let line = if list.is_empty() {
                shorten(&format!("{head}{}", fields.join(", ")), width)
            } else {
                format!("{head}{list}")
            };
            model_lines.push((relevance(&m.fields), line));
        }
    }
    model_lines.sort_by_key(|(relevance, _)| std::cmp::Reverse(*relevance));
    body.extend(model_lines.into_iter().map(|(_, line)| line));
    let room = max_lines.saturating_sub(lines.len());
    if body.len() > room {
        let shown = room.saturating_sub(1);
        let hidden = body.len() - shown;
        body.truncate(shown);
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

/// How much a user of the catalog cares about these field changes: where
/// requests go first, then prices and context windows, then the rest.
fn relevance(fields: &[FieldChange]) -> u8 {
    fields
        .iter()
        .map(|f| match f.field.as_str() {
            "api_endpoint" | "api_key" | "default_headers" | "type" => 3,
            field if field.starts_with("cost_") || field == "context_window" => 2,
            "default_max_tokens" | "default_large_model_id" | "default_small_model_id" => 1,
            _ => 0,
        })
        .max()
        .unwrap_or(0)
}

/// `  ~ anthropic: name "A" → "B", +2 models (a, b), -1 model (c), 3
/// models changed`, fitted to `width`: the two id lists share what room is
/// left.
fn provider_line(p: &ProviderChanges, width: usize) -> String {
    let head = format!("  ~ {}: ", shorten(&p.provider, MAX_ID_COLUMNS));
    let fields: Vec<String> = p.fields.iter().map(field_text).collect();
    let changed = (!p.models_changed.is_empty())
        .then(|| format!("{} changed", count(p.models_changed.len(), "model")));
    let lists: Vec<(String, &Vec<String>)> = [('+', &p.models_added), ('-', &p.models_removed)]
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
fn value_text(value: &Value) -> String {
    match value {
        Value::Null => "(none)".into(),
        Value::String(s) if s.is_empty() => "(none)".into(),
        Value::String(s) => printable(s),
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::changes::ModelChange;

    fn ids(prefix: &str, n: usize) -> Vec<String> {
        (0..n).map(|i| format!("{prefix}-{i}")).collect()
    }

    fn report(changes: Changes) -> UpdateReport {
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
            catalog: None,
        }
    }

    fn changes(providers: usize, models: usize, id_len: usize) -> Changes {
        let long = "x".repeat(id_len);
        Changes {
            providers_added: ids(&format!("new{long}"), providers),
            providers_removed: ids("gone", providers),
            providers_changed: (0..providers)
                .map(|p| ProviderChanges {
                    provider: format!("provider-{p}-{long}"),
                    fields: vec![FieldChange {
                        field: "name".into(),
                        before: "A".into(),
                        after: format!("B{long}").into(),
                    }],
                    models_added: ids(&format!("model{long}"), models),
                    models_removed: ids("old", models / 2),
                    models_changed: (0..models)
                        .map(|m| ModelChange {
                            model: format!("m{m}{long}"),
                            fields: vec![FieldChange {
                                field: "cost_per_1m_in".into(),
                                before: 10.0.into(),
                                after: 99.0.into(),
                            }],
                        })
                        .collect(),
                })
                .collect(),
        }
    }

    /// Whatever the catalogs, the default report fits a screen: at most 60
    /// lines of at most the width, and says how much it left out.
    #[test]
    fn the_summary_fits_the_screen() {
        for width in [80, 120] {
            for (providers, models, id_len) in [
                (0, 0, 0),
                (1, 1, 0),
                (3, 5, 0),
                (40, 300, 10),
                (200, 2000, 0),
                (500, 3, 256),
            ] {
                let lines = summary_lines(
                    &report(changes(providers, models, id_len)),
                    width,
                    MAX_LINES,
                );
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
        }
    }

    #[test]
    fn prices_and_context_windows_are_named_old_and_new() {
        let changes = Changes {
            providers_changed: vec![ProviderChanges {
                provider: "anthropic".into(),
                fields: Vec::new(),
                models_added: Vec::new(),
                models_removed: Vec::new(),
                models_changed: vec![ModelChange {
                    model: "claude-x".into(),
                    fields: vec![
                        FieldChange {
                            field: "cost_per_1m_in".into(),
                            before: 10.0.into(),
                            after: 99.0.into(),
                        },
                        FieldChange {
                            field: "context_window".into(),
                            before: 200000.into(),
                            after: 5.into(),
                        },
                    ],
                }],
            }],
            ..Changes::default()
        };
        let lines = summary_lines(&report(changes), 80, MAX_LINES);
        assert!(
            lines.contains(&"  changes: providers 1 changed; models 1 changed".to_string()),
            "{lines:#?}"
        );
        assert!(
            lines.contains(
                &"      anthropic/claude-x: cost_per_1m_in 10 → 99, context_window 200000 → 5"
                    .to_string()
            ),
            "{lines:#?}"
        );
    }

    #[test]
    fn verbose_lists_one_change_a_line() {
        let lines = every_line(&report(changes(2, 3, 0)));
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
