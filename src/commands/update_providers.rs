//! `crush update-providers`: runs [`crate::update`] and reports what it did
//! in text a person can read at a glance (at most [`MAX_LINES`] lines of
//! [`MAX_COLUMNS`] columns, whatever the catalogs), in full with
//! `--verbose`, or as one JSON object.

use std::io::{self, Write};

use unicode_width::UnicodeWidthStr;

use std::path::Path;

use super::{Exit, cache_files, count, load_settings, pinned_keys, print, say, write_json};
use crate::catalog::changes::{Changes, ModelChanges};
use crate::commands::cli::UpdateArgs;
use crate::fetch::source;
use crate::store::paths::process_env;
use crate::update::{self, UpdateOptions, UpdateReport};

/// Most lines of the default text report.
pub const MAX_LINES: usize = 60;
/// Widest line of the default text report that lists catalog contents.
pub const MAX_COLUMNS: usize = 120;
/// Widest a provider id is shown in a shortened list.
const MAX_ID_COLUMNS: usize = 40;

/// `crush update-providers`.
pub fn run(cwd: &Path, args: UpdateArgs) -> Result<(), Exit> {
    let catwalk_url = process_env("CATWALK_URL").map(|v| v.to_string_lossy().into_owned());
    let source = source::resolve(args.source.as_deref(), catwalk_url.as_deref())
        .map_err(|e| Exit::Usage(e.to_string()))?;
    let cache = cache_files()?;
    let settings = load_settings(cwd)?;
    let options = UpdateOptions {
        dry_run: args.dry_run,
        output: args.output,
        sha256: args.sha256,
        timeout: args.timeout,
        progress: !args.quiet && !args.json,
        keys: pinned_keys(&settings)?,
        signature: args.signature,
        allow_shrink: args.allow_shrink,
        allow_downgrade: args.allow_downgrade,
    };
    let report = update::update_providers(&source, &cache, &options).map_err(|failure| {
        if args.verbose {
            Exit::FailedVerbose(Box::new(failure))
        } else {
            Exit::from(failure)
        }
    })?;
    print(|out| {
        if args.json {
            write_json(out, &report)
        } else if args.quiet {
            Ok(())
        } else {
            for warning in &report.warnings {
                say(format_args!("warning: {warning}"));
            }
            write_report(out, &report, args.verbose)
        }
    })
}

fn write_report(out: &mut impl Write, report: &UpdateReport, verbose: bool) -> io::Result<()> {
    let counts = format!("{} providers, {} models", report.providers, report.models);
    let (done, target) = if report.written {
        ("Updated", "written to")
    } else {
        ("Checked", "dry run: not written to")
    };
    // The source and the target are the user's own; the lines with them
    // are as long as they are.
    writeln!(out, "{done} providers from {}: {counts}", report.source)?;
    writeln!(out, "  {target} {}", report.target.display())?;
    let Some(changes) = &report.changes else {
        return Ok(());
    };
    let lines = if verbose {
        every_change(changes)
    } else {
        change_summary(changes, MAX_LINES - 2)
    };
    for line in lines {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// The changes, one line per kind and per provider, every id listed.
fn every_change(changes: &Changes) -> Vec<String> {
    let mut lines = provider_lines(changes, usize::MAX);
    for m in &changes.models {
        let mut parts = Vec::new();
        for (sign, ids) in [('+', &m.added), ('-', &m.removed)] {
            if !ids.is_empty() {
                let n = count(ids.len(), "model");
                parts.push(format!("{sign}{n} ({})", ids.join(", ")));
            }
        }
        lines.push(format!("  ~ {}: {}", m.provider, parts.join(", ")));
    }
    lines
}

/// The changes in at most `max_lines` lines of at most [`MAX_COLUMNS`]
/// columns: counts, the first ids that fit, and how many more.
fn change_summary(changes: &Changes, max_lines: usize) -> Vec<String> {
    let mut lines = provider_lines(changes, MAX_COLUMNS);
    let room = max_lines.saturating_sub(lines.len());
    let shown = if changes.models.len() <= room {
        changes.models.len()
    } else {
        room.saturating_sub(1)
    };
    lines.extend(changes.models[..shown].iter().map(model_line));
    let hidden = changes.models.len() - shown;
    if hidden > 0 {
        lines.push(format!(
            "  … and {} with model changes; --verbose lists them all",
            count(hidden, "more provider")
        ));
    }
    lines
}

/// `no changes`, or the providers added and removed, each list fitted into
/// `width` columns.
fn provider_lines(changes: &Changes, width: usize) -> Vec<String> {
    if changes.is_empty() {
        return vec!["  no changes to providers or models".into()];
    }
    let mut lines = Vec::new();
    for (sign, ids) in [
        ('+', &changes.providers_added),
        ('-', &changes.providers_removed),
    ] {
        if !ids.is_empty() {
            let head = format!("  {sign} {}: ", count(ids.len(), "provider"));
            let list = fit(ids, width.saturating_sub(head.width()));
            lines.push(format!("{head}{list}"));
        }
    }
    lines
}

/// `  ~ provider: +3 models (a, b, … and 1 more), -1 model (c)` in at most
/// [`MAX_COLUMNS`] columns; the two lists share what room is left.
fn model_line(m: &ModelChanges) -> String {
    let lists: Vec<(char, &Vec<String>)> = [('+', &m.added), ('-', &m.removed)]
        .into_iter()
        .filter(|(_, ids)| !ids.is_empty())
        .collect();
    let head = format!("  ~ {}: ", shorten(&m.provider, MAX_ID_COLUMNS));
    let counts: Vec<String> = lists
        .iter()
        .map(|(sign, ids)| format!("{sign}{}", count(ids.len(), "model")))
        .collect();
    // Each list costs its count, ` (` and `)`, and `, ` between lists.
    let fixed = head.width() + counts.iter().map(|c| c.width() + 3).sum::<usize>() + 2;
    let share = MAX_COLUMNS.saturating_sub(fixed) / lists.len().max(1);
    let parts: Vec<String> = lists
        .iter()
        .zip(&counts)
        .map(|((_, ids), counted)| match fit(ids, share) {
            list if list.is_empty() => counted.clone(),
            list => format!("{counted} ({list})"),
        })
        .collect();
    format!("{head}{}", parts.join(", "))
}

/// As many of `ids` as fit in `width` columns, `, `-separated, then
/// `… and N more` for the rest; empty when not even one fits.
fn fit(ids: &[String], width: usize) -> String {
    let mut shown = String::new();
    for (i, id) in ids.iter().enumerate() {
        let rest = ids.len() - i - 1;
        let more = if rest == 0 {
            String::new()
        } else {
            format!(", … and {rest} more")
        };
        let sep = if shown.is_empty() { "" } else { ", " };
        if shown.width() + sep.len() + id.width() + more.width() > width {
            let left = ids.len() - i;
            if shown.is_empty() {
                return String::new();
            }
            return format!("{shown}, … and {left} more");
        }
        shown.push_str(sep);
        shown.push_str(id);
    }
    shown
}

/// `text`, cut to `width` columns with `…` when longer.
fn shorten(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_owned();
    }
    let mut out = String::new();
    for c in text.chars() {
        if out.width() + c.to_string().width() + 1 > width {
            break;
        }
        out.push(c);
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(prefix: &str, n: usize) -> Vec<String> {
        (0..n).map(|i| format!("{prefix}-{i}")).collect()
    }

    fn changes(providers: usize, models: usize, id_len: usize) -> Changes {
        let long = "x".repeat(id_len);
        Changes {
            providers_added: ids(&format!("new{long}"), providers),
            providers_removed: ids("gone", providers),
            models: (0..providers)
                .map(|p| ModelChanges {
                    provider: format!("provider-{p}-{long}"),
                    added: ids(&format!("model{long}"), models),
                    removed: ids("old", models / 2),
                })
                .collect(),
            security: Vec::new(),
        }
    }

    /// Whatever the catalogs, the default report fits a screen: at most
    /// 60 lines (two of them the summary and the target) of at most 120
    /// columns, and says how much it left out.
    #[test]
    fn the_summary_fits_in_sixty_lines_of_120_columns() {
        for (providers, models, id_len) in [
            (0, 0, 0),
            (1, 1, 0),
            (3, 5, 0),
            (40, 300, 10),
            (200, 2000, 0),
            (500, 3, 256),
        ] {
            let changes = changes(providers, models, id_len);
            let lines = change_summary(&changes, MAX_LINES - 2);
            assert!(lines.len() <= MAX_LINES - 2, "{providers}: {}", lines.len());
            for line in &lines {
                assert!(
                    line.width() <= MAX_COLUMNS,
                    "{} columns: {line}",
                    line.width()
                );
            }
            if providers >= 200 {
                // The summary and the target, providers added and removed,
                // then one line per provider but the last, which counts the
                // rest.
                let last = lines.last().unwrap();
                let hidden = providers - (MAX_LINES - 2 - 2 - 1);
                assert_eq!(
                    last,
                    &format!(
                        "  … and {hidden} more providers with model changes; --verbose lists them all"
                    )
                );
            }
        }
    }

    #[test]
    fn lists_show_the_first_ids_that_fit_then_how_many_more() {
        let ids = ids("model", 30);
        assert_eq!(fit(&ids[..2], 120), "model-0, model-1");
        let list = fit(&ids, 60);
        assert!(list.starts_with("model-0, model-1, "), "{list}");
        assert!(list.width() <= 60, "{list}");
        let shown = list.matches(", ").count();
        assert!(
            list.ends_with(&format!("… and {} more", 30 - shown)),
            "{list}"
        );
        assert_eq!(fit(&ids, 5), "", "not even one fits");
        assert_eq!(fit(&["日本語モデル".to_string()], 12), "日本語モデル");
        assert_eq!(fit(&["日本語モデル".to_string()], 11), "");
    }

    #[test]
    fn model_lines_count_both_lists_and_shorten_long_provider_ids() {
        let m = ModelChanges {
            provider: "anthropic".into(),
            added: vec!["claude-a".into(), "claude-b".into()],
            removed: vec!["claude-old".into()],
        };
        assert_eq!(
            model_line(&m),
            "  ~ anthropic: +2 models (claude-a, claude-b), -1 model (claude-old)"
        );
        let m = ModelChanges {
            provider: "p".repeat(300),
            added: ids("m", 500),
            removed: Vec::new(),
        };
        let line = model_line(&m);
        assert!(line.width() <= MAX_COLUMNS, "{line}");
        assert!(
            line.contains(&format!("{}…: +500 models (m-0, ", "p".repeat(39))),
            "{line}"
        );
    }

    #[test]
    fn verbose_lists_every_id() {
        let changes = changes(100, 50, 0);
        let lines = every_change(&changes);
        assert_eq!(lines.len(), 2 + 100);
        assert!(lines[2].contains("model-49)"), "{}", lines[2]);
    }
}
