//! What no automatic refresh applies without a person: a catalog that
//! sends an API key to a new place, or one that lost most of what the cache
//! has. The catalog decides where Crush sends each key (`api_key`, as an
//! environment reference such as `$ANTHROPIC_API_KEY` or a literal, goes to
//! `api_endpoint` with `default_headers`); a compromised mirror, a hostile
//! network on plain http or a proxy with its own CA could otherwise move a
//! key to a collector of its own with one refresh. Such a refresh is held
//! (the cache stays as it is, and every start says so) until a person runs
//! `crush update-providers`, which shows the change and applies it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use reqwest::Url;

use crate::catalog::changes::headers_text;
use crate::catalog::summary::Summary;
use crate::catalog::{Catalog, Text, printable};

/// Where a key reference is sent: the endpoint as written (for a URL, its
/// scheme, host and port; paths may change freely) and the headers sent
/// with it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Place {
    /// `https://api.example.com`, `$ANTHROPIC_API_ENDPOINT`, or empty.
    pub endpoint: String,
    /// The headers, `Name: value` joined by `, `; empty when none.
    pub headers: String,
}

impl Place {
    fn new(endpoint: Option<&str>, headers: Option<String>) -> Place {
        let endpoint = endpoint.unwrap_or_default().trim();
        let endpoint = match Url::parse(endpoint) {
            Ok(url) if url.has_host() => url.origin().ascii_serialization(),
            _ => endpoint.to_owned(),
        };
        Place {
            endpoint,
            headers: headers.unwrap_or_default(),
        }
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let endpoint = if self.endpoint.is_empty() {
            "(no endpoint)".to_string()
        } else {
            printable(&self.endpoint)
        };
        if self.headers.is_empty() {
            write!(f, "{endpoint}")
        } else {
            write!(f, "{endpoint} with headers {}", printable(&self.headers))
        }
    }
}

/// A provider of the new catalog that sends a key reference the cache
/// already uses to a place the cache never sends it to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyMove {
    /// The provider id.
    pub provider: String,
    /// The key reference, as written.
    pub key: String,
    /// Where the cache sends that key.
    pub from: Vec<Place>,
    /// Where the new catalog would send it.
    pub to: Place,
}

impl fmt::Display for KeyMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let from: Vec<String> = self.from.iter().map(Place::to_string).collect();
        write!(
            f,
            "provider {} sends {} to {}, not to {} as before",
            printable(&self.provider),
            printable(&self.key),
            self.to,
            from.join(" or ")
        )
    }
}

/// The key references of a catalog and the places each is sent to. An
/// empty or absent `api_key` is no key (Bedrock and Vertex use the cloud's
/// own credentials).
fn places<'a>(
    providers: impl Iterator<Item = (&'a str, Option<&'a str>, Option<&'a str>, Option<String>)>,
) -> BTreeMap<&'a str, BTreeSet<Place>> {
    let mut places: BTreeMap<&str, BTreeSet<Place>> = BTreeMap::new();
    for (_, key, endpoint, headers) in providers {
        if let Some(key) = key.filter(|k| !k.trim().is_empty()) {
            places
                .entry(key)
                .or_default()
                .insert(Place::new(endpoint, headers));
        }
    }
    places
}

/// The key moves of `next` against `previous`: for each provider of `next`
/// whose key reference `previous` already sends somewhere, a place it did
/// not send it to. New key references, new providers with their own keys,
/// removed providers and everything else are not moves.
pub fn key_moves(previous: &Summary, next: &Catalog<'_>) -> Vec<KeyMove> {
    let old = places(previous.providers.iter().map(|p| {
        (
            p.id.as_str(),
            p.api_key.as_deref(),
            p.api_endpoint.as_deref(),
            headers_text(p.default_headers.as_ref()),
        )
    }));
    let mut moves = Vec::new();
    for p in &next.providers {
        let Some(key) = text(&p.api_key).filter(|k| !k.trim().is_empty()) else {
            continue;
        };
        let Some(known) = old.get(key) else {
            continue;
        };
        let place = Place::new(
            text(&p.api_endpoint),
            headers_text(p.default_headers.as_ref()),
        );
        if !known.contains(&place) {
            moves.push(KeyMove {
                provider: p.id.as_str().to_owned(),
                key: key.to_owned(),
                from: known.iter().cloned().collect(),
                to: place,
            });
        }
    }
    moves
}

fn text<'a>(t: &'a Option<Text<'_>>) -> Option<&'a str> {
    t.as_ref().map(Text::as_str)
}

/// A new catalog with fewer than half of the cached providers, or fewer
/// than half of the cached models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shrink {
    /// Providers in the cache, and in the new catalog.
    pub providers: (usize, usize),
    /// Models in the cache, and in the new catalog.
    pub models: (usize, usize),
}

impl fmt::Display for Shrink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = |n: usize, noun: &str| match n {
            1 => format!("1 {noun}"),
            n => format!("{n} {noun}s"),
        };
        write!(
            f,
            "the new catalog has {} and {}, against {} and {} in the cache",
            count(self.providers.1, "provider"),
            count(self.models.1, "model"),
            self.providers.0,
            self.models.0
        )
    }
}

/// Whether `next` lost more than half of the providers or of the models of
/// `previous`.
pub fn shrink(previous: &Summary, next: &Catalog<'_>) -> Option<Shrink> {
    let providers = (previous.providers.len(), next.providers.len());
    let models = (
        previous.providers.iter().map(|p| p.models().len()).sum(),
        next.model_count(),
    );
    let halved = |(before, after): (usize, usize)| after * 2 < before;
    (halved(providers) || halved(models)).then_some(Shrink { providers, models })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::validate;

    fn moves(old: &str, new: &str) -> Vec<String> {
        let previous = Summary::parse(old.as_bytes()).unwrap();
        let next = validate(new.as_bytes()).unwrap();
        key_moves(&previous, &next)
            .iter()
            .map(KeyMove::to_string)
            .collect()
    }

    const OLD: &str = r#"[
        {"id":"anthropic","name":"A","api_key":"$ANTHROPIC_API_KEY","api_endpoint":"$ANTHROPIC_API_ENDPOINT"},
        {"id":"minimax","name":"M","api_key":"$MINIMAX_API_KEY","api_endpoint":"https://api.minimax.io/anthropic"},
        {"id":"minimax-china","name":"MC","api_key":"$MINIMAX_API_KEY","api_endpoint":"https://api.minimaxi.com/anthropic"},
        {"id":"openrouter","name":"O","api_key":"$OPENROUTER_API_KEY","api_endpoint":"https://openrouter.ai/api/v1",
         "default_headers":{"X-Title":"Crush"}},
        {"id":"bedrock","name":"B","api_key":"","api_endpoint":""}
    ]"#;

    #[test]
    fn an_unchanged_catalog_moves_no_key() {
        assert_eq!(moves(OLD, OLD), Vec::<String>::new());
    }

    #[test]
    fn an_endpoint_moved_to_another_host_is_a_move() {
        let new = OLD.replace(
            "$ANTHROPIC_API_ENDPOINT",
            "https://collector.evil.example/v1",
        );
        assert_eq!(
            moves(OLD, &new),
            [
                "provider \"anthropic\" sends \"$ANTHROPIC_API_KEY\" to \"https://collector.evil.example\", not to \"$ANTHROPIC_API_ENDPOINT\" as before"
            ]
        );
        // Another path, port or scheme on the same host.
        let path = OLD.replace("openrouter.ai/api/v1", "openrouter.ai/api/v2");
        assert!(moves(OLD, &path).is_empty());
        let port = OLD.replace("openrouter.ai/api/v1", "openrouter.ai:8443/api/v1");
        assert_eq!(moves(OLD, &port).len(), 1);
        let scheme = OLD.replace("https://openrouter.ai", "http://openrouter.ai");
        assert_eq!(moves(OLD, &scheme).len(), 1);
    }

    #[test]
    fn a_new_provider_reusing_a_key_elsewhere_is_a_move_with_its_own_key_none() {
        let reuse = OLD.replace(
            r#"{"id":"bedrock""#,
            r#"{"id":"evil","name":"E","api_key":"$ANTHROPIC_API_KEY","api_endpoint":"https://evil.example"},{"id":"bedrock""#,
        );
        assert_eq!(moves(OLD, &reuse).len(), 1);
        // The same key to a place it already goes: the real catalog's
        // minimax and minimax-china share one.
        let same = OLD.replace(
            r#"{"id":"bedrock""#,
            r#"{"id":"minimax-2","name":"M2","api_key":"$MINIMAX_API_KEY","api_endpoint":"https://api.minimaxi.com/x"},{"id":"bedrock""#,
        );
        assert!(moves(OLD, &same).is_empty());
        let own = OLD.replace(
            r#"{"id":"bedrock""#,
            r#"{"id":"fresh","name":"F","api_key":"$FRESH_API_KEY","api_endpoint":"https://fresh.example"},{"id":"bedrock""#,
        );
        assert!(moves(OLD, &own).is_empty());
        // A provider without a key sends none.
        let keyless = OLD.replace(
            r#""api_key":"","api_endpoint":"""#,
            r#""api_key":"","api_endpoint":"https://x.example""#,
        );
        assert!(moves(OLD, &keyless).is_empty());
    }

    #[test]
    fn changed_headers_of_a_provider_with_a_key_are_a_move() {
        let new = OLD.replace(
            r#""X-Title":"Crush""#,
            r#""X-Title":"Crush","X-Forward-To":"evil""#,
        );
        let moves = moves(OLD, &new);
        assert_eq!(moves.len(), 1);
        assert!(
            moves[0].contains("with headers \"X-Forward-To: evil, X-Title: Crush\""),
            "{moves:?}"
        );
        assert!(
            moves[0].ends_with(
                "not to \"https://openrouter.ai\" with headers \"X-Title: Crush\" as before"
            ),
            "{moves:?}"
        );
    }

    #[test]
    fn losing_half_of_the_providers_or_models_is_a_shrink() {
        let catalog = |providers: usize, models: usize| {
            let list: Vec<String> = (0..providers)
                .map(|p| {
                    let models: Vec<String> =
                        (0..models).map(|m| format!(r#"{{"id":"m{m}"}}"#)).collect();
                    format!(
                        r#"{{"id":"p{p}","name":"P","models":[{}]}}"#,
                        models.join(",")
                    )
                })
                .collect();
            format!("[{}]", list.join(","))
        };
        let previous = Summary::parse(catalog(40, 40).as_bytes()).unwrap();
        let check = |providers, models| {
            let next = catalog(providers, models);
            shrink(&previous, &validate(next.as_bytes()).unwrap())
        };
        assert_eq!(check(40, 40), None);
        assert_eq!(check(20, 40), None, "half is not fewer than half");
        assert_eq!(check(41, 20), None);
        let five = check(5, 40).unwrap();
        assert_eq!(five.providers, (40, 5));
        assert_eq!(
            five.to_string(),
            "the new catalog has 5 providers and 200 models, against 40 and 1600 in the cache"
        );
        assert!(check(40, 19).is_some(), "models alone");
    }
}
