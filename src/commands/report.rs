//! The text report of `update-providers` ([`UpdateReport`]), as a person
//! reads it. It opens with the line that says what was read; then come the
//! changes that matter most to a user of the catalog (where requests go,
//! providers added and removed, then context windows and prices), each
//! shown whole: an id is never shortened (a line too narrow for it wraps
//! it), a changed map shows the key that changed, and a value too long to
//! share a line stands on lines of its own, old then new; last, where the
//! eye lands, the counts and what happened (written, dry run, up to date,
//! verified, what the write replaced).
//!
//! It fits the room it is given, a terminal's width and height, or 80
//! columns and [`PIPED_LINES`] lines on a pipe, by leaving out the least
//! relevant changes and saying how many (`… 12 more changes (--verbose)`);
//! `--verbose` lists every change, one to a line.

use super::change_text::parts;
use super::terminal::{Atom, flow, wrap};
use super::{ago, count};
use crate::catalog::changes::{Changes, FieldChange, ModelChange, ProviderChanges};
use crate::fetch::source::Source;
use crate::store::state;
use crate::update::{Output, Replaced, UpdateReport};

/// Widest line of the report on a pipe (or a file), but for `--verbose`.
pub(super) const PIPED_COLUMNS: usize = 80;
/// Most lines of the report on a pipe.
const PIPED_LINES: usize = 60;
/// The fewest lines the changes are given, however short the terminal.
const MIN_BODY_LINES: usize = 3;
/// Most lines a list of ids takes in the summary before `… and N more`.
const LIST_LINES: usize = 3;

/// The report of an update written to `to`: with `verbose`, every change
/// one to a line, wrapped to `screen`'s width (whole lines without one);
/// else in at most `screen`'s rows of at most its columns (80 columns and
/// [`PIPED_LINES`] without one; a word longer than the width, a path,
/// stands alone on its line): the head, the most relevant changes, how
/// many were left out, and the foot.
pub(super) fn lines(
    report: &UpdateReport<'_>,
    to: &Output,
    verbose: bool,
    screen: Option<(usize, usize)>,
) -> Vec<String> {
    let (width, height) = screen.unwrap_or((PIPED_COLUMNS, PIPED_LINES));
    let wrap_at = (!verbose || screen.is_some()).then_some(width);
    let head = wrapped(&headline(report, to), wrap_at, 2);
    let foot = foot(report, to, wrap_at);
    let body = match report.changes.as_ref().filter(|_| !report.up_to_date) {
        None => Vec::new(),
        Some(changes) if verbose => every_change(changes, wrap_at),
        Some(changes) => {
            let room = height.saturating_sub(head.len() + foot.len());
            body(changes, width, room.max(MIN_BODY_LINES))
        }
    };
    [head, body, foot].concat()
}

/// Every change, one to a line.
fn every_change(changes: &Changes<'_>, width: Option<usize>) -> Vec<String> {
    let item = |indent: usize, what: &str, id: &str| {
        let head = format!("{}{what} ", " ".repeat(indent));
        flow(head, &[Atom::text(id)], width, indent + 2)
    };
    let fields = |indent: usize, fields: &[FieldChange<'_>]| -> Vec<String> {
        let parts = fields.iter().flat_map(|f| parts(f));
        parts
            .flat_map(|part| flow(" ".repeat(indent), &[part], width, indent))
            .collect()
    };
    let mut lines = Vec::new();
    for (what, ids) in [
        ("+ provider", &changes.providers_added),
        ("- provider", &changes.providers_removed),
    ] {
        ids.iter().for_each(|id| lines.extend(item(2, what, id)));
    }
    for p in &changes.providers_changed {
        lines.extend(item(2, "~ provider", p.provider));
        lines.extend(fields(6, &p.fields));
        for (what, ids) in [("+ model", &p.models_added), ("- model", &p.models_removed)] {
            ids.iter().for_each(|id| lines.extend(item(6, what, id)));
        }
        for m in &p.models_changed {
            lines.extend(item(6, "~ model", m.model));
            lines.extend(fields(10, &m.fields()));
        }
    }
    lines
}

/// The first line: what was read, and what became of it in a word.
fn headline(report: &UpdateReport<'_>, to: &Output) -> String {
    let counts = format!(
        "{}, {}",
        count(report.providers, "provider"),
        count(report.models, "model")
    );
    let source = &report.source;
    if report.up_to_date {
        let the = if *source == Source::Embedded.to_string() {
            "the "
        } else {
            ""
        };
        let target = report.target.display();
        return format!(
            "Already up to date: {target} holds the same catalog as {the}{source} ({counts})"
        );
    }
    let checked = format!("Checked providers from {source}: {counts}");
    match to {
        Output::Stdout => format!("{checked}; written to standard output"),
        Output::Cache if report.written => format!("Updated providers from {source}: {counts}"),
        _ => checked,
    }
}

/// The last lines, where the eye lands: how much changed, the digest, who
/// signed it, and what happened to the target.
fn foot(report: &UpdateReport<'_>, to: &Output, width: Option<usize>) -> Vec<String> {
    let mut texts = Vec::new();
    if let Some(changes) = report.changes.as_ref().filter(|_| !report.up_to_date) {
        texts.push(counts(changes));
    }
    texts.push(format!("  sha256 {}", report.sha256));
    if let Some(at) = report.signed_at {
        let key = report
            .signed_by
            .as_deref()
            .map(|id| format!(" by key {id}"));
        let (key, at) = (key.unwrap_or_default(), state::rfc3339(at));
        texts.push(format!("  verified: signed{key} at {at}"));
    }
    if let Some(url) = &report.settled {
        texts.push(format!(
            "  settled: the refresh held from {url} is not applied; the catalog in use is kept"
        ));
    }
    let target = report.target.display();
    match to {
        Output::Stdout => {}
        _ if report.up_to_date => {}
        // Short, so that the counts stay in the last rows.
        Output::Cache if !report.written && report.replaced.is_none() => {
            texts.push("  dry run: nothing written (there is no cache yet)".into());
        }
        _ if !report.written => texts.push("  dry run: nothing written".into()),
        Output::File(_) => texts.push(format!("  written to {target}; the cache is not touched")),
        Output::Cache => texts.push(match report.replaced.as_ref().map(replaced_text) {
            Some(held) => format!("  written to {target}, replacing {held}"),
            None => format!("  written to {target} (nothing was there before)"),
        }),
    }
    texts
        .iter()
        .flat_map(|text| wrapped(text, width, 4))
        .collect()
}

/// What the cache held: `a catalog fetched from https://… 3 days ago`.
fn replaced_text(replaced: &Replaced) -> String {
    let when = replaced
        .written_at
        .map(|at| ago(state::now().saturating_sub(at)));
    let when = when.map(|ago| format!(" {ago}")).unwrap_or_default();
    match replaced.source.as_deref() {
        _ if replaced.stand_in => {
            "the embedded snapshot, standing in for a first fetch that did not happen".into()
        }
        Some(source) if source == Source::Embedded.to_string() => {
            format!("a catalog installed from the embedded snapshot{when}")
        }
        Some(source) if crate::fetch::source::is_http(source) => {
            format!("a catalog fetched from {source}{when}")
        }
        Some(source) => format!("a catalog read from {source}{when}"),
        None => format!("a catalog written{when} by another program (such as Crush itself)"),
    }
}

/// `  changes: providers 1 added, 2 changed; models 3 added`.
fn counts(changes: &Changes<'_>) -> String {
    if changes.is_empty() {
        return "  no change Crush would see (the bytes differ only in what it does not read)"
            .into();
    }
    let (added, removed, changed) = changes.model_counts();
    let (of_added, of_removed) = changes.models_of_providers;
    let providers = [
        changes.providers_added.len(),
        changes.providers_removed.len(),
        changes.providers_changed.len(),
    ];
    let models = [added + of_added, removed + of_removed, changed];
    let groups: Vec<String> = [("providers", providers), ("models", models)]
        .into_iter()
        .filter_map(|(what, counts)| {
            let parts: Vec<String> = counts
                .iter()
                .zip(["added", "removed", "changed"])
                .filter(|(n, _)| **n > 0)
                .map(|(n, how)| format!("{n} {how}"))
                .collect();
            (!parts.is_empty()).then(|| format!("{what} {}", parts.join(", ")))
        })
        .collect();
    format!("  changes: {}", groups.join("; "))
}

/// One change of the summary.
enum Change<'r, 'a> {
    /// Providers added (`+`) or removed (`-`).
    Providers(char, &'r [&'a str]),
    /// A provider's own fields and its models' counts.
    Provider(&'r ProviderChanges<'a>),
    /// A model's fields, shown under its provider.
    Model(&'r ModelChange<'a>),
}

/// A change, how much it matters, and the change it is shown under.
struct Entry<'r, 'a> {
    change: Change<'r, 'a>,
    relevance: u8,
    parent: Option<usize>,
}

impl Entry<'_, '_> {
    /// Its lines, each list of ids in at most `list_lines`.
    fn lines(&self, width: usize, list_lines: usize) -> Vec<String> {
        match &self.change {
            Change::Providers(sign, ids) => {
                let head = format!("  {sign} {}: ", count(ids.len(), "provider"));
                listed(head, ids, width, list_lines)
            }
            Change::Provider(p) => provider_lines(p, width, list_lines),
            Change::Model(m) => {
                let parts: Vec<Atom> = sorted(&m.fields()).iter().flat_map(|f| parts(f)).collect();
                flow(format!("      {}: ", m.model), &parts, Some(width), 8)
            }
        }
    }
}

/// The changes in document order (providers added and removed; then each
/// changed provider, most relevant first, with its models, most relevant
/// first), each with its relevance.
fn entries<'r, 'a>(changes: &'r Changes<'a>) -> Vec<Entry<'r, 'a>> {
    let mut entries: Vec<Entry<'_, '_>> = [
        ('+', &changes.providers_added),
        ('-', &changes.providers_removed),
    ]
    .into_iter()
    .filter(|(_, ids)| !ids.is_empty())
    .map(|(sign, ids)| Entry {
        change: Change::Providers(sign, ids),
        relevance: 3,
        parent: None,
    })
    .collect();
    let own = |p: &ProviderChanges<'_>| {
        let lists = !p.models_added.is_empty() || !p.models_removed.is_empty();
        relevance(&p.fields).max(if lists { 2 } else { 0 })
    };
    let mut providers: Vec<&ProviderChanges<'_>> = changes.providers_changed.iter().collect();
    providers.sort_by_key(|p| std::cmp::Reverse(own(p)));
    for p in providers {
        let parent = Some(entries.len());
        entries.push(Entry {
            change: Change::Provider(p),
            relevance: own(p),
            parent: None,
        });
        let mut models: Vec<Entry<'_, '_>> = p
            .models_changed
            .iter()
            .map(|m| Entry {
                relevance: relevance(&m.fields()),
                change: Change::Model(m),
                parent,
            })
            .collect();
        models.sort_by_key(|e| std::cmp::Reverse(e.relevance));
        entries.extend(models);
    }
    entries
}

/// The most relevant changes in `room` lines of `width` columns, in
/// document order, then how many were left out.
fn body(changes: &Changes<'_>, width: usize, room: usize) -> Vec<String> {
    let entries = entries(changes);
    // Each change takes a line at least: when they are more than the room,
    // some are left out, and the last line says how many. Lists whole,
    // when everything fits so; else each in a few lines.
    if entries.len() <= room {
        for list_lines in [usize::MAX, LIST_LINES] {
            let lines: Vec<String> = entries
                .iter()
                .flat_map(|e| e.lines(width, list_lines))
                .collect();
            if lines.len() <= room {
                return lines;
            }
        }
    }
    let mut rendered: Vec<Option<Vec<String>>> = vec![None; entries.len()];
    let chosen = choose(&entries, room, |i| {
        rendered[i]
            .get_or_insert_with(|| entries[i].lines(width, LIST_LINES))
            .len()
    });
    let hidden = chosen.iter().filter(|c| !**c).count();
    let (mut lines, mut left_out) = (Vec::new(), Vec::new());
    for ((entry, rendered), chosen) in entries.iter().zip(rendered).zip(chosen) {
        match entry.change {
            _ if chosen => lines.extend(rendered.unwrap_or_default()),
            Change::Provider(p) => left_out.push(p.provider),
            _ => {}
        }
    }
    if !left_out.is_empty() {
        let head = "  ~ also changed: ".into();
        lines.extend(listed(head, &left_out, width, LIST_LINES));
    }
    if hidden > 0 {
        let changes = if hidden == 1 { "change" } else { "changes" };
        lines.push(format!("  … {hidden} more {changes} (--verbose)"));
    }
    lines
}

/// Which of `entries` the body shows in `room` lines (`lines_of` an
/// entry's count): every provider's own line first, so that none is left
/// out whole (in the order of `entries`: the most relevant first); then
/// the models' lines, the most relevant first. The room keeps a line for
/// how many were left out, and a few more to name the providers left out
/// when they do not all fit.
fn choose(
    entries: &[Entry<'_, '_>],
    room: usize,
    mut lines_of: impl FnMut(usize) -> usize,
) -> Vec<bool> {
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by_key(|&i| {
        let relevance = std::cmp::Reverse(entries[i].relevance);
        entries[i].parent.map(|_| relevance)
    });
    let providers: usize = order
        .iter()
        .filter(|&&i| entries[i].parent.is_none())
        .map(|&i| lines_of(i))
        .sum();
    let reserve = if providers < room { 1 } else { 1 + LIST_LINES };
    let room = room.saturating_sub(reserve);
    let mut chosen = vec![false; entries.len()];
    let (mut used, mut passed) = (0, 0);
    for i in order {
        // A change that does not fit is passed over for a shorter one;
        // past a few such, the room is as full as it gets.
        if used >= room || passed > 4 * room {
            break;
        }
        // A model whose provider did not fit does not either.
        if entries[i].parent.is_some_and(|p| !chosen[p]) {
            continue;
        }
        let cost = lines_of(i);
        if used + cost > room {
            passed += 1;
            continue;
        }
        used += cost;
        chosen[i] = true;
    }
    chosen
}

/// `  ~ anthropic: name "A" → "B", +2 models (a, b), -1 model (c), 3
/// models changed`, wrapped to `width`, each list of ids kept to a few
/// lines.
fn provider_lines(p: &ProviderChanges<'_>, width: usize, list_lines: usize) -> Vec<String> {
    let mut atoms: Vec<Atom> = p.fields.iter().flat_map(|f| parts(f)).collect();
    for (sign, ids) in [('+', &p.models_added), ('-', &p.models_removed)] {
        if ids.is_empty() {
            continue;
        }
        // The count, then as many ids as keep the list within its lines;
        // the first may start a line of its own.
        let list = |shown: usize| {
            let mut list = ids_and_more(&ids[..shown], ids.len() - shown);
            list[0] = Atom::joined(&format!("({}", list[0].text));
            list.last_mut().expect("an id").text.push(')');
            list.insert(
                0,
                Atom::text(&format!("{sign}{}", count(ids.len(), "model"))),
            );
            list
        };
        let fits = |shown| flow(String::new(), &list(shown), Some(width), 4).len() <= list_lines;
        atoms.extend(list(most(ids.len(), fits)));
    }
    if !p.models_changed.is_empty() {
        let changed = count(p.models_changed.len(), "model");
        atoms.push(Atom::text(&format!("{changed} changed")));
    }
    flow(format!("  ~ {}: ", p.provider), &atoms, Some(width), 4)
}

/// `  + 3 providers: a, b, c`, in at most `list_lines` lines, then `… and N
/// more`.
fn listed(head: String, ids: &[&str], width: usize, list_lines: usize) -> Vec<String> {
    let list = |shown: usize| ids_and_more(&ids[..shown], ids.len() - shown);
    let fits = |shown| flow(head.clone(), &list(shown), Some(width), 4).len() <= list_lines;
    flow(head.clone(), &list(most(ids.len(), fits)), Some(width), 4)
}

/// `ids`, then `… and N more (--verbose)` for `more` left out.
fn ids_and_more(ids: &[&str], more: usize) -> Vec<Atom> {
    let mut atoms: Vec<Atom> = ids.iter().map(|id| Atom::text(id)).collect();
    if more > 0 {
        atoms.push(Atom::text(&format!("… and {more} more (--verbose)")));
    }
    atoms
}

/// The largest `n` of `0..=len` for which `fits(n)` holds (true for 0 or
/// not: then 0), `fits` holding for every smaller `n` too: `len` when it
/// fits, else counted up from 0 (a list cut to a few lines is short).
fn most(len: usize, fits: impl Fn(usize) -> bool) -> usize {
    match fits(len) {
        true => len,
        false => (0..len).take_while(|&n| fits(n + 1)).count(),
    }
}

/// A model's fields, the context window and prices first: the order a
/// user of the catalog reads them in.
fn sorted<'f, 'a>(fields: &'f [FieldChange<'a>]) -> Vec<&'f FieldChange<'a>> {
    let mut fields: Vec<&FieldChange<'_>> = fields.iter().collect();
    fields.sort_by_key(|f| {
        let relevance = std::cmp::Reverse(field_relevance(f.field));
        (relevance, f.field != "context_window")
    });
    fields
}

/// How much a user of the catalog cares about these field changes: the
/// most of any of them.
fn relevance(fields: &[FieldChange<'_>]) -> u8 {
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

/// `text` wrapped at word boundaries to `width` ([`wrap`]), as lines.
fn wrapped(text: &str, width: Option<usize>, indent: usize) -> Vec<String> {
    let text = wrap(text, width, &" ".repeat(indent));
    text.lines().map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(report: &UpdateReport<'_>, to: &Output, width: usize, height: usize) -> Vec<String> {
        lines(report, to, false, Some((width, height)))
    }

    fn every_line(report: &UpdateReport<'_>, to: &Output, width: Option<usize>) -> Vec<String> {
        assert!(width.is_none());
        lines(report, to, true, None)
    }
    use crate::catalog::changes::compare;
    use crate::catalog::validate;
    use unicode_width::UnicodeWidthStr;

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
            signed_by: None,
            replaced: None,
            settled: None,
            refused: false,
            changes: Some(changes),
            warnings: Vec::new(),
            notices: Vec::new(),
            catalog: None,
        }
    }

    /// The summary of an update from the catalog `old` to `new`.
    fn summary_of(old: &str, new: &str, width: usize, height: usize) -> Vec<String> {
        with_report(old, new, |report| {
            summary(report, &Output::Cache, width, height)
        })
    }

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

    /// Whatever the catalogs, the summary fits its room: no more lines
    /// than the height, none wider than the width (but the head's own
    /// path or source, a word that stands alone), it says how much it left
    /// out, and it ends with what happened.
    #[test]
    fn the_summary_fits_its_room_and_ends_with_what_happened() {
        for (providers, models, id_len) in [
            (0, 0, 0),
            (1, 1, 0),
            (3, 5, 0),
            (40, 300, 10),
            (200, 2000, 0),
            (500, 3, 230),
        ] {
            let (old, new) = catalogs(providers, models, id_len);
            for (width, height) in [(80, 30), (80, 60), (120, 40), (40, 20)] {
                let lines = summary_of(&old, &new, width, height);
                assert!(lines.len() <= height, "{providers}: {} lines", lines.len());
                for line in &lines {
                    // A word wider than the line (the source) stands alone.
                    assert!(
                        line.width() <= width || !line.trim().contains(' '),
                        "{} columns: {line}",
                        line.width()
                    );
                }
                assert!(
                    lines.last().unwrap().starts_with("  written to ")
                        || lines.last().unwrap().starts_with("    "),
                    "{lines:#?}"
                );
                if providers >= 40 {
                    assert!(
                        lines
                            .iter()
                            .any(|l| l.ends_with("more changes (--verbose)")),
                        "{lines:#?}"
                    );
                }
            }
        }
    }

    #[test]
    fn prices_and_context_windows_are_named_old_and_new() {
        let lines = summary_of(
            r#"[{"id":"anthropic","name":"A","models":[{"id":"claude-x","cost_per_1m_in":10,"context_window":200000}]}]"#,
            r#"[{"id":"anthropic","name":"A","models":[{"id":"claude-x","cost_per_1m_in":99,"context_window":5}]}]"#,
            80,
            30,
        );
        assert_eq!(
            lines[2..5],
            [
                "  ~ anthropic: 1 model changed",
                "      claude-x: context_window 200000 → 5, cost_per_1m_in 10 → 99",
                "  changes: providers 1 changed; models 1 changed",
            ],
            "{lines:#?}"
        );
    }

    /// A changed header shows its key, old and new; a long value stands
    /// whole on lines of its own; a long id is never shortened.
    #[test]
    fn what_changed_is_shown_whole() {
        let lines = summary_of(
            r#"[{"id":"bedrock","name":"B","default_large_model_id":"us.anthropic.claude-opus-4-1-20250805-v1:0","default_headers":{"HTTP-Referer":"https://charm.land","X-Title":"Crush"},
                "models":[{"id":"accounts/fireworks/models/qwen3-coder-480b-a35b-instruct-and-then-some","context_window":1048576}]}]"#,
            r#"[{"id":"bedrock","name":"B","default_large_model_id":"us.anthropic.claude-opus-5-20251101-v1:0","default_headers":{"HTTP-Referer":"https://charm.land","X-Title":"Evil"},
                "models":[{"id":"accounts/fireworks/models/qwen3-coder-480b-a35b-instruct-and-then-some","context_window":1000000}]}]"#,
            80,
            30,
        );
        let text = lines.join("\n");
        assert!(
            text.contains(
                "  ~ bedrock: default_large_model_id\n      \"us.anthropic.claude-opus-4-1-20250805-v1:0\"\n    → \"us.anthropic.claude-opus-5-20251101-v1:0\",\n    default_headers[\"X-Title\"] \"Crush\" → \"Evil\""
            ),
            "{text}"
        );
        assert!(!text.contains("HTTP-Referer"), "{text}");
        assert!(
            text.contains("      accounts/fireworks/models/qwen3-coder-480b-a35b-instruct-and-then-some:\n        context_window 1048576 → 1000000"),
            "{text}"
        );
        assert!(!text.contains('…'), "{text}");
        // Narrower than the id: wrapped where the line ends, not cut.
        let narrow = summary_of(
            r#"[{"id":"p","name":"P","models":[{"id":"a-model-id-of-fifty-characters-is-long-enough-xx","context_window":1}]}]"#,
            r#"[{"id":"p","name":"P","models":[{"id":"a-model-id-of-fifty-characters-is-long-enough-xx","context_window":2}]}]"#,
            30,
            30,
        );
        let joined: String = narrow.iter().map(|l| l.trim()).collect();
        assert!(
            joined.contains("a-model-id-of-fifty-characters-is-long-enough-xx:"),
            "{narrow:#?}"
        );
    }

    /// Provider options change key by key, as headers do.
    #[test]
    fn provider_options_show_the_key_that_changed() {
        let lines = summary_of(
            r#"[{"id":"p","name":"P","models":[{"id":"m","options":{"provider_options":{"a":1,"b":{"x":[1]}}}}]}]"#,
            r#"[{"id":"p","name":"P","models":[{"id":"m","options":{"provider_options":{"a":1,"b":{"x":[2]},"c":true}}}]}]"#,
            80,
            30,
        );
        assert!(
            lines.contains(
                &"      m: options.provider_options[\"b\"] {\"x\":[1]} → {\"x\":[2]},".to_string()
            ) && lines
                .contains(&"        options.provider_options[\"c\"] (none) → true".to_string()),
            "{lines:#?}"
        );
    }

    /// Of changes as relevant, a provider's own (a new model) goes before
    /// its models' (a new price): many prices do not hide a new model.
    #[test]
    fn new_models_are_not_crowded_out_by_prices() {
        let models = |price: u32| {
            (0..40)
                .map(|m| format!(r#"{{"id":"m{m}","cost_per_1m_in":{price}}}"#))
                .collect::<Vec<_>>()
                .join(",")
        };
        let old = format!(
            r#"[{{"id":"a","name":"A","models":[{}]}},{{"id":"z","name":"Z","models":[{{"id":"x"}}]}}]"#,
            models(1)
        );
        let new = format!(
            r#"[{{"id":"a","name":"A","models":[{}]}},{{"id":"z","name":"Z","models":[{{"id":"x"}},{{"id":"y"}}]}}]"#,
            models(2)
        );
        let lines = summary_of(&old, &new, 80, 15);
        assert!(
            lines.contains(&"  ~ z: +1 model (y)".to_string()),
            "{lines:#?}"
        );
        assert!(lines.len() <= 15, "{lines:#?}");
    }

    /// Issue 29 findings, W2: every changed provider has a line of its
    /// own, however many model lines of another are as relevant; model
    /// detail fills the room left. When even the providers' lines do not
    /// fit, the last line names those left out.
    #[test]
    fn every_changed_provider_has_its_own_line() {
        let models = |price: u32, window: u32| {
            (0..40)
                .map(|m| {
                    format!(r#"{{"id":"m{m}","cost_per_1m_in":{price},"context_window":{window}}}"#)
                })
                .collect::<Vec<_>>()
                .join(",")
        };
        let catalog = |title: &str, large: &str, price: u32, window: u32| {
            format!(
                r#"[{{"id":"openrouter","name":"O","default_headers":{{"X-Title":"{title}"}},"models":[{}]}},
                    {{"id":"kimi","name":"K","default_large_model_id":"{large}","models":[{{"id":"k1"}},{{"id":"k2"}},{{"id":"k3"}}]}},
                    {{"id":"vercel","name":"V","models":[{}]}}]"#,
                models(price, 1),
                models(1, window)
            )
        };
        let (old, new) = (
            catalog("Crush Beta", "k2", 1, 1),
            catalog("Crush", "k3", 2, 100000),
        );
        for (width, height) in [(80, 30), (80, 60), (40, 20)] {
            let lines = summary_of(&old, &new, width, height);
            let text = lines.join("\n");
            for provider in ["  ~ openrouter:", "  ~ kimi:", "  ~ vercel:"] {
                assert!(text.contains(provider), "{provider}: {text}");
            }
            assert!(lines.len() <= height, "{text}");
        }
        // Sixty providers changed, on thirty lines: those left out are
        // named.
        let many = |price: u32| {
            let providers: Vec<String> = (0..60)
                .map(|p| {
                    format!(r#"{{"id":"p{p}","name":"P","models":[{{"id":"m","cost_per_1m_in":{price}}}]}}"#)
                })
                .collect();
            format!("[{}]", providers.join(","))
        };
        let lines = summary_of(&many(1), &many(2), 80, 30);
        assert!(lines.len() <= 30, "{lines:#?}");
        let text = lines.join("\n");
        assert!(text.contains("  ~ p0: 1 model changed"), "{text}");
        assert!(text.contains("\n  ~ also changed: p"), "{text}");
        assert!(text.contains("more changes (--verbose)\n"), "{text}");
    }

    /// Issue 29 findings, W3: an id that does not fit after `-1 model (`
    /// starts a line of its own, whole, rather than being split there.
    #[test]
    fn an_id_that_fits_a_line_is_never_split() {
        let id = "accounts/fireworks/models/deepseek-r1-0528-distill-qwen3-8b-experimental";
        let old = format!(
            r#"[{{"id":"fireworks","name":"F","models":[{{"id":"a","context_window":1}},{{"id":"{id}"}}]}}]"#
        );
        let new = r#"[{"id":"fireworks","name":"F","models":[{"id":"a","context_window":2}]}]"#;
        let lines = summary_of(&old, new, 80, 30);
        assert!(lines.contains(&format!("    ({id}),")), "{lines:#?}");
        assert!(
            lines.contains(&"  ~ fireworks: -1 model".to_string()),
            "{lines:#?}"
        );
    }

    /// Issue 29 findings, W6: the counts add up: the models of providers
    /// added and removed are counted as models added and removed.
    #[test]
    fn the_counts_include_the_models_of_providers_added_and_removed() {
        let old = r#"[{"id":"a","name":"A","models":[{"id":"x"}]},{"id":"venice","name":"V","models":[{"id":"v1"},{"id":"v2"},{"id":"v3"}]}]"#;
        let new = r#"[{"id":"a","name":"A","models":[{"id":"x"},{"id":"y"}]},{"id":"pioneer","name":"P","models":[{"id":"p1"},{"id":"p2"}]}]"#;
        let lines = summary_of(old, new, 80, 30);
        assert!(
            lines.contains(
                &"  changes: providers 1 added, 1 removed, 1 changed; models 3 added, 3 removed"
                    .to_string()
            ),
            "{lines:#?}"
        );
    }

    /// Issue 29 findings, C10: a long list of ids is shown whole while
    /// the room allows; when it does not, what is left out points to
    /// `--verbose`.
    #[test]
    fn a_list_is_whole_while_there_is_room() {
        let providers = |n: usize| {
            let list: Vec<String> = (0..n)
                .map(|p| format!(r#"{{"id":"provider-number-{p}","name":"P","models":[]}}"#))
                .collect();
            format!("[{}]", list.join(","))
        };
        let (old, new) = (providers(40), providers(5));
        let lines = summary_of(&old, &new, 80, 30);
        let text = lines.join("\n");
        assert!(text.contains("provider-number-39"), "{text}");
        assert!(!text.contains("more"), "{text}");
        let lines = summary_of(&old, &new, 80, 10);
        let text = lines.join("\n");
        assert!(text.contains("more (--verbose)"), "{text}");
        assert!(lines.len() <= 10, "{text}");
    }

    #[test]
    fn verbose_lists_one_change_a_line() {
        let (old, new) = catalogs(2, 3, 0);
        let lines = with_report(&old, &new, |r| every_line(r, &Output::Cache, None));
        assert!(lines.contains(&"  + provider new-0".to_string()));
        assert!(lines.contains(&"      + model model-2".to_string()));
        assert!(lines.contains(&"          cost_per_1m_in 10 → 99".to_string()));
        let body = &lines[1..lines.len() - 3];
        assert!(body.iter().all(|l| !l.contains(", ")), "{lines:#?}");
        assert_eq!(
            lines.last().unwrap(),
            "  written to /home/u/.local/share/crush/providers.json (nothing was there before)"
        );
    }

    #[test]
    fn an_unchanged_catalog_is_already_up_to_date() {
        let mut unchanged = report(Changes::default());
        unchanged.up_to_date = true;
        unchanged.written = false;
        let lines = summary(&unchanged, &Output::Cache, 80, 30);
        assert!(lines[0].starts_with("Already up to date"), "{lines:?}");
        assert_eq!(lines.len(), 3, "{lines:?}");
        // Issue 29 findings, cosmetic 3: the embedded snapshot, with
        // its article.
        unchanged.source = crate::fetch::source::Source::Embedded.to_string();
        let lines = every_line(&unchanged, &Output::Cache, None);
        assert!(
            lines[0].contains("holds the same catalog as the embedded snapshot ("),
            "{lines:?}"
        );
    }

    /// The foot says what a write replaced, a signed catalog that it was
    /// verified, and an output file that the cache is not touched.
    #[test]
    fn the_foot_says_what_happened() {
        let mut signed = report(Changes::default());
        signed.signed_at = Some(1_700_000_000);
        signed.signed_by = Some("1A2B3C4D5E6F7081".into());
        signed.replaced = Some(Replaced {
            source: Some("https://catwalk.charm.land/v2/providers".into()),
            written_at: Some(state::now() - 3 * 86400 - 5),
            stand_in: false,
        });
        let lines = summary(&signed, &Output::Cache, 80, 30);
        assert_eq!(
            lines[lines.len() - 4..],
            [
                "  sha256 abababababababababababababababababababababababababababababababab",
                "  verified: signed by key 1A2B3C4D5E6F7081 at 2023-11-14T22:13:20Z",
                "  written to /home/u/.local/share/crush/providers.json, replacing a catalog",
                "    fetched from https://catwalk.charm.land/v2/providers 3 days ago",
            ],
            "{lines:#?}"
        );
        let lines = summary(&signed, &Output::File("out.json".into()), 80, 30);
        assert!(lines[0].starts_with("Checked providers from"), "{lines:?}");
        assert!(
            lines
                .last()
                .unwrap()
                .ends_with("; the cache is not touched"),
            "{lines:?}"
        );
        signed.written = false;
        let lines = summary(&signed, &Output::Cache, 80, 30);
        assert_eq!(lines.last().unwrap(), "  dry run: nothing written");
        // Over no cache at all: why --check says it would change it.
        signed.replaced = None;
        let lines = summary(&signed, &Output::Cache, 80, 30);
        assert_eq!(
            lines.last().unwrap(),
            "  dry run: nothing written (there is no cache yet)"
        );
    }
}
