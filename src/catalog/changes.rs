//! What a new catalog changes against the previous one: providers added and
//! removed, and for each provider in both, its fields that changed and its
//! models added, removed and changed (with each changed field, old and new).
//! Values are compared as Crush sees them: an absent field and `null` are
//! Go's zero value, so a price that goes from absent to `0` is no change.

use std::collections::BTreeMap;

use foldhash::{HashMap, HashSet};
use serde::Serialize;
use serde_json::Value;

use crate::catalog::{Catalog, Model, ModelOptions, Provider, Text};

/// The differences between two catalogs.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct Changes {
    /// Ids of providers only in the new catalog.
    pub providers_added: Vec<String>,
    /// Ids of providers only in the previous catalog.
    pub providers_removed: Vec<String>,
    /// Providers in both catalogs that changed.
    pub providers_changed: Vec<ProviderChanges>,
}

impl Changes {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.providers_added.is_empty()
            && self.providers_removed.is_empty()
            && self.providers_changed.is_empty()
    }

    /// Models added, removed and changed, over all providers in both.
    pub fn model_counts(&self) -> (usize, usize, usize) {
        self.providers_changed
            .iter()
            .fold((0, 0, 0), |(a, r, c), p| {
                (
                    a + p.models_added.len(),
                    r + p.models_removed.len(),
                    c + p.models_changed.len(),
                )
            })
    }
}

/// What changed in one provider.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProviderChanges {
    /// The provider id.
    pub provider: String,
    /// Its own fields that changed (`name`, `type`, `api_endpoint`, ...).
    pub fields: Vec<FieldChange>,
    /// Ids of models only in the new catalog.
    pub models_added: Vec<String>,
    /// Ids of models only in the previous catalog.
    pub models_removed: Vec<String>,
    /// Models in both that changed.
    pub models_changed: Vec<ModelChange>,
}

/// What changed in one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelChange {
    /// The model id.
    pub model: String,
    /// Its fields that changed.
    pub fields: Vec<FieldChange>,
}

/// One field's old and new value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldChange {
    /// The field, as the catalog names it (`options.temperature` inside
    /// options).
    pub field: String,
    /// Its previous value.
    pub before: Value,
    /// Its new value.
    pub after: Value,
}

/// Compares the `previous` catalog with the `next` one.
pub fn compare(previous: &Catalog<'_>, next: &Catalog<'_>) -> Changes {
    let old: HashMap<&str, &Provider<'_>> = previous
        .providers
        .iter()
        .map(|p| (p.id.as_str(), p))
        .collect();
    let new_ids: HashSet<&str> = next.providers.iter().map(|p| p.id.as_str()).collect();
    let mut changes = Changes::default();
    for provider in &next.providers {
        let id = provider.id.as_str();
        match old.get(id) {
            None => changes.providers_added.push(id.to_owned()),
            Some(before) => {
                let changed = compare_provider(before, provider);
                if !(changed.fields.is_empty()
                    && changed.models_added.is_empty()
                    && changed.models_removed.is_empty()
                    && changed.models_changed.is_empty())
                {
                    changes.providers_changed.push(changed);
                }
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

fn compare_provider(before: &Provider<'_>, after: &Provider<'_>) -> ProviderChanges {
    let mut fields = Fields::default();
    fields.text("name", Some(&before.name), Some(&after.name));
    fields.text("type", before.kind.as_ref(), after.kind.as_ref());
    fields.text(
        "api_endpoint",
        before.api_endpoint.as_ref(),
        after.api_endpoint.as_ref(),
    );
    fields.text("api_key", before.api_key.as_ref(), after.api_key.as_ref());
    fields.text(
        "default_large_model_id",
        before.default_large_model_id.as_ref(),
        after.default_large_model_id.as_ref(),
    );
    fields.text(
        "default_small_model_id",
        before.default_small_model_id.as_ref(),
        after.default_small_model_id.as_ref(),
    );
    if before.default_headers != after.default_headers {
        fields.push(
            "default_headers",
            headers(&before.default_headers),
            headers(&after.default_headers),
        );
    }
    let old: HashMap<&str, &Model<'_>> =
        before.models().iter().map(|m| (m.id.as_str(), m)).collect();
    let new_ids: HashSet<&str> = after.models().iter().map(|m| m.id.as_str()).collect();
    let mut changes = ProviderChanges {
        provider: after.id.as_str().to_owned(),
        fields: fields.0,
        models_added: Vec::new(),
        models_removed: before
            .models()
            .iter()
            .map(|m| m.id.as_str())
            .filter(|id| !new_ids.contains(id))
            .map(str::to_owned)
            .collect(),
        models_changed: Vec::new(),
    };
    for model in after.models() {
        match old.get(model.id.as_str()) {
            None => changes.models_added.push(model.id.as_str().to_owned()),
            // Most models are the same from one catalog to the next.
            Some(previous) if *previous == model => {}
            Some(previous) => {
                let fields = compare_model(previous, model);
                if !fields.is_empty() {
                    changes.models_changed.push(ModelChange {
                        model: model.id.as_str().to_owned(),
                        fields,
                    });
                }
            }
        }
    }
    changes
}

fn compare_model(before: &Model<'_>, after: &Model<'_>) -> Vec<FieldChange> {
    let mut fields = Fields::default();
    fields.text("name", before.name.as_ref(), after.name.as_ref());
    for (field, b, a) in [
        (
            "cost_per_1m_in",
            before.cost_per_1m_in,
            after.cost_per_1m_in,
        ),
        (
            "cost_per_1m_out",
            before.cost_per_1m_out,
            after.cost_per_1m_out,
        ),
        (
            "cost_per_1m_in_cached",
            before.cost_per_1m_in_cached,
            after.cost_per_1m_in_cached,
        ),
        (
            "cost_per_1m_out_cached",
            before.cost_per_1m_out_cached,
            after.cost_per_1m_out_cached,
        ),
    ] {
        fields.value(field, b.unwrap_or_default(), a.unwrap_or_default());
    }
    for (field, b, a) in [
        (
            "context_window",
            before.context_window,
            after.context_window,
        ),
        (
            "default_max_tokens",
            before.default_max_tokens,
            after.default_max_tokens,
        ),
    ] {
        fields.value(field, b.unwrap_or_default(), a.unwrap_or_default());
    }
    for (field, b, a) in [
        ("can_reason", before.can_reason, after.can_reason),
        (
            "supports_attachments",
            before.supports_attachments,
            after.supports_attachments,
        ),
    ] {
        fields.value(field, b.unwrap_or_default(), a.unwrap_or_default());
    }
    if before.reasoning_levels != after.reasoning_levels {
        let list = |l: &[Text<'_>]| Value::from(l.iter().map(|t| t.as_str()).collect::<Vec<_>>());
        fields.push(
            "reasoning_levels",
            list(&before.reasoning_levels),
            list(&after.reasoning_levels),
        );
    }
    fields.text(
        "default_reasoning_effort",
        before.default_reasoning_effort.as_ref(),
        after.default_reasoning_effort.as_ref(),
    );
    let none = ModelOptions::default();
    let (b, a) = (
        before.options.as_deref().unwrap_or(&none),
        after.options.as_deref().unwrap_or(&none),
    );
    // Unlike the fields above, an option Go reads into a pointer: absent
    // (the provider's default) is not zero.
    for (field, b, a) in [
        ("options.temperature", b.temperature, a.temperature),
        ("options.top_p", b.top_p, a.top_p),
        (
            "options.frequency_penalty",
            b.frequency_penalty,
            a.frequency_penalty,
        ),
        (
            "options.presence_penalty",
            b.presence_penalty,
            a.presence_penalty,
        ),
    ] {
        fields.value(field, b, a);
    }
    fields.value("options.top_k", b.top_k, a.top_k);
    let provider_options = |o: &ModelOptions| match &o.provider_options {
        Some(map) if !map.is_empty() => Value::Object(map.clone()),
        _ => Value::Null,
    };
    if b.provider_options != a.provider_options {
        fields.push(
            "options.provider_options",
            provider_options(b),
            provider_options(a),
        );
    }
    fields.0
}

/// The changed fields of one provider or model.
#[derive(Default)]
struct Fields(Vec<FieldChange>);

impl Fields {
    fn push(&mut self, field: &str, before: Value, after: Value) {
        if before != after {
            self.0.push(FieldChange {
                field: field.to_owned(),
                before,
                after,
            });
        }
    }

    /// A value compared as is, made JSON only when it changed.
    fn value<T: PartialEq + Into<Value>>(&mut self, field: &str, before: T, after: T) {
        if before != after {
            self.push(field, before.into(), after.into());
        }
    }

    /// A string, absent being empty.
    fn text(&mut self, field: &str, before: Option<&Text<'_>>, after: Option<&Text<'_>>) {
        self.value(field, text(before), text(after));
    }
}

fn text<'t>(t: Option<&'t Text<'_>>) -> &'t str {
    t.map_or("", Text::as_str)
}

fn headers(headers: &BTreeMap<Text<'_>, Text<'_>>) -> Value {
    Value::Object(
        headers
            .iter()
            .map(|(k, v)| (k.as_str().to_owned(), Value::from(v.as_str())))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::validate;

    fn changes(old: &str, new: &str) -> Changes {
        compare(
            &validate(old.as_bytes()).unwrap(),
            &validate(new.as_bytes()).unwrap(),
        )
    }

    fn field(field: &str, before: Value, after: Value) -> FieldChange {
        FieldChange {
            field: field.into(),
            before,
            after,
        }
    }

    #[test]
    fn reports_providers_models_and_their_fields() {
        let old = r#"[{"id":"a","name":"A","api_endpoint":"https://a","api_key":"$A",
                        "models":[{"id":"m1"},{"id":"m2","cost_per_1m_in":10,"context_window":200000}]},
                       {"id":"gone","name":"G"}]"#;
        let new = r#"[{"id":"a","name":"A2","api_endpoint":"https://evil","api_key":"$A","default_headers":{"X":"1"},
                        "models":[{"id":"m2","cost_per_1m_in":99,"context_window":5},{"id":"m3"}]},
                       {"id":"fresh","name":"F"}]"#;
        let changes = changes(old, new);
        assert_eq!(changes.providers_added, ["fresh"]);
        assert_eq!(changes.providers_removed, ["gone"]);
        let a = &changes.providers_changed[0];
        assert_eq!(
            a.fields,
            [
                field("name", "A".into(), "A2".into()),
                field("api_endpoint", "https://a".into(), "https://evil".into()),
                field(
                    "default_headers",
                    serde_json::json!({}),
                    serde_json::json!({"X": "1"})
                ),
            ]
        );
        assert_eq!(a.models_added, ["m3"]);
        assert_eq!(a.models_removed, ["m1"]);
        assert_eq!(
            a.models_changed,
            [ModelChange {
                model: "m2".into(),
                fields: vec![
                    field("cost_per_1m_in", 10.0.into(), 99.0.into()),
                    field("context_window", 200000.into(), 5.into()),
                ]
            }]
        );
        assert_eq!(changes.model_counts(), (1, 1, 1));
    }

    #[test]
    fn values_are_compared_as_crush_sees_them() {
        let old = r#"[{"id":"a","name":"A","models":[{"id":"m","cost_per_1m_in":0,"name":"","can_reason":false}]}]"#;
        let new = r#"[{"id":"a","name":"A","type":null,"models":[{"id":"m","reasoning_levels":null,"options":{}}]}]"#;
        assert!(changes(old, new).is_empty());
        // Options are pointers in Go: unset is not zero.
        let set = r#"[{"id":"a","name":"A","models":[{"id":"m","options":{"temperature":0,"top_k":40,"provider_options":{"x":[1]}}}]}]"#;
        let fields: Vec<String> = changes(old, set).providers_changed[0].models_changed[0]
            .fields
            .iter()
            .map(|f| format!("{}: {} -> {}", f.field, f.before, f.after))
            .collect();
        assert_eq!(
            fields,
            [
                "options.temperature: null -> 0.0",
                "options.top_k: null -> 40",
                "options.provider_options: null -> {\"x\":[1]}"
            ]
        );
    }

    #[test]
    fn reordered_models_are_no_change() {
        let old = r#"[{"id":"a","name":"A","models":[{"id":"m1"},{"id":"m2","name":"x"}]}]"#;
        let new = r#"[{"id":"a","name":"A","models":[{"id":"m2","name":"x"},{"id":"m1"}]}]"#;
        assert!(changes(old, new).is_empty());
    }
}
