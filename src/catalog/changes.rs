//! What a new catalog changes against the previous one: providers added and
//! removed, and for each provider in both, its fields that changed and its
//! models added, removed and changed (with each changed field, old and new).
//! Values are compared as Crush sees them: an absent field and `null` are
//! Go's zero value, so a price that goes from absent to `0` is no change.
//! The changes borrow from the two catalogs: a report of two 50 MB
//! catalogs finds hundreds of thousands of fields, so a changed model
//! keeps only the two models, and its fields are found again when read
//! (60 MB less at the peak of that update, massif).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use compact_str::CompactString;
use serde::Serialize;
use serde::ser::{SerializeStruct, Serializer};

use crate::catalog::{Catalog, Model, Provider};

/// The differences between two catalogs.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct Changes<'a> {
    /// Ids of providers only in the new catalog.
    pub providers_added: Vec<&'a str>,
    /// Ids of providers only in the previous catalog.
    pub providers_removed: Vec<&'a str>,
    /// Providers in both catalogs that changed.
    pub providers_changed: Vec<ProviderChanges<'a>>,
    /// How many models the providers added bring, and the providers
    /// removed take away: with [`Changes::model_counts`], counts that add
    /// up.
    #[serde(skip)]
    pub models_of_providers: (usize, usize),
}

impl Changes<'_> {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.providers_added.is_empty()
            && self.providers_removed.is_empty()
            && self.providers_changed.is_empty()
    }

    /// Models added, removed and changed, over all providers in both.
    pub fn model_counts(&self) -> (usize, usize, usize) {
        let count =
            |f: fn(&ProviderChanges<'_>) -> usize| self.providers_changed.iter().map(f).sum();
        (
            count(|p| p.models_added.len()),
            count(|p| p.models_removed.len()),
            count(|p| p.models_changed.len()),
        )
    }
}

/// What changed in one provider.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProviderChanges<'a> {
    /// The provider id.
    pub provider: &'a str,
    /// Its own fields that changed (`name`, `type`, `api_endpoint`, ...).
    pub fields: Vec<FieldChange<'a>>,
    /// Ids of models only in the new catalog.
    pub models_added: Vec<&'a str>,
    /// Ids of models only in the previous catalog.
    pub models_removed: Vec<&'a str>,
    /// Models in both that changed.
    pub models_changed: Vec<ModelChange<'a>>,
}

/// One model in both catalogs that changed; in JSON, its id and its
/// fields that changed.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelChange<'a> {
    /// The model id.
    pub model: &'a str,
    before: &'a Model,
    after: &'a Model,
}

impl<'a> ModelChange<'a> {
    /// Its fields that changed (never none).
    pub fn fields(&self) -> Vec<FieldChange<'a>> {
        compare_model(self.before, self.after)
    }
}

impl Serialize for ModelChange<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut model = serializer.serialize_struct("ModelChange", 2)?;
        model.serialize_field("model", self.model)?;
        model.serialize_field("fields", &self.fields())?;
        model.end()
    }
}

/// One field's old and new value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldChange<'a> {
    /// The field, as the catalog names it (`options.temperature` inside
    /// options).
    pub field: &'static str,
    /// Its previous value.
    pub before: Scalar<'a>,
    /// Its new value.
    pub after: Scalar<'a>,
}

/// A field's value, borrowed from its catalog; in JSON, the value itself.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Scalar<'a> {
    /// Absent (an option Go reads into a pointer); `null`.
    None,
    /// `true` or `false`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A number.
    Float(f64),
    /// A string (an absent one being empty).
    Text(&'a str),
    /// A list of strings.
    Texts(&'a [CompactString]),
    /// Headers: names and values.
    Headers(&'a BTreeMap<String, String>),
    /// An object of anything (`provider_options`).
    Object(&'a serde_json::Map<String, serde_json::Value>),
}

/// Compares the `previous` catalog with the `next` one.
pub fn compare<'a>(previous: &'a Catalog, next: &'a Catalog) -> Changes<'a> {
    let mut changes = Changes::default();
    let (added, removed) = matched(
        &previous.providers,
        &next.providers,
        |p| &p.id,
        |b, a| {
            // Shared: read from the same bytes ([`Catalog::previous`]).
            if Arc::ptr_eq(b, a) {
                return;
            }
            let changed = compare_provider(b, a);
            if !(changed.fields.is_empty()
                && changed.models_added.is_empty()
                && changed.models_removed.is_empty()
                && changed.models_changed.is_empty())
            {
                changes.providers_changed.push(changed);
            }
        },
    );
    let models = |providers: &[&Arc<Provider>]| providers.iter().map(|p| p.models.len()).sum();
    changes.models_of_providers = (models(&added), models(&removed));
    changes.providers_added = added.iter().map(|p| p.id.as_str()).collect();
    changes.providers_removed = removed.iter().map(|p| p.id.as_str()).collect();
    changes
}

/// Matches the items of `new` with those of `old` by `id`, calling `both`
/// with each pair (old, new) in the order of `new`; the items only in
/// `new`, and those only in `old` (each in its order).
fn matched<'a, T>(
    old: &'a [T],
    new: &'a [T],
    id: impl Fn(&'a T) -> &'a str,
    mut both: impl FnMut(&'a T, &'a T),
) -> (Vec<&'a T>, Vec<&'a T>) {
    let mut by_id: HashMap<&str, &T> = old.iter().map(|t| (id(t), t)).collect();
    let mut added = Vec::new();
    for item in new {
        match by_id.remove(id(item)) {
            Some(before) => both(before, item),
            None => added.push(item),
        }
    }
    let removed = old.iter().filter(|t| by_id.contains_key(id(t))).collect();
    (added, removed)
}

/// A string field, absent being empty.
fn text<S: AsRef<str>>(value: &Option<S>) -> Scalar<'_> {
    Scalar::Text(value.as_ref().map_or("", |v| v.as_ref()))
}

/// Appends `field` to `fields` when its value changed.
fn push<'a>(fields: &mut Vec<FieldChange<'a>>, field: &'static str, b: Scalar<'a>, a: Scalar<'a>) {
    if b != a {
        fields.push(FieldChange {
            field,
            before: b,
            after: a,
        });
    }
}

/// One of a provider's optional text fields.
type OptionalText = fn(&Provider) -> &Option<String>;

fn compare_provider<'a>(b: &'a Provider, a: &'a Provider) -> ProviderChanges<'a> {
    let mut fields = Vec::new();
    let name = |p: &'a Provider| Scalar::Text(&p.name);
    push(&mut fields, "name", name(b), name(a));
    let texts: [(_, OptionalText); 5] = [
        ("type", |p| &p.kind),
        ("api_endpoint", |p| &p.api_endpoint),
        ("api_key", |p| &p.api_key),
        ("default_large_model_id", |p| &p.default_large_model_id),
        ("default_small_model_id", |p| &p.default_small_model_id),
    ];
    for (field, value) in texts {
        push(&mut fields, field, text(value(b)), text(value(a)));
    }
    let headers = |p: &'a Provider| Scalar::Headers(&p.default_headers);
    push(&mut fields, "default_headers", headers(b), headers(a));
    let mut models_changed = Vec::new();
    let (added, removed) = matched(
        &b.models,
        &a.models,
        |m| &m.id,
        |b, a| {
            // Most models are the same from one catalog to the next.
            if b != a && !compare_model(b, a).is_empty() {
                models_changed.push(ModelChange {
                    model: &a.id,
                    before: b,
                    after: a,
                });
            }
        },
    );
    ProviderChanges {
        provider: &a.id,
        fields,
        models_added: added.iter().map(|m| m.id.as_str()).collect(),
        models_removed: removed.iter().map(|m| m.id.as_str()).collect(),
        models_changed,
    }
}

/// Each field of the model that changed.
fn compare_model<'a>(b: &'a Model, a: &'a Model) -> Vec<FieldChange<'a>> {
    let mut fields = Vec::new();
    push(&mut fields, "name", text(&b.name), text(&a.name));
    // Go reads these into values: absent is zero.
    macro_rules! zero {
        ($($field:ident: $kind:ident),*) => {$(
            let (before, after) = (b.$field.unwrap_or_default(), a.$field.unwrap_or_default());
            push(&mut fields, stringify!($field), Scalar::$kind(before), Scalar::$kind(after));
        )*};
    }
    zero!(cost_per_1m_in: Float, cost_per_1m_out: Float, cost_per_1m_in_cached: Float);
    zero!(cost_per_1m_out_cached: Float, context_window: Int, default_max_tokens: Int);
    zero!(can_reason: Bool, supports_attachments: Bool);
    let levels = |m: &'a Model| Scalar::Texts(&m.reasoning_levels);
    push(&mut fields, "reasoning_levels", levels(b), levels(a));
    let effort = |m: &'a Model| text(&m.default_reasoning_effort);
    push(
        &mut fields,
        "default_reasoning_effort",
        effort(b),
        effort(a),
    );
    // Go reads options into pointers: absent (the provider's default) is
    // not zero.
    macro_rules! option {
        ($($field:ident: $kind:ident),*) => {$(
            let value = |m: &Model| m.options.as_ref().and_then(|o| o.$field).map_or(Scalar::None, Scalar::$kind);
            push(&mut fields, concat!("options.", stringify!($field)), value(b), value(a));
        )*};
    }
    option!(temperature: Float, top_p: Float, frequency_penalty: Float);
    option!(presence_penalty: Float, top_k: Int);
    // An empty object is no options at all to Go's map.
    let provider_options = |m: &'a Model| match m.options.as_ref().map(|o| &o.provider_options) {
        Some(Some(map)) if !map.is_empty() => Scalar::Object(map),
        _ => Scalar::None,
    };
    let (before, after) = (provider_options(b), provider_options(a));
    push(&mut fields, "options.provider_options", before, after);
    fields
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::validate;

    /// What `f` finds in the changes from the catalog `old` to `new`.
    fn with_changes<R>(old: &str, new: &str, f: impl FnOnce(&Changes<'_>) -> R) -> R {
        let (old, new) = (
            validate(old.as_bytes()).unwrap(),
            validate(new.as_bytes()).unwrap(),
        );
        f(&compare(&old, &new))
    }

    /// The changes from `old` to `new`, as JSON.
    fn changes(old: &str, new: &str) -> serde_json::Value {
        with_changes(old, new, |c| serde_json::to_value(c).unwrap())
    }

    fn is_empty(old: &str, new: &str) -> bool {
        with_changes(old, new, |c| c.is_empty())
    }

    #[test]
    fn reports_providers_models_and_their_fields() {
        let old = r#"[{"id":"a","name":"A","api_endpoint":"https://a","api_key":"$A",
                        "models":[{"id":"m1"},{"id":"m2","cost_per_1m_in":10,"context_window":200000}]},
                       {"id":"gone","name":"G"}]"#;
        let new = r#"[{"id":"a","name":"A2","api_endpoint":"https://evil","api_key":"$A","default_headers":{"X":"1"},
                        "models":[{"id":"m2","cost_per_1m_in":99,"context_window":5},{"id":"m3"}]},
                       {"id":"fresh","name":"F"}]"#;
        assert_eq!(
            changes(old, new),
            serde_json::json!({
                "providers_added": ["fresh"],
                "providers_removed": ["gone"],
                "providers_changed": [{
                    "provider": "a",
                    "fields": [
                        {"field": "name", "before": "A", "after": "A2"},
                        {"field": "api_endpoint", "before": "https://a", "after": "https://evil"},
                        {"field": "default_headers", "before": {}, "after": {"X": "1"}},
                    ],
                    "models_added": ["m3"],
                    "models_removed": ["m1"],
                    "models_changed": [{
                        "model": "m2",
                        "fields": [
                            {"field": "cost_per_1m_in", "before": 10.0, "after": 99.0},
                            {"field": "context_window", "before": 200000, "after": 5},
                        ],
                    }],
                }],
            })
        );
        assert_eq!(with_changes(old, new, |c| c.model_counts()), (1, 1, 1));
    }

    #[test]
    fn values_are_compared_as_crush_sees_them() {
        let old = r#"[{"id":"a","name":"A","models":[{"id":"m","cost_per_1m_in":0,"name":"","can_reason":false}]}]"#;
        let new = r#"[{"id":"a","name":"A","type":null,"models":[{"id":"m","reasoning_levels":null,"options":{}}]}]"#;
        assert!(is_empty(old, new));
        // Options are pointers in Go: unset is not zero.
        let set = r#"[{"id":"a","name":"A","models":[{"id":"m","options":{"temperature":0,"top_k":40,"provider_options":{"x":[1]}}}]}]"#;
        let changes = changes(old, set);
        let fields: Vec<String> = changes["providers_changed"][0]["models_changed"][0]["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                format!(
                    "{}: {} -> {}",
                    f["field"].as_str().unwrap(),
                    f["before"],
                    f["after"]
                )
            })
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
        assert!(is_empty(old, new));
    }
}
