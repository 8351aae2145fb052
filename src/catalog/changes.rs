//! What a new catalog changes against the previous one: providers added and
//! removed, and for each provider in both, its fields that changed and its
//! models added, removed and changed (with each changed field, old and new).
//! Values are compared as Crush sees them: an absent field and `null` are
//! Go's zero value, so a price that goes from absent to `0` is no change.
//! The changes borrow from the two catalogs.

use std::collections::{BTreeMap, HashMap};

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::catalog::{Catalog, Model, ModelOptions, Provider, Text};

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

/// One model in both catalogs that changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelChange<'a> {
    /// The model id.
    pub model: &'a str,
    /// Its fields that changed.
    pub fields: Vec<FieldChange<'a>>,
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
#[derive(Debug, Clone, Copy, PartialEq)]
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
    Texts(&'a [Text<'a>]),
    /// Headers: names and values.
    Headers(&'a BTreeMap<Text<'a>, Text<'a>>),
    /// An object of anything (`provider_options`).
    Object(&'a serde_json::Map<String, serde_json::Value>),
}

impl Serialize for Scalar<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            Scalar::None => serializer.serialize_none(),
            Scalar::Bool(b) => serializer.serialize_bool(b),
            Scalar::Int(i) => serializer.serialize_i64(i),
            Scalar::Float(f) => serializer.serialize_f64(f),
            Scalar::Text(t) => serializer.serialize_str(t),
            Scalar::Texts(list) => serializer.collect_seq(list),
            Scalar::Headers(headers) => {
                let mut map = serializer.serialize_map(Some(headers.len()))?;
                for (name, value) in headers {
                    map.serialize_entry(name, value)?;
                }
                map.end()
            }
            Scalar::Object(object) => object.serialize(serializer),
        }
    }
}

impl<'a> From<&'a str> for Scalar<'a> {
    fn from(text: &'a str) -> Self {
        Scalar::Text(text)
    }
}

impl From<f64> for Scalar<'_> {
    fn from(number: f64) -> Self {
        Scalar::Float(number)
    }
}

impl From<i64> for Scalar<'_> {
    fn from(number: i64) -> Self {
        Scalar::Int(number)
    }
}

impl From<bool> for Scalar<'_> {
    fn from(b: bool) -> Self {
        Scalar::Bool(b)
    }
}

impl<'a, T: Into<Scalar<'a>>> From<Option<T>> for Scalar<'a> {
    fn from(value: Option<T>) -> Self {
        value.map_or(Scalar::None, Into::into)
    }
}

/// Compares the `previous` catalog with the `next` one.
pub fn compare<'a>(previous: &'a Catalog<'a>, next: &'a Catalog<'a>) -> Changes<'a> {
    let mut old = Matched::new(&previous.providers, |p| p.id.as_str());
    let mut changes = Changes::default();
    for provider in &next.providers {
        let id = provider.id.as_str();
        match old.find(id) {
            None => {
                changes.providers_added.push(id);
                changes.models_of_providers.0 += provider.models.len();
            }
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
    for provider in old.unmatched() {
        changes.providers_removed.push(provider.id.as_str());
        changes.models_of_providers.1 += provider.models.len();
    }
    changes
}

/// The items of a previous list by id, each marked once an item of the
/// new list has its id: one map for both questions (which one has this
/// id, which ones no new item has), each id hashed once on each side.
struct Matched<'v, T> {
    items: &'v [T],
    by_id: HashMap<&'v str, usize>,
    kept: Vec<bool>,
    id: fn(&'v T) -> &'v str,
}

impl<'v, T> Matched<'v, T> {
    fn new(items: &'v [T], id: fn(&'v T) -> &'v str) -> Self {
        Matched {
            items,
            by_id: items.iter().enumerate().map(|(i, t)| (id(t), i)).collect(),
            kept: vec![false; items.len()],
            id,
        }
    }

    /// The item with `id` (the last, should two have it), marked.
    fn find(&mut self, id: &str) -> Option<&'v T> {
        let &index = self.by_id.get(id)?;
        self.kept[index] = true;
        Some(&self.items[index])
    }

    /// The items whose id no new item has, in their order.
    fn unmatched(&self) -> impl Iterator<Item = &'v T> + '_ {
        // An earlier item with the same id as a later one (no valid catalog
        // has one) goes with the one the map holds.
        self.items
            .iter()
            .zip(&self.kept)
            .filter(|&(item, &kept)| !kept && !self.kept[self.by_id[(self.id)(item)]])
            .map(|(item, _)| item)
    }
}

fn compare_provider<'a>(before: &'a Provider<'a>, after: &'a Provider<'a>) -> ProviderChanges<'a> {
    let mut fields = Vec::new();
    let mut changed = Fields(&mut fields);
    for (field, b, a) in [
        ("name", Some(&before.name), Some(&after.name)),
        ("type", before.kind.as_ref(), after.kind.as_ref()),
        (
            "api_endpoint",
            before.api_endpoint.as_ref(),
            after.api_endpoint.as_ref(),
        ),
        ("api_key", before.api_key.as_ref(), after.api_key.as_ref()),
        (
            "default_large_model_id",
            before.default_large_model_id.as_ref(),
            after.default_large_model_id.as_ref(),
        ),
        (
            "default_small_model_id",
            before.default_small_model_id.as_ref(),
            after.default_small_model_id.as_ref(),
        ),
    ] {
        changed.text(field, b, a);
    }
    changed.push(
        "default_headers",
        Scalar::Headers(&before.default_headers),
        Scalar::Headers(&after.default_headers),
    );
    let mut old = Matched::new(before.models(), |m| m.id.as_str());
    let mut changes = ProviderChanges {
        provider: after.id.as_str(),
        fields,
        models_added: Vec::new(),
        models_removed: Vec::new(),
        models_changed: Vec::new(),
    };
    for model in after.models() {
        match old.find(model.id.as_str()) {
            None => changes.models_added.push(model.id.as_str()),
            // Most models are the same from one catalog to the next.
            Some(previous) if previous == model => {}
            Some(previous) => {
                let mut fields = Vec::new();
                compare_model(previous, model, &mut fields);
                if !fields.is_empty() {
                    changes.models_changed.push(ModelChange {
                        model: model.id.as_str(),
                        fields,
                    });
                }
            }
        }
    }
    changes.models_removed = old.unmatched().map(|m| m.id.as_str()).collect();
    changes
}

/// Appends to `fields` each field of the model that changed.
fn compare_model<'a>(
    before: &'a Model<'a>,
    after: &'a Model<'a>,
    fields: &mut Vec<FieldChange<'a>>,
) {
    let mut changed = Fields(fields);
    changed.text("name", before.name.as_ref(), after.name.as_ref());
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
        changed.push(field, b.unwrap_or_default(), a.unwrap_or_default());
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
        changed.push(field, b.unwrap_or_default(), a.unwrap_or_default());
    }
    for (field, b, a) in [
        ("can_reason", before.can_reason, after.can_reason),
        (
            "supports_attachments",
            before.supports_attachments,
            after.supports_attachments,
        ),
    ] {
        changed.push(field, b.unwrap_or_default(), a.unwrap_or_default());
    }
    changed.push(
        "reasoning_levels",
        Scalar::Texts(&before.reasoning_levels),
        Scalar::Texts(&after.reasoning_levels),
    );
    changed.text(
        "default_reasoning_effort",
        before.default_reasoning_effort.as_ref(),
        after.default_reasoning_effort.as_ref(),
    );
    compare_options(before.options.as_deref(), after.options.as_deref(), fields);
}

/// Appends to `fields` each of a model's options that changed.
fn compare_options<'a>(
    before: Option<&'a ModelOptions>,
    after: Option<&'a ModelOptions>,
    fields: &mut Vec<FieldChange<'a>>,
) {
    let mut changed = Fields(fields);
    const NONE: &ModelOptions = &ModelOptions {
        temperature: None,
        top_p: None,
        top_k: None,
        frequency_penalty: None,
        presence_penalty: None,
        provider_options: None,
    };
    let (b, a) = (before.unwrap_or(NONE), after.unwrap_or(NONE));
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
        changed.push(field, b, a);
    }
    changed.push("options.top_k", b.top_k, a.top_k);
    // An empty object is no options at all to Go's map.
    let provider_options = |o: &'a ModelOptions| match &o.provider_options {
        Some(map) if !map.is_empty() => Scalar::Object(map),
        _ => Scalar::None,
    };
    changed.push(
        "options.provider_options",
        provider_options(b),
        provider_options(a),
    );
}

/// Where the changed fields of one provider or model go.
struct Fields<'a, 'v>(&'v mut Vec<FieldChange<'a>>);

impl<'a> Fields<'a, '_> {
    /// Records `field` when its value changed.
    fn push(
        &mut self,
        field: &'static str,
        before: impl Into<Scalar<'a>>,
        after: impl Into<Scalar<'a>>,
    ) {
        let (before, after) = (before.into(), after.into());
        if before != after {
            self.0.push(FieldChange {
                field,
                before,
                after,
            });
        }
    }

    /// A string field, absent being empty.
    fn text(
        &mut self,
        field: &'static str,
        before: Option<&'a Text<'_>>,
        after: Option<&'a Text<'_>>,
    ) {
        let text = |t: Option<&'a Text<'_>>| Scalar::Text(t.map_or("", Text::as_str));
        self.push(field, text(before), text(after));
    }
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
