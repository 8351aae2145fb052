//! `crush models`: every model of the start-up catalog as provider/model,
//! optionally filtered: on a terminal a table (id, name, context window,
//! prices); on a pipe bare `provider/model` lines, sorted by provider then
//! model, as Crush's own `crush models` prints them for a script.

use std::io::Write;

use serde::Serialize;

use super::context::{Context, cache_files};
use super::program;
use super::{Exit, listed, print, terminal, write_json, write_table};
use crate::catalog::escape::safe;
use crate::catalog::{Catalog, printable};
use crate::commands::cli::ModelsArgs;
use crate::error::{Cause, Failure};

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
pub(super) fn run(context: &Context, args: &ModelsArgs) -> Result<(), Exit> {
    let (settings, _) = context.read_settings(false)?;
    let loaded = context.startup(&settings, &cache_files()?, args.wait)?;
    let Some(catalog) = listed(&loaded, &settings, "models", args.json)? else {
        return Ok(());
    };
    let mut rows = matching(args, &catalog);
    // Like grep: nothing found is an answer scripts can test.
    if rows.is_empty() && !args.terms.is_empty() {
        let terms: Vec<String> = args.terms.iter().map(|t| printable(t)).collect();
        return Err(Exit::from(Failure::new(
            format!("{} provider-models", program()),
            Cause::NoMatch(terms),
        )));
    }
    if args.json {
        return print(|out| write_json(out, &rows));
    }
    // Sorted as Crush sorts them: by provider id, then model id.
    rows.sort_by(|a, b| (a.provider, a.id).cmp(&(b.provider, b.id)));
    let id = |r: &ModelRow<'_>| format!("{}/{}", r.provider, r.id);
    let Some(width) = terminal::stdout_width() else {
        return print(|out| {
            rows.iter()
                .try_for_each(|r| writeln!(out, "{}", safe(&id(r))))
        });
    };
    let table: Vec<[String; 4]> = (rows.iter())
        .map(|r| {
            [
                id(r),
                r.name.unwrap_or("").to_string(),
                r.context_window.map(tokens).unwrap_or_default(),
                match (r.cost_per_1m_in, r.cost_per_1m_out) {
                    (Some(i), Some(o)) => format!("${i}/${o}"),
                    _ => String::new(),
                },
            ]
        })
        .collect();
    // On a narrow terminal the name goes first: the id says it too.
    let head = ["MODEL", "NAME", "CONTEXT", "$/1M IN/OUT"];
    print(|out| write_table(out, head, &table, &[1], width))
}

/// The models whose provider id or name, or own id or name, contains every
/// term, case aside.
fn matching<'a>(args: &ModelsArgs, catalog: &'a Catalog) -> Vec<ModelRow<'a>> {
    let terms: Vec<String> = args.terms.iter().map(|t| t.to_lowercase()).collect();
    let models = (catalog.providers.iter()).flat_map(|p| p.models().iter().map(move |m| (p, m)));
    models
        .filter(|(provider, model)| {
            // The four apart, so that no term spans two: no argument holds
            // a NUL.
            let name = model.name.as_deref().unwrap_or("");
            let words = format!("{}\0{}\0{}\0{name}", provider.id, provider.name, model.id);
            let words = words.to_lowercase();
            terms.iter().all(|t| words.contains(t.as_str()))
        })
        .map(|(provider, model)| ModelRow {
            provider: provider.id.as_str(),
            id: model.id.as_str(),
            name: model.name.as_deref(),
            context_window: model.context_window,
            default_max_tokens: model.default_max_tokens,
            cost_per_1m_in: model.cost_per_1m_in,
            cost_per_1m_out: model.cost_per_1m_out,
            can_reason: model.can_reason,
            supports_attachments: model.supports_attachments,
        })
        .collect()
}

/// A context window as a person compares them down a column: in
/// thousands below a million (`200K`), else in millions with up to two
/// decimals (`1M`, `1.05M`), rounded.
fn tokens(n: i64) -> String {
    let thousands = (n + 500) / 1_000;
    match n {
        _ if thousands >= 1_000 => {
            let millions = format!("{:.2}", n as f64 / 1e6);
            let millions = millions.trim_end_matches('0').trim_end_matches('.');
            format!("{millions}M")
        }
        1_000.. => format!("{thousands}K"),
        _ => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One unit a magnitude, so that a column compares at a glance: never
    /// `1048K` beside `1M`.
    #[test]
    fn token_counts_are_short_and_alike() {
        assert_eq!(tokens(200_000), "200K");
        assert_eq!(tokens(131_072), "131K");
        assert_eq!(tokens(163_840), "164K");
        assert_eq!(tokens(1_000_000), "1M");
        assert_eq!(tokens(1_048_576), "1.05M");
        assert_eq!(tokens(2_000_000), "2M");
        assert_eq!(tokens(999_999), "1M");
        assert_eq!(tokens(512), "512");
    }
}
