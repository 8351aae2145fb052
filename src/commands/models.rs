//! `crush models`: every model of the start-up catalog as provider/model,
//! optionally filtered.

use std::io::{self, Write};

use serde::Serialize;

use super::context::{Context, cache_files};
use super::{Exit, Table, listed, print, terminal, write_json};
use crate::catalog::{Catalog, printable};
use crate::commands::cli::ModelsArgs;
use crate::error::{Cause, Failure, program};

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
pub fn run(context: &Context, args: &ModelsArgs) -> Result<(), Exit> {
    let settings = context.settings()?;
    let loaded = context.startup(&settings, &cache_files()?, args.wait)?;
    let Some(catalog) = listed(&loaded, &settings, "models", args.json)? else {
        return Ok(());
    };
    let rows = matching(args, &catalog);
    // Like grep: nothing found is an answer scripts can test.
    if rows.is_empty() && !args.terms.is_empty() {
        let terms: Vec<String> = args.terms.iter().map(|t| printable(t)).collect();
        return Err(Exit::from(Failure::new(
            format!("{} provider-models", program()),
            Cause::NoMatch(terms.join(" ")),
        )));
    }
    print(|out| write_models(out, args, &rows))
}

/// The models whose provider id or name, or own id or name, contains every
/// term, case aside.
fn matching<'a>(args: &ModelsArgs, catalog: &'a Catalog<'a>) -> Vec<ModelRow<'a>> {
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
    rows
}

fn write_models(out: &mut impl Write, args: &ModelsArgs, rows: &[ModelRow<'_>]) -> io::Result<()> {
    if args.json {
        return write_json(out, &rows);
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
    // On a narrow terminal the name goes first: the id says it too.
    Table {
        head: ["MODEL", "NAME", "CONTEXT", "$/1M IN/OUT"],
        rows: &table,
        droppable: &[1],
    }
    .write(out, terminal::stdout_width())
}

fn tokens(n: i64) -> String {
    match n {
        1_000_000.. if n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        1_000.. => format!("{}K", n / 1_000),
        _ => n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_are_short() {
        assert_eq!(tokens(200_000), "200K");
        assert_eq!(tokens(1_000_000), "1M");
        assert_eq!(tokens(1_048_576), "1048K");
        assert_eq!(tokens(512), "512");
    }
}
