//! The catalog's data model: catwalk's structs, each field with the type
//! Crush decodes it to, read by Go's rules ([`super::go_json`]).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use compact_str::CompactString;

use super::go_json::go_struct;

go_struct! {
    /// One provider of the catalog: every field of catwalk's `Provider`.
    /// An absent field and `null` are Go's zero value: `None`, or empty.
    Provider: "a provider", depth 2, required &["id", "name"];
    /// Stable provider id (required here, and not empty).
    id: String,
    /// Display name (required here, and not blank).
    name: String,
    /// Wire protocol (`openai`, `anthropic`, ...).
    kind = "type": Option<String>,
    /// Usually an environment reference such as `$OPENAI_API_KEY`.
    api_key: Option<String>,
    /// Base URL or environment reference.
    api_endpoint: Option<String>,
    /// Id of the default large model.
    default_large_model_id: Option<String>,
    /// Id of the default small model.
    default_small_model_id: Option<String>,
    /// The provider's models.
    models: Vec<Model>,
    /// Extra HTTP headers sent to the provider (a JSON object: a key given
    /// twice keeps its last value, as in Go's map).
    default_headers: BTreeMap<String, String>,
}

impl Provider {
    /// The provider's models.
    pub fn models(&self) -> &[Model] {
        &self.models
    }

    /// The values Crush expands before use: `api_key`, `api_endpoint` and
    /// each header's, named as a message names them.
    pub fn expanded_fields(&self) -> impl Iterator<Item = (Cow<'static, str>, &str)> {
        let key = self.api_key.as_deref().map(|v| ("api_key".into(), v));
        let endpoint = self
            .api_endpoint
            .as_deref()
            .map(|v| ("api_endpoint".into(), v));
        let headers = (self.default_headers.iter())
            .map(|(name, value)| (format!("default_headers.{name}").into(), value.as_str()));
        key.into_iter().chain(endpoint).chain(headers)
    }
}

go_struct! {
    /// One model of a provider: every field of catwalk's `Model`.
    Model: "a model", depth 4, required &["id"];
    /// Model id, unique within its provider (required here, not empty).
    id: CompactString,
    /// Display name.
    name: Option<CompactString>,
    /// USD per million input tokens.
    cost_per_1m_in: Option<f64>,
    /// USD per million output tokens.
    cost_per_1m_out: Option<f64>,
    /// USD per million cached input tokens.
    cost_per_1m_in_cached: Option<f64>,
    /// USD per million cached output tokens.
    cost_per_1m_out_cached: Option<f64>,
    /// Context window in tokens.
    context_window: Option<i64>,
    /// Default output token limit.
    default_max_tokens: Option<i64>,
    /// Whether the model can reason.
    can_reason: Option<bool>,
    /// Reasoning effort levels the model accepts.
    reasoning_levels: Box<[CompactString]>,
    /// Default reasoning effort.
    default_reasoning_effort: Option<CompactString>,
    /// Whether the model accepts attachments (catwalk's `SupportsImages`).
    supports_attachments: Option<bool>,
    /// Sampling options (boxed: few models have them, and inline they
    /// would make every model 100 bytes larger).
    options: Option<Box<ModelOptions>>,
}

go_struct! {
    /// A model's sampling options: every field of catwalk's `ModelOptions`.
    ModelOptions: "a model's options", depth 5, required &[];
    /// `temperature`.
    temperature: Option<f64>,
    /// `top_p`.
    top_p: Option<f64>,
    /// `top_k`, an integer.
    top_k: Option<i64>,
    /// `frequency_penalty`.
    frequency_penalty: Option<f64>,
    /// `presence_penalty`.
    presence_penalty: Option<f64>,
    /// `provider_options`: an object of anything (Go's `map[string]any`,
    /// whose numbers must still fit a float64).
    provider_options: Option<serde_json::Map<String, serde_json::Value>>,
}

/// A validated catalog.
#[derive(Debug)]
pub struct Catalog {
    /// The providers, in the order of the source; shared with the catalog
    /// it replaces where their bytes are the same.
    pub providers: Vec<Arc<Provider>>,
    /// Problems that do not make the catalog unusable.
    pub warnings: Vec<super::Warning>,
    /// Where each provider stands in the bytes of a catalog read whole
    /// (none for Hyper's document, or a catalog read as the previous one).
    pub(super) spans: Vec<Range<usize>>,
}

impl Catalog {
    /// Total number of models over all providers.
    pub fn model_count(&self) -> usize {
        self.providers.iter().map(|p| p.models.len()).sum()
    }
}
