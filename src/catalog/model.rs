//! The catalog's data model: catwalk's structs, each field with the type
//! Crush decodes it to, read by Go's rules ([`super::go_json`]) and
//! borrowing from the bytes wherever no escape had to be undone.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};

use super::go_json::{GoStruct, go_struct, list};

/// A string that borrows from the input unless it had to be unescaped.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text<'a>(pub Cow<'a, str>);

impl Text<'_> {
    /// The string itself.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl serde::Serialize for Text<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl AsRef<str> for Text<'_> {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Text(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}

/// One provider of the catalog: every field of catwalk's `Provider`.
///
/// An absent field and `null` are Go's zero value: `None`, or empty.
#[derive(Debug, Default)]
pub struct Provider<'a> {
    /// Stable provider id (required here, and not empty).
    pub id: Text<'a>,
    /// Display name (required here, and not blank).
    pub name: Text<'a>,
    /// Wire protocol (`openai`, `anthropic`, ...).
    pub kind: Option<Text<'a>>,
    /// Usually an environment reference such as `$OPENAI_API_KEY`.
    pub api_key: Option<Text<'a>>,
    /// Base URL or environment reference.
    pub api_endpoint: Option<Text<'a>>,
    /// Id of the default large model.
    pub default_large_model_id: Option<Text<'a>>,
    /// Id of the default small model.
    pub default_small_model_id: Option<Text<'a>>,
    /// The provider's models.
    pub models: Vec<Model<'a>>,
    /// Extra HTTP headers sent to the provider (a JSON object: a key given
    /// twice keeps its last value, as in Go's map).
    pub default_headers: BTreeMap<Text<'a>, Text<'a>>,
    /// Whether `id` and `name`, which are required, were present.
    present: [bool; 2],
}

impl<'a> Provider<'a> {
    /// The provider's models.
    pub fn models(&self) -> &[Model<'a>] {
        &self.models
    }

    /// The values Crush expands before use: `api_key`, `api_endpoint` and
    /// each header's, named as a message names them.
    pub fn expanded_fields(&self) -> impl Iterator<Item = (Cow<'static, str>, &str)> {
        let key = self
            .api_key
            .as_ref()
            .map(|v| ("api_key".into(), v.as_str()));
        let endpoint = self
            .api_endpoint
            .as_ref()
            .map(|v| ("api_endpoint".into(), v.as_str()));
        let headers = self.default_headers.iter().map(|(name, value)| {
            (
                format!("default_headers.{}", name.as_str()).into(),
                value.as_str(),
            )
        });
        key.into_iter().chain(endpoint).chain(headers)
    }
}

impl<'de> GoStruct<'de> for Provider<'de> {
    const FIELDS: &'static [&'static str] = &[
        "id",
        "name",
        "type",
        "api_key",
        "api_endpoint",
        "default_large_model_id",
        "default_small_model_id",
        "models",
        "default_headers",
    ];
    const WHAT: &'static str = "a provider";
    const DEPTH: usize = 2;
    fn read<A: MapAccess<'de>>(&mut self, index: usize, map: &mut A) -> Result<(), A::Error> {
        match index {
            // Required, and a string: Go would take `null` as an empty id,
            // which no catalog means.
            0 => {
                self.present[0] = true;
                self.id = map.next_value()?;
            }
            1 => {
                self.present[1] = true;
                self.name = map.next_value()?;
            }
            2 => self.kind = map.next_value()?,
            3 => self.api_key = map.next_value()?,
            4 => self.api_endpoint = map.next_value()?,
            5 => self.default_large_model_id = map.next_value()?,
            6 => self.default_small_model_id = map.next_value()?,
            7 => self.models = list(map)?,
            _ => self.default_headers = map.next_value::<Option<_>>()?.unwrap_or_default(),
        }
        Ok(())
    }
}

impl<'de> Deserialize<'de> for Provider<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let provider: Provider<'de> = go_struct(d)?;
        for (present, name) in provider.present.iter().zip(["id", "name"]) {
            if !present {
                return Err(de::Error::missing_field(name));
            }
        }
        Ok(provider)
    }
}

/// One model of a provider: every field of catwalk's `Model`.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Model<'a> {
    /// Model id, unique within its provider (required here, not empty).
    pub id: Text<'a>,
    /// Display name.
    pub name: Option<Text<'a>>,
    /// USD per million input tokens.
    pub cost_per_1m_in: Option<f64>,
    /// USD per million output tokens.
    pub cost_per_1m_out: Option<f64>,
    /// USD per million cached input tokens.
    pub cost_per_1m_in_cached: Option<f64>,
    /// USD per million cached output tokens.
    pub cost_per_1m_out_cached: Option<f64>,
    /// Context window in tokens.
    pub context_window: Option<i64>,
    /// Default output token limit.
    pub default_max_tokens: Option<i64>,
    /// Whether the model can reason.
    pub can_reason: Option<bool>,
    /// Reasoning effort levels the model accepts.
    pub reasoning_levels: Vec<Text<'a>>,
    /// Default reasoning effort.
    pub default_reasoning_effort: Option<Text<'a>>,
    /// Whether the model accepts attachments (catwalk's `SupportsImages`).
    pub supports_attachments: Option<bool>,
    /// Sampling options.
    pub options: Option<Box<ModelOptions>>,
    present: bool,
}

impl<'de> GoStruct<'de> for Model<'de> {
    const FIELDS: &'static [&'static str] = &[
        "id",
        "name",
        "cost_per_1m_in",
        "cost_per_1m_out",
        "cost_per_1m_in_cached",
        "cost_per_1m_out_cached",
        "context_window",
        "default_max_tokens",
        "can_reason",
        "reasoning_levels",
        "default_reasoning_effort",
        "supports_attachments",
        "options",
    ];
    const WHAT: &'static str = "a model";
    const DEPTH: usize = 4;
    fn read<A: MapAccess<'de>>(&mut self, index: usize, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => {
                self.present = true;
                self.id = map.next_value()?;
            }
            1 => self.name = map.next_value()?,
            2 => self.cost_per_1m_in = map.next_value()?,
            3 => self.cost_per_1m_out = map.next_value()?,
            4 => self.cost_per_1m_in_cached = map.next_value()?,
            5 => self.cost_per_1m_out_cached = map.next_value()?,
            6 => self.context_window = map.next_value()?,
            7 => self.default_max_tokens = map.next_value()?,
            8 => self.can_reason = map.next_value()?,
            9 => self.reasoning_levels = list(map)?,
            10 => self.default_reasoning_effort = map.next_value()?,
            11 => self.supports_attachments = map.next_value()?,
            _ => self.options = map.next_value::<Option<ModelOptions>>()?.map(Box::new),
        }
        Ok(())
    }
}

impl<'de> Deserialize<'de> for Model<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let model: Model<'de> = go_struct(d)?;
        if !model.present {
            return Err(de::Error::missing_field("id"));
        }
        Ok(model)
    }
}

/// A model's sampling options: every field of catwalk's `ModelOptions`.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ModelOptions {
    /// `temperature`.
    pub temperature: Option<f64>,
    /// `top_p`.
    pub top_p: Option<f64>,
    /// `top_k`, an integer.
    pub top_k: Option<i64>,
    /// `frequency_penalty`.
    pub frequency_penalty: Option<f64>,
    /// `presence_penalty`.
    pub presence_penalty: Option<f64>,
    /// `provider_options`: an object of anything (Go's `map[string]any`,
    /// whose numbers must still fit a float64).
    pub provider_options: Option<serde_json::Map<String, serde_json::Value>>,
}

impl<'de> GoStruct<'de> for ModelOptions {
    const FIELDS: &'static [&'static str] = &[
        "temperature",
        "top_p",
        "top_k",
        "frequency_penalty",
        "presence_penalty",
        "provider_options",
    ];
    const WHAT: &'static str = "a model's options";
    const DEPTH: usize = 5;
    fn read<A: MapAccess<'de>>(&mut self, index: usize, map: &mut A) -> Result<(), A::Error> {
        match index {
            0 => self.temperature = map.next_value()?,
            1 => self.top_p = map.next_value()?,
            2 => self.top_k = map.next_value()?,
            3 => self.frequency_penalty = map.next_value()?,
            4 => self.presence_penalty = map.next_value()?,
            _ => self.provider_options = map.next_value()?,
        }
        Ok(())
    }
}

impl<'de> Deserialize<'de> for ModelOptions {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        go_struct(d)
    }
}

/// A validated catalog, borrowing from the bytes it was read from.
#[derive(Debug)]
pub struct Catalog<'a> {
    /// The providers, in the order of the source.
    pub providers: Vec<Provider<'a>>,
    /// Problems that do not make the catalog unusable.
    pub warnings: Vec<super::Warning>,
}

impl Catalog<'_> {
    /// Total number of models over all providers.
    pub fn model_count(&self) -> usize {
        self.providers.iter().map(|p| p.models().len()).sum()
    }
}
