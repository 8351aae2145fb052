//! The Catwalk v2 catalog: parsing and validation of raw bytes.
//!
//! Validation borrows from the input wherever it can, because it sits on the
//! path of every start-up. The raw bytes themselves are what gets cached and
//! printed, so fields this module does not know are never lost: they are only
//! skipped here, never re-serialised.

pub mod changes;
pub mod embedded;
pub mod summary;
pub mod synthetic;

use std::borrow::Cow;
use std::collections::BTreeMap;

use foldhash::{HashSet, HashSetExt};
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};

/// Longest id accepted for a provider or a model, in bytes.
pub const MAX_ID_BYTES: usize = 256;

/// A string that borrows from the input unless it had to be unescaped.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
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

/// A JSON object whose contents are not inspected (only its type is checked).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnyObject;

impl<'de> Deserialize<'de> for AnyObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor;
        impl<'de> Visitor<'de> for ObjectVisitor {
            type Value = AnyObject;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(AnyObject)
            }
        }
        deserializer.deserialize_map(ObjectVisitor)
    }
}

/// A JSON array of strings whose items are checked but not kept: no caller
/// reads them, and one allocation per model is measurable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextList;

impl<'de> Deserialize<'de> for TextList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ListVisitor;
        impl<'de> Visitor<'de> for ListVisitor {
            type Value = TextList;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of strings")
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<Text<'de>>()?.is_some() {}
                Ok(TextList)
            }
        }
        deserializer.deserialize_seq(ListVisitor)
    }
}

/// A value whose type is checked but that is not kept, for known fields no
/// caller reads: every byte of a model costs memory on a 50 MB catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checked<T>(std::marker::PhantomData<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Checked<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(|_| Checked(std::marker::PhantomData))
    }
}

/// A JSON array of objects. serde's derived structs also accept an array
/// of their fields in order (`["anthropic", "Anthropic"]` as a provider),
/// which Go's encoding/json, that Crush reads catalogs with, refuses: such
/// a catalog would be cached and then break Crush.
#[derive(Debug)]
pub struct Objects<T>(pub Vec<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Objects<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Object<T>(T);
        impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct ObjectVisitor<T>(std::marker::PhantomData<T>);
                impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
                    type Value = T;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("an object")
                    }
                    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                        T::deserialize(de::value::MapAccessDeserializer::new(map))
                    }
                }
                let visitor = ObjectVisitor(std::marker::PhantomData);
                deserializer.deserialize_map(visitor).map(Object)
            }
        }
        struct ArrayVisitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for ArrayVisitor<T> {
            type Value = Objects<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of objects")
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::new();
                while let Some(Object(item)) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Objects(items))
            }
        }
        deserializer.deserialize_seq(ArrayVisitor(std::marker::PhantomData))
    }
}

/// One provider of the catalog, with the fields this project reads.
///
/// `null` is accepted wherever a field is optional, as Go's encoding/json
/// (which writes real catalogs) emits it for empty slices and maps.
#[derive(Debug, Deserialize)]
pub struct Provider<'a> {
    /// Stable provider id.
    #[serde(borrow)]
    pub id: Text<'a>,
    /// Display name.
    #[serde(borrow)]
    pub name: Text<'a>,
    /// Wire protocol (`openai`, `anthropic`, ...).
    #[serde(borrow, rename = "type", default)]
    pub kind: Option<Text<'a>>,
    /// Usually an environment reference such as `$OPENAI_API_KEY`.
    #[serde(borrow, default)]
    pub api_key: Option<Text<'a>>,
    /// Base URL or environment reference.
    #[serde(borrow, default)]
    pub api_endpoint: Option<Text<'a>>,
    /// Id of the default large model.
    #[serde(borrow, default)]
    pub default_large_model_id: Option<Text<'a>>,
    /// Id of the default small model.
    #[serde(borrow, default)]
    pub default_small_model_id: Option<Text<'a>>,
    /// The provider's models.
    #[serde(borrow, default)]
    pub models: Option<Objects<Model<'a>>>,
    /// Extra HTTP headers sent to the provider.
    #[serde(borrow, default)]
    pub default_headers: Option<BTreeMap<Text<'a>, Text<'a>>>,
}

impl<'a> Provider<'a> {
    /// The provider's models (none when the field is absent or null).
    pub fn models(&self) -> &[Model<'a>] {
        self.models.as_ref().map_or(&[], |models| &models.0)
    }
}

/// One model of a provider, with the fields this project reads.
#[derive(Debug, Deserialize)]
pub struct Model<'a> {
    /// Model id, unique within its provider.
    #[serde(borrow)]
    pub id: Text<'a>,
    /// Display name.
    #[serde(borrow, default)]
    pub name: Option<Text<'a>>,
    /// USD per million input tokens.
    #[serde(default)]
    pub cost_per_1m_in: Option<f64>,
    /// USD per million output tokens.
    #[serde(default)]
    pub cost_per_1m_out: Option<f64>,
    /// USD per million cached input tokens (checked, not kept).
    #[serde(default)]
    pub cost_per_1m_in_cached: Option<Checked<f64>>,
    /// USD per million cached output tokens (checked, not kept).
    #[serde(default)]
    pub cost_per_1m_out_cached: Option<Checked<f64>>,
    /// Context window in tokens.
    #[serde(default)]
    pub context_window: Option<i64>,
    /// Default output token limit.
    #[serde(default)]
    pub default_max_tokens: Option<i64>,
    /// Whether the model can reason.
    #[serde(default)]
    pub can_reason: Option<bool>,
    /// Reasoning effort levels the model accepts (checked, not kept).
    #[serde(default)]
    pub reasoning_levels: Option<TextList>,
    /// Default reasoning effort (checked, not kept).
    #[serde(default)]
    pub default_reasoning_effort: Option<Checked<Text<'a>>>,
    /// Whether the model accepts attachments.
    #[serde(default)]
    pub supports_attachments: Option<bool>,
    /// Sampling options; only its type is checked.
    #[serde(default)]
    pub options: Option<AnyObject>,
}

#[cfg(test)]
mod size {
    // The per-model cost of a parsed catalog; grows only on purpose.
    const _: () = assert!(std::mem::size_of::<super::Model<'static>>() <= 136);
}

/// A validated catalog, borrowing from the bytes it was read from.
#[derive(Debug)]
pub struct Catalog<'a> {
    /// The providers, in the order of the source.
    pub providers: Vec<Provider<'a>>,
    /// Problems that do not make the catalog unusable.
    pub warnings: Vec<String>,
}

impl Catalog<'_> {
    /// Total number of models over all providers.
    pub fn model_count(&self) -> usize {
        self.providers.iter().map(|p| p.models().len()).sum()
    }
}

/// Why a catalog was refused. The message names the provider (index and id)
/// and the field where that is known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ValidationError(pub String);

/// Parses and validates a catalog.
pub fn validate(bytes: &[u8]) -> Result<Catalog<'_>, ValidationError> {
    // serde_json checks UTF-8 only in the strings it decodes; the ones it
    // skips (unknown fields) would slip through. Checking it all up front is
    // far cheaper than the parse.
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Err(describe_parse_error(bytes));
    };
    let providers: Vec<Provider<'_>> = match serde_json::from_str(text) {
        Ok(Objects(providers)) => providers,
        Err(_) => return Err(describe_parse_error(bytes)),
    };
    if providers.is_empty() {
        return Err(ValidationError(
            "the catalog is an empty list: it names no provider".into(),
        ));
    }
    let mut warnings = Vec::new();
    // foldhash rather than std's SipHash: several times faster on short ids
    // (validating 50 MB: 79.6 to 72.5 ms), and seeded anew in each process,
    // so that a catalog cannot be made of ids that all collide.
    let mut provider_ids = HashSet::with_capacity(providers.len());
    for (index, provider) in providers.iter().enumerate() {
        let at = || format!("provider {index} ({})", printable(provider.id.as_str()));
        check_id(provider.id.as_str())
            .map_err(|why| ValidationError(format!("{}: id {why}", at())))?;
        if provider.name.as_str().trim().is_empty() {
            return Err(ValidationError(format!("{}: name is empty", at())));
        }
        if !provider_ids.insert(provider.id.as_str()) {
            return Err(ValidationError(format!(
                "{}: id is not unique: an earlier provider has the same id",
                at()
            )));
        }
        let mut model_ids = HashSet::with_capacity(provider.models().len());
        for (model_index, model) in provider.models().iter().enumerate() {
            let model_at = || format!("{}: models[{model_index}]", at());
            check_id(model.id.as_str())
                .map_err(|why| ValidationError(format!("{}: id {why}", model_at())))?;
            if !model_ids.insert(model.id.as_str()) {
                return Err(ValidationError(format!(
                    "{} ({}): id is not unique within the provider",
                    model_at(),
                    printable(model.id.as_str())
                )));
            }
        }
        for (field, value) in [
            ("default_large_model_id", &provider.default_large_model_id),
            ("default_small_model_id", &provider.default_small_model_id),
        ] {
            if let Some(id) = value.as_ref().map(Text::as_str)
                && !id.is_empty()
                && !model_ids.contains(id)
            {
                warnings.push(format!(
                    "{}: {field} {} names no model of this provider",
                    at(),
                    printable(id)
                ));
            }
        }
    }
    Ok(Catalog {
        providers,
        warnings,
    })
}

fn check_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        Err("is empty".into())
    } else if id.len() > MAX_ID_BYTES {
        Err(format!(
            "is {} bytes long, over the limit of {MAX_ID_BYTES}",
            id.len()
        ))
    } else if has_control(id) {
        Err(format!("{} contains a control character", printable(id)))
    } else {
        Ok(())
    }
}

/// Whether `s` holds a control character.
pub fn has_control(s: &str) -> bool {
    // The byte test settles the usual all-printable-ASCII id without
    // decoding characters.
    !s.bytes().all(|b| (0x20..0x7f).contains(&b)) && s.chars().any(char::is_control)
}

/// Quotes a string from the catalog for a one-line message: escapes control
/// characters and shortens it, so hostile input cannot forge terminal output.
pub fn printable(s: &str) -> String {
    const MAX: usize = 80;
    let mut out = String::from("\"");
    for (count, c) in s.chars().enumerate() {
        if count == MAX {
            out.push('…');
            break;
        }
        out.extend(c.escape_debug());
    }
    out.push('"');
    out
}

/// Builds a precise message for bytes that did not deserialize. This is the
/// slow path, run only on failure: it parses again, tracking the path.
fn describe_parse_error(bytes: &[u8]) -> ValidationError {
    if let Err(e) = std::str::from_utf8(bytes) {
        return ValidationError(format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.valid_up_to()
        ));
    }
    let generic: serde_json::Value = match serde_json::from_slice(bytes) {
        Ok(value) => value,
        Err(e) if looks_like_html(bytes) => {
            return ValidationError(format!(
                "got an HTML page, not a JSON catalog (a proxy or login page?): {e}"
            ));
        }
        Err(e) => return ValidationError(format!("not valid JSON: {e}")),
    };
    let Some(array) = generic.as_array() else {
        return ValidationError(format!(
            "expected a JSON array of providers, found {}",
            json_kind(&generic)
        ));
    };
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let err = match serde_path_to_error::deserialize::<_, Objects<Provider<'_>>>(&mut de) {
        Ok(_) => return ValidationError("the catalog could not be read".into()),
        Err(err) => err,
    };
    let segments: Vec<_> = err.path().iter().collect();
    let inner = plain_serde_message(err.inner());
    let Some(serde_path_to_error::Segment::Seq { index }) = segments.first() else {
        return ValidationError(inner);
    };
    let provider = &array[*index];
    if !provider.is_object() {
        return ValidationError(format!(
            "provider {index}: expected an object, found {}",
            json_kind(provider)
        ));
    }
    let mut place = format!("provider {index} ({})", value_id(provider));
    let mut value = provider;
    let mut field = String::new();
    for segment in &segments[1..] {
        match segment {
            serde_path_to_error::Segment::Map { key } => {
                value = &value[key.as_str()];
                if !field.is_empty() {
                    field.push('.');
                }
                field.push_str(key);
            }
            serde_path_to_error::Segment::Seq { index } => {
                value = &value[*index];
                if field == "models" {
                    place = format!("{place}: models[{index}] ({})", value_id(value));
                    field.clear();
                } else {
                    field.push_str(&format!("[{index}]"));
                }
            }
            _ => {}
        }
    }
    if field.is_empty() {
        ValidationError(format!("{place}: {inner}"))
    } else {
        ValidationError(format!("{place}: field {field}: {inner}"))
    }
}

fn value_id(value: &serde_json::Value) -> String {
    match value.get("id") {
        Some(serde_json::Value::String(id)) => printable(id),
        _ => "no id".into(),
    }
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// serde names Rust types in its messages; a catalog author thinks in JSON.
fn plain_serde_message(err: &serde_json::Error) -> String {
    let message = err.to_string();
    let message = match message.find(" at line ") {
        Some(at) => &message[..at],
        None => &message,
    };
    message
        .replace("expected i64", "expected an integer")
        .replace("expected f64", "expected a number")
        .replace("a sequence", "an array")
        .replace("invalid type: map", "invalid type: object")
        .replace("invalid type: sequence", "invalid type: array")
}

fn looks_like_html(bytes: &[u8]) -> bool {
    let start = bytes.trim_ascii_start();
    let head = &start[..start.len().min(64)];
    head.first() == Some(&b'<') || head.to_ascii_lowercase().windows(5).any(|w| w == b"<html")
}

/// SHA-256 of `bytes`: the project's one hash function. aws-lc's (the
/// cryptography rustls already links) rather than the `sha2` crate's: as
/// fast on a CPU with SHA extensions, a third faster on one without, where
/// `sha2` falls back to portable code (docs/BENCHMARKS.md).
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, bytes);
    let mut out = [0u8; 32];
    out.copy_from_slice(digest.as_ref());
    out
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// The ETag Catwalk sends for a body with this SHA-256: the quoted hex of its
/// first 16 bytes.
pub fn catwalk_etag(sha256: &[u8; 32]) -> String {
    format!("\"{}\"", hex(&sha256[..16]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(json: &str) -> String {
        validate(json.as_bytes()).unwrap_err().0
    }

    #[test]
    fn accepts_minimal_catalog_and_borrows_strings() {
        let json = r#"[{"id":"a","name":"A","models":[{"id":"m"}]}]"#;
        let catalog = validate(json.as_bytes()).unwrap();
        assert_eq!(catalog.providers.len(), 1);
        assert_eq!(catalog.model_count(), 1);
        assert!(matches!(catalog.providers[0].id.0, Cow::Borrowed(_)));
        assert!(catalog.warnings.is_empty());
    }

    #[test]
    fn unescapes_escaped_strings() {
        let json = r#"[{"id":"a\u0062","name":"A"}]"#;
        let catalog = validate(json.as_bytes()).unwrap();
        assert_eq!(catalog.providers[0].id.as_str(), "ab");
    }

    #[test]
    fn accepts_null_optional_fields_and_unknown_fields() {
        let json = r#"[{"id":"a","name":"A","models":null,"default_headers":null,
            "future":{"x":[1,2]},"type":"brand-new-type"}]"#;
        assert!(validate(json.as_bytes()).is_ok());
    }

    #[test]
    fn refuses_non_json_and_wrong_shapes() {
        assert!(err("").starts_with("not valid JSON"));
        assert!(err("<html><body>login</body></html>").contains("HTML page"));
        assert_eq!(
            err("{}"),
            "expected a JSON array of providers, found an object"
        );
        assert!(err("[]").contains("empty list"));
        assert_eq!(err("[1]"), "provider 0: expected an object, found a number");
        assert!(
            validate(b"[{\"id\":\"a\",\"name\":\"\xff\"}]")
                .unwrap_err()
                .0
                .starts_with("not UTF-8")
        );
    }

    /// Found by fuzzing: bytes that are not UTF-8 inside an unknown field
    /// were accepted, because serde_json does not decode skipped strings.
    #[test]
    fn refuses_invalid_utf8_in_unknown_fields() {
        let json = b"[{\"id\":\"a\",\"name\":\"A\",\"future\":\"\xd2x\"}]";
        assert!(validate(json).unwrap_err().0.starts_with("not UTF-8"));
    }

    /// Found by fuzzing: a lone surrogate escape is accepted where this
    /// project only skips the string (as Go's encoding/json, which Crush
    /// uses, accepts it), and refused where it reads it.
    #[test]
    fn lone_surrogates_only_matter_in_known_fields() {
        assert!(validate(br#"[{"id":"a","name":"A","x":"\ud800","models":[{"id":"m","options":{"k":"\udfff"}}]}]"#).is_ok());
        assert!(validate(br#"[{"id":"a\ud800","name":"A"}]"#).is_err());
    }

    /// Found by fuzzing: a number beyond f64 (`1e400`) is accepted where
    /// this project skips it, as Go's encoding/json skips unknown fields
    /// without converting them, and refused where it reads it.
    #[test]
    fn huge_numbers_only_matter_in_known_fields() {
        assert!(validate(br#"[{"id":"a","name":"A","x":488e432000}]"#).is_ok());
        let err =
            validate(br#"[{"id":"a","name":"A","models":[{"id":"m","cost_per_1m_in":1e400}]}]"#)
                .unwrap_err();
        assert!(err.0.contains("number out of range"), "{err}");
    }

    /// serde would take an array of a provider's fields in order; Go's
    /// encoding/json, which Crush reads the cache with, would not.
    #[test]
    fn providers_and_models_must_be_objects() {
        assert_eq!(
            err(r#"[["a","A"]]"#),
            "provider 0: expected an object, found an array"
        );
        assert_eq!(
            err(r#"[{"id":"a","name":"A","models":[{"id":"m"},["m2"]]}]"#),
            "provider 0 (\"a\"): models[1] (no id): invalid type: array, expected an object"
        );
    }

    #[test]
    fn names_provider_and_missing_field() {
        assert_eq!(
            err(r#"[{"id":"a","name":"A"},{"id":"b"}]"#),
            "provider 1 (\"b\"): missing field `name`"
        );
        assert_eq!(
            err(r#"[{"name":"A"}]"#),
            "provider 0 (no id): missing field `id`"
        );
    }

    #[test]
    fn names_provider_model_and_field_of_wrong_type() {
        let json =
            r#"[{"id":"a","name":"A","models":[{"id":"m1"},{"id":"m2","context_window":"big"}]}]"#;
        assert_eq!(
            err(json),
            "provider 0 (\"a\"): models[1] (\"m2\"): field context_window: invalid type: string \"big\", expected an integer"
        );
        let json = r#"[{"id":"a","name":"A","models":[{"id":"m","cost_per_1m_in":true}]}]"#;
        assert!(
            err(json)
                .ends_with("field cost_per_1m_in: invalid type: boolean `true`, expected a number")
        );
        let json = r#"[{"id":"a","name":"A","default_headers":{"x":1}}]"#;
        assert!(err(json).starts_with("provider 0 (\"a\"): field default_headers.x: invalid type"));
        let json = r#"[{"id":"a","name":"A","models":[{"id":"m","options":[]}]}]"#;
        assert!(err(json).ends_with("field options: invalid type: array, expected an object"));
        let json = r#"[{"id":"a","name":"A","models":[{"id":"m","context_window":1.5}]}]"#;
        assert!(err(json).contains("context_window"));
        let json = r#"[{"id":"a","name":"A","models":{}}]"#;
        assert!(err(json).contains("field models: invalid type: object, expected an array"));
    }

    #[test]
    fn refuses_bad_ids() {
        assert_eq!(
            err(r#"[{"id":"","name":"A"}]"#),
            "provider 0 (\"\"): id is empty"
        );
        assert!(err(r#"[{"id":"a\u001b[31m","name":"A"}]"#).contains("control character"));
        let long = "x".repeat(MAX_ID_BYTES + 1);
        assert!(err(&format!(r#"[{{"id":"{long}","name":"A"}}]"#)).contains("over the limit"));
        assert!(err(r#"[{"id":"a","name":" "}]"#).ends_with("name is empty"));
        assert!(
            err(r#"[{"id":"a","name":"A"},{"id":"a","name":"B"}]"#)
                .contains("provider 1 (\"a\"): id is not unique")
        );
        assert!(
            err(r#"[{"id":"a","name":"A","models":[{"id":"m"},{"id":"m"}]}]"#)
                .contains("models[1] (\"m\"): id is not unique")
        );
        assert!(
            err(r#"[{"id":"a","name":"A","models":[{"id":""}]}]"#)
                .ends_with("models[0]: id is empty")
        );
        assert!(err(r#"[{"id":"a","name":"A","id":"b"}]"#).contains("duplicate field `id`"));
    }

    #[test]
    fn unknown_default_model_is_a_warning() {
        let json = r#"[{"id":"a","name":"A","default_large_model_id":"nope","default_small_model_id":"","models":[{"id":"m"}]}]"#;
        let catalog = validate(json.as_bytes()).unwrap();
        assert_eq!(
            catalog.warnings,
            vec![
                "provider 0 (\"a\"): default_large_model_id \"nope\" names no model of this provider"
            ]
        );
    }

    #[test]
    fn sha256_is_sha256() {
        // FIPS 180-2, appendix B.1.
        assert_eq!(
            hex(&sha256(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn catwalk_etag_is_first_16_bytes_of_sha256() {
        let digest = sha256(b"[]");
        assert_eq!(
            catwalk_etag(&digest),
            format!("\"{}\"", &hex(&digest)[..32])
        );
        assert_eq!(hex(&digest).len(), 64);
    }

    #[test]
    fn printable_escapes_and_shortens() {
        assert_eq!(printable("a\nb"), "\"a\\nb\"");
        assert_eq!(printable(&"x".repeat(100)).chars().count(), 83);
    }
}
