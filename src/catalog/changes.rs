//! What a new catalog changes against the previous one: providers and models
//! added and removed, and the changes that redirect users' credentials.

use std::collections::BTreeMap;

use foldhash::{HashMap, HashSet};

use serde::Serialize;

use crate::catalog::summary::{ProviderSummary, Summary};
use crate::catalog::{Catalog, Text, printable};

/// The differences between two catalogs.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct Changes {
    /// Ids of providers only in the new catalog.
    pub providers_added: Vec<String>,
    /// Ids of providers only in the previous catalog.
    pub providers_removed: Vec<String>,
    /// Model changes of providers in both catalogs.
    pub models: Vec<ModelChanges>,
    /// Changes of where requests go or what they carry.
    pub security: Vec<SecurityChange>,
}

impl Changes {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.providers_added.is_empty()
            && self.providers_removed.is_empty()
            && self.models.is_empty()
            && self.security.is_empty()
    }
}

/// Models added to and removed from one provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelChanges {
    /// The provider id.
    pub provider: String,
    /// Model ids only in the new catalog.
    pub added: Vec<String>,
    /// Model ids only in the previous catalog.
    pub removed: Vec<String>,
}

/// A change of a provider's `api_endpoint`, `api_key` reference or
/// `default_headers`: a catalog that moves an endpoint sends users' API keys
/// somewhere else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SecurityChange {
    /// The provider id.
    pub provider: String,
    /// The field that changed.
    pub field: &'static str,
    /// Its previous value (absent fields as null).
    pub before: Option<String>,
    /// Its new value.
    pub after: Option<String>,
}

impl SecurityChange {
    /// One line for a human, with every value quoted and escaped.
    pub fn describe(&self) -> String {
        let show =
            |v: &Option<String>| v.as_deref().map_or_else(|| "(none)".to_string(), printable);
        let consequence = match self.field {
            "api_endpoint" => "requests carrying your API key will go to the new address",
            "api_key" => "a different credential will be sent",
            _ => "different headers will be sent with your requests",
        };
        format!(
            "provider {}: {} changed from {} to {}; {consequence}",
            printable(&self.provider),
            self.field,
            show(&self.before),
            show(&self.after)
        )
    }
}

/// Compares the `previous` catalog with the `next` one.
pub fn compare(previous: &Summary, next: &Catalog<'_>) -> Changes {
    let old: HashMap<&str, &ProviderSummary> = previous
        .providers
        .iter()
        .map(|p| (p.id.as_str(), p))
        .collect();
    let new_ids: HashSet<&str> = next.providers.iter().map(|p| p.id.as_str()).collect();
    let mut changes = Changes::default();
    for provider in &next.providers {
        let id = provider.id.as_str();
        let Some(before) = old.get(id) else {
            changes.providers_added.push(id.to_owned());
            continue;
        };
        let before_ids: Vec<&str> = before.models().iter().map(|m| m.id.as_str()).collect();
        let after_ids: Vec<&str> = provider.models().iter().map(|m| m.id.as_str()).collect();
        // Most providers keep their model list from one catalog to the
        // next: then there are no sets to build.
        if before_ids != after_ids {
            let added = not_in(&after_ids, &before_ids);
            let removed = not_in(&before_ids, &after_ids);
            if !added.is_empty() || !removed.is_empty() {
                changes.models.push(ModelChanges {
                    provider: id.to_owned(),
                    added,
                    removed,
                });
            }
        }
        let text = |t: &Option<Text<'_>>| t.as_ref().map(|t| t.as_str().to_owned());
        let new_headers = headers_text(provider.default_headers.as_ref());
        let old_headers = headers_text(before.default_headers.as_ref());
        for (field, before, after) in [
            (
                "api_endpoint",
                before.api_endpoint.clone(),
                text(&provider.api_endpoint),
            ),
            ("api_key", before.api_key.clone(), text(&provider.api_key)),
            ("default_headers", old_headers, new_headers),
        ] {
            if before != after {
                changes.security.push(SecurityChange {
                    provider: id.to_owned(),
                    field,
                    before,
                    after,
                });
            }
        }
    }
    changes.providers_removed = previous
        .providers
        .iter()
        .map(|p| p.id.as_str())
        .filter(|id| !new_ids.contains(id))
        .map(str::to_owned)
        .collect();
    changes
}

/// The ids of `ids` that `other` lacks, in their order.
fn not_in(ids: &[&str], other: &[&str]) -> Vec<String> {
    // A list that changes from one catalog to the next mostly keeps its
    // beginning and its end: only the ids between need a set.
    let same_start = ids.iter().zip(other).take_while(|(a, b)| a == b).count();
    let (ids, other) = (&ids[same_start..], &other[same_start..]);
    let same_end = ids
        .iter()
        .rev()
        .zip(other.iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (ids, other) = (
        &ids[..ids.len() - same_end],
        &other[..other.len() - same_end],
    );
    let other: HashSet<&str> = other.iter().copied().collect();
    ids.iter()
        .filter(|id| !other.contains(*id))
        .map(|id| id.to_string())
        .collect()
}

/// Headers in one line, sorted by name (both sides come from sorted maps).
pub(crate) fn headers_text<K: AsRef<str>, V: AsRef<str>>(
    headers: Option<&BTreeMap<K, V>>,
) -> Option<String> {
    let headers = headers.filter(|h| !h.is_empty())?;
    Some(
        headers
            .iter()
            .map(|(k, v)| format!("{}: {}", k.as_ref(), v.as_ref()))
            .collect::<Vec<_>>()
            .join(", "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::validate;

    #[test]
    fn reports_providers_models_and_security_changes() {
        let old = br#"[{"id":"a","name":"A","api_endpoint":"https://a","api_key":"$A","models":[{"id":"m1"},{"id":"m2"}]},
                       {"id":"gone","name":"G"}]"#;
        let new = br#"[{"id":"a","name":"A","api_endpoint":"https://evil","api_key":"$A","default_headers":{"X":"1"},"models":[{"id":"m2"},{"id":"m3"}]},
                       {"id":"fresh","name":"F"}]"#;
        let changes = compare(
            &serde_json::from_slice(old).unwrap(),
            &validate(new).unwrap(),
        );
        assert_eq!(changes.providers_added, ["fresh"]);
        assert_eq!(changes.providers_removed, ["gone"]);
        assert_eq!(
            changes.models,
            [ModelChanges {
                provider: "a".into(),
                added: vec!["m3".into()],
                removed: vec!["m1".into()]
            }]
        );
        let fields: Vec<_> = changes.security.iter().map(|c| c.field).collect();
        assert_eq!(fields, ["api_endpoint", "default_headers"]);
        assert_eq!(
            changes.security[0].describe(),
            "provider \"a\": api_endpoint changed from \"https://a\" to \"https://evil\"; requests carrying your API key will go to the new address"
        );
        assert_eq!(changes.security[1].after.as_deref(), Some("X: 1"));
    }

    #[test]
    fn reordered_or_renamed_models_are_not_changes_of_the_model_list() {
        let old = br#"[{"id":"a","name":"A","models":[{"id":"m1"},{"id":"m2"}]}]"#;
        let new = br#"[{"id":"a","name":"A","models":[{"id":"m2","name":"x"},{"id":"m1"}]}]"#;
        let changes = compare(&Summary::parse(old).unwrap(), &validate(new).unwrap());
        assert!(changes.is_empty(), "{changes:?}");
        let new = br#"[{"id":"a","name":"A","models":[{"id":"m2"},{"id":"m3"}]}]"#;
        let changes = compare(&Summary::parse(old).unwrap(), &validate(new).unwrap());
        assert_eq!(changes.models[0].added, ["m3"]);
        assert_eq!(changes.models[0].removed, ["m1"]);
    }

    #[test]
    fn ids_missing_from_the_other_list_wherever_the_lists_differ() {
        let ids = ["a", "b", "c", "d", "e"];
        for (other, missing) in [
            (&["a", "b", "c", "d", "e"][..], &[][..]),
            (&["a", "x", "c", "d", "e"], &["b"]),
            (&["b", "c", "d", "e"], &["a"]),
            (&["a", "b", "c", "d"], &["e"]),
            (&["e", "d", "c", "b", "a"], &[]),
            (&["a", "e"], &["b", "c", "d"]),
            (&["x", "b", "y", "d", "z"], &["a", "c", "e"]),
            (&[], &["a", "b", "c", "d", "e"]),
        ] {
            assert_eq!(not_in(&ids, other), missing, "{other:?}");
        }
        assert!(not_in(&[], &["a"]).is_empty());
    }

    #[test]
    fn identical_catalogs_have_no_changes() {
        let json = br#"[{"id":"a","name":"A","models":[{"id":"m"}],"default_headers":{}}]"#;
        let json2 = br#"[{"id":"a","name":"A","models":[{"id":"m"}]}]"#;
        assert!(
            compare(
                &serde_json::from_slice(json).unwrap(),
                &validate(json2).unwrap()
            )
            .is_empty()
        );
    }
}
