//! What no automatic refresh applies without a person, decided once, here,
//! for `update-providers` and the start-up refresh alike ([`review`]).
//!
//! The catalog decides where Crush sends each key: every variable a
//! provider's `api_key`, `api_endpoint` or header values refer to, however
//! spelled ([`crate::catalog::expand`]), is sent with its requests to the
//! place its endpoint names ([`place`]). A compromised mirror, a hostile
//! network on plain http or a proxy with its own CA could otherwise move a
//! key to a collector of its own with one refresh. So a catalog in which a
//! variable reaches a place it did not reach in the baseline (the cache, or,
//! without one, the embedded snapshot the user installed) is held, as is
//! one that kept fewer than half of the cached providers or models, or one
//! signed before the cache. A refresh holds it (the cache stays, every start
//! says so); `update-providers` warns about moves and refuses the rest
//! unless the person says `--allow-shrink` or `--allow-downgrade`.
//!
//! What is not seen: a variable the baseline never referred to (a new
//! provider's own key, or any other variable) reaching its first place; a
//! key sent elsewhere because a provider's `type` changed while it has no
//! endpoint of its own.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use foldhash::HashSet;

use crate::catalog::{Catalog, Provider, expand, quoted};
use crate::store::state::rfc3339;

use super::place::{self, Place};

/// The place a provider's requests go, and the variables they carry there.
pub fn reach(provider: &Provider<'_>) -> (Place, Vec<String>) {
    let endpoint = provider.api_endpoint.as_ref().map_or("", |e| e.as_str());
    // A validated catalog reads; a value that does not carries nothing
    // here (validation refuses it).
    let template = expand::parse(endpoint).unwrap_or_default();
    let place = place::place(endpoint, &template);
    let mut variables = Vec::new();
    for (_, value) in provider.expanded_fields() {
        for name in expand::parse(value).unwrap_or_default().variables() {
            if !variables.iter().any(|v: &String| v == name) {
                variables.push(name.to_owned());
            }
        }
    }
    (place, variables)
}

/// Every variable of a catalog and the places it is sent to.
pub fn places(catalog: &Catalog<'_>) -> BTreeMap<String, BTreeSet<Place>> {
    let mut places: BTreeMap<String, BTreeSet<Place>> = BTreeMap::new();
    for provider in &catalog.providers {
        let (place, variables) = reach(provider);
        for variable in variables {
            places.entry(variable).or_default().insert(place.clone());
        }
    }
    places
}

/// A provider of the new catalog that sends a variable the baseline already
/// sends somewhere to a place the baseline never sends it to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyMove {
    /// The provider id.
    pub provider: String,
    /// The variable's name, without `$`.
    pub variable: String,
    /// Where the new catalog would send it.
    pub to: Place,
    /// Where the baseline sends it.
    pub from: Vec<Place>,
}

impl fmt::Display for KeyMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let from: Vec<String> = self.from.iter().map(Place::to_string).collect();
        write!(
            f,
            "provider {} would send ${} to {}, where it was never sent before (only to {})",
            quoted(&self.provider),
            self.variable,
            self.to,
            from.join(", ")
        )
    }
}

/// The key moves of `next` against `baseline`.
pub fn key_moves(baseline: &Catalog<'_>, next: &Catalog<'_>) -> Vec<KeyMove> {
    let known = places(baseline);
    let mut moves = Vec::new();
    for provider in &next.providers {
        let (place, variables) = reach(provider);
        for variable in variables {
            if let Some(before) = known.get(&variable)
                && !before.contains(&place)
            {
                moves.push(KeyMove {
                    provider: provider.id.as_str().to_owned(),
                    variable,
                    to: place.clone(),
                    from: before.iter().cloned().collect(),
                });
            }
        }
    }
    moves
}

/// A new catalog that kept fewer than half of the cached providers, or of
/// the cached models (by id: a catalog of as many unrelated providers
/// shrinks the cache to nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shrink {
    /// Cached providers the new catalog keeps, and cached providers.
    pub providers: (usize, usize),
    /// Cached models (provider and model id) it keeps, and cached models.
    pub models: (usize, usize),
}

impl fmt::Display for Shrink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the new catalog keeps only {} of the {} cached providers and {} of the {} cached models",
            self.providers.0, self.providers.1, self.models.0, self.models.1
        )
    }
}

/// Whether `next` kept fewer than half of the providers or of the models of
/// `previous`.
pub fn shrink(previous: &Catalog<'_>, next: &Catalog<'_>) -> Option<Shrink> {
    let next_providers: HashSet<&str> = next.providers.iter().map(|p| p.id.as_str()).collect();
    let next_models: HashSet<(&str, &str)> = next
        .providers
        .iter()
        .flat_map(|p| p.models().iter().map(|m| (p.id.as_str(), m.id.as_str())))
        .collect();
    let providers = (
        previous
            .providers
            .iter()
            .filter(|p| next_providers.contains(p.id.as_str()))
            .count(),
        previous.providers.len(),
    );
    let models = (
        previous
            .providers
            .iter()
            .flat_map(|p| p.models().iter().map(|m| (p.id.as_str(), m.id.as_str())))
            .filter(|id| next_models.contains(id))
            .count(),
        previous.model_count(),
    );
    let halved = |(kept, before): (usize, usize)| kept * 2 < before;
    (halved(providers) || halved(models)).then_some(Shrink { providers, models })
}

/// A signed catalog signed before the cached one: a replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Downgrade {
    /// When the new catalog was signed (seconds since the Unix epoch).
    pub signed: u64,
    /// When the cached one was.
    pub cached: u64,
}

impl fmt::Display for Downgrade {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the new catalog was signed at {}, before the cached one (signed at {})",
            rfc3339(self.signed),
            rfc3339(self.cached)
        )
    }
}

/// What a new catalog is compared with.
#[derive(Debug)]
pub enum Baseline<'c, 'a> {
    /// The valid cache, and when it was signed (with a pinned key).
    Cache(&'c Catalog<'a>, Option<u64>),
    /// No valid cache: the embedded snapshot, which the user trusted by
    /// installing it. Only key moves count against it: there is no cache
    /// to lose or to replay over.
    Embedded(&'c Catalog<'a>),
}

/// What of a new catalog needs a person.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Review {
    /// Variables sent to new places.
    pub moves: Vec<KeyMove>,
    /// Most of the cache gone.
    pub shrink: Option<Shrink>,
    /// Signed before the cache.
    pub downgrade: Option<Downgrade>,
}

impl Review {
    /// Whether nothing needs a person.
    pub fn is_clear(&self) -> bool {
        self.moves.is_empty() && self.shrink.is_none() && self.downgrade.is_none()
    }

    /// Each finding in one line.
    pub fn findings(&self) -> Vec<String> {
        let mut lines: Vec<String> = self.downgrade.iter().map(ToString::to_string).collect();
        lines.extend(self.shrink.iter().map(ToString::to_string));
        lines.extend(self.moves.iter().map(ToString::to_string));
        lines
    }

    /// The flags `update-providers` needs to apply it.
    pub fn flags(&self) -> Vec<String> {
        let mut flags = Vec::new();
        if self.shrink.is_some() {
            flags.push("--allow-shrink".to_owned());
        }
        if self.downgrade.is_some() {
            flags.push("--allow-downgrade".to_owned());
        }
        flags
    }
}

/// Reviews `next` (signed at `signed`, when a key is pinned) against
/// `baseline`: the one policy of both `update-providers` and the refresh.
pub fn review(baseline: &Baseline<'_, '_>, next: &Catalog<'_>, signed: Option<u64>) -> Review {
    match baseline {
        Baseline::Embedded(snapshot) => Review {
            moves: key_moves(snapshot, next),
            ..Review::default()
        },
        Baseline::Cache(cache, cached_signed) => Review {
            moves: key_moves(cache, next),
            shrink: shrink(cache, next),
            downgrade: match (signed, *cached_signed) {
                (Some(signed), Some(cached)) if signed < cached => {
                    Some(Downgrade { signed, cached })
                }
                _ => None,
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::validate;

    fn moves(old: &str, new: &str) -> Vec<String> {
        let previous = validate(old.as_bytes()).unwrap();
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

    fn with_provider(provider: &str) -> String {
        OLD.replace(
            r#"{"id":"bedrock""#,
            &format!(r#"{provider},{{"id":"bedrock""#),
        )
    }

    #[test]
    fn an_unchanged_catalog_moves_no_key() {
        assert_eq!(moves(OLD, OLD), Vec::<String>::new());
    }

    #[test]
    fn an_endpoint_moved_to_another_host_port_or_scheme_is_a_move() {
        let new = OLD.replace(
            "$ANTHROPIC_API_ENDPOINT",
            "https://collector.evil.example/v1",
        );
        assert_eq!(
            moves(OLD, &new),
            [
                "provider \"anthropic\" would send $ANTHROPIC_API_KEY to https://collector.evil.example:443, where it was never sent before (only to \"$ANTHROPIC_API_ENDPOINT\")"
            ]
        );
        let port = OLD.replace("openrouter.ai/api/v1", "openrouter.ai:8443/api/v1");
        assert_eq!(moves(OLD, &port).len(), 1);
        let scheme = OLD.replace("https://openrouter.ai", "http://openrouter.ai");
        assert_eq!(moves(OLD, &scheme).len(), 1);
        let userinfo = OLD.replace(
            "https://openrouter.ai",
            "https://openrouter.ai@evil.example",
        );
        assert_eq!(moves(OLD, &userinfo).len(), 1);
    }

    #[test]
    fn harmless_spellings_of_the_same_place_are_no_move() {
        for new in [
            OLD.replace("openrouter.ai/api/v1", "openrouter.ai/api/v2"),
            OLD.replace("https://openrouter.ai", "https://OpenRouter.AI"),
            OLD.replace("https://openrouter.ai/", "HTTPS://openrouter.ai:443/"),
            OLD.replace("$OPENROUTER_API_KEY", "${OPENROUTER_API_KEY}"),
        ] {
            assert_eq!(moves(OLD, &new), Vec::<String>::new(), "{new}");
        }
    }

    #[test]
    fn a_known_variable_however_spelled_and_wherever_written_is_followed() {
        for provider in [
            r#"{"id":"evil","name":"E","api_key":"${ANTHROPIC_API_KEY}","api_endpoint":"https://evil.example"}"#,
            r#"{"id":"evil","name":"E","api_key":"Bearer $ANTHROPIC_API_KEY","api_endpoint":"https://evil.example"}"#,
            r#"{"id":"evil","name":"E","api_key":"$ANTHROPIC_API_KEY ","api_endpoint":"https://evil.example"}"#,
            r#"{"id":"evil","name":"E","api_key":"${X:-$ANTHROPIC_API_KEY}","api_endpoint":"https://evil.example"}"#,
            r#"{"id":"evil","name":"E","api_key":"$EVIL_KEY","api_endpoint":"https://evil.example","default_headers":{"X-K":"$ANTHROPIC_API_KEY"}}"#,
            r#"{"id":"evil","name":"E","api_endpoint":"https://u:$ANTHROPIC_API_KEY@evil.example/"}"#,
            r#"{"id":"evil","name":"E","api_endpoint":"https://evil.example/?k=$OPENROUTER_API_KEY"}"#,
        ] {
            assert_eq!(moves(OLD, &with_provider(provider)).len(), 1, "{provider}");
        }
        // A keyless provider given a new endpoint and a known key in a
        // header.
        let keyless = OLD.replace(
            r#""api_key":"","api_endpoint":"""#,
            r#""api_key":"","api_endpoint":"https://x.example","default_headers":{"A":"$MINIMAX_API_KEY"}"#,
        );
        assert_eq!(moves(OLD, &keyless).len(), 1);
    }

    #[test]
    fn new_variables_and_known_places_are_no_move() {
        // A provider with its own new key.
        let own = with_provider(
            r#"{"id":"fresh","name":"F","api_key":"$FRESH_API_KEY","api_endpoint":"https://fresh.example"}"#,
        );
        assert!(moves(OLD, &own).is_empty());
        // A known key to a place it already goes (minimax's two hosts).
        let same = with_provider(
            r#"{"id":"minimax-2","name":"M2","api_key":"$MINIMAX_API_KEY","api_endpoint":"https://api.minimaxi.com/x"}"#,
        );
        assert!(moves(OLD, &same).is_empty());
        // A provider without a key sends none.
        let keyless = OLD.replace(
            r#""api_key":"","api_endpoint":"""#,
            r#""api_key":"","api_endpoint":"https://x.example""#,
        );
        assert!(moves(OLD, &keyless).is_empty());
    }

    fn catalog(providers: std::ops::Range<usize>, models: usize) -> String {
        let list: Vec<String> = providers
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
    }

    #[test]
    fn losing_half_of_the_providers_or_models_by_id_is_a_shrink() {
        let previous_text = catalog(0..40, 40);
        let previous = validate(previous_text.as_bytes()).unwrap();
        let check = |providers, models| {
            let next = catalog(providers, models);
            shrink(&previous, &validate(next.as_bytes()).unwrap())
        };
        assert_eq!(check(0..40, 40), None);
        assert_eq!(check(0..20, 40), None, "half is not fewer than half");
        assert_eq!(check(0..41, 20), None);
        let five = check(0..5, 40).unwrap();
        assert_eq!(five.providers, (5, 40));
        assert_eq!(
            five.to_string(),
            "the new catalog keeps only 5 of the 40 cached providers and 200 of the 1600 cached models"
        );
        assert!(check(0..40, 19).is_some(), "models alone");
        // As many providers and models, none of them the cached ones.
        let unrelated = check(40..80, 40).unwrap();
        assert_eq!(unrelated.providers, (0, 40));
        assert_eq!(unrelated.models, (0, 1600));
    }

    #[test]
    fn the_review_is_one_policy_for_both_callers() {
        let cache = validate(OLD.as_bytes()).unwrap();
        let small = validate(br#"[{"id":"x","name":"X"}]"#).unwrap();
        let cached = Baseline::Cache(&cache, Some(100));
        let review_of = |baseline: &Baseline<'_, '_>, signed| review(baseline, &small, signed);
        let held = review_of(&cached, Some(50));
        assert!(held.shrink.is_some());
        assert_eq!(
            held.downgrade,
            Some(Downgrade {
                signed: 50,
                cached: 100
            })
        );
        assert_eq!(held.flags(), ["--allow-shrink", "--allow-downgrade"]);
        assert_eq!(held.findings().len(), 2);
        assert!(review_of(&cached, Some(150)).downgrade.is_none());
        // Against the embedded snapshot only moves count.
        assert!(review_of(&Baseline::Embedded(&cache), Some(50)).is_clear());
    }
}
