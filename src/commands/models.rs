//! `crush models`: every model of the start-up catalog as provider/model,
//! optionally filtered.

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;

use super::{
    Exit, cache_files, listed, load_settings, print, say, startup_catalog, write_json, write_table,
};
use crate::catalog::Catalog;
use crate::commands::cli::ModelsArgs;

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
pub fn run(cwd: &Path, args: &ModelsArgs) -> Result<(), Exit> {
    let settings = load_settings(cwd)?;
    let loaded = startup_catalog(&settings, &cache_files()?, args.wait)?;
    let Some(catalog) = listed(&loaded, &settings, "models", args.json)? else {
        return Ok(());
    };
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
