//! A refused catalog's message in a catalog author's words: where (the
//! provider's index and id, the model, the field), and what, in JSON's
//! terms rather than serde's or Rust's.

use serde_path_to_error::Segment;

use super::validate::invalid;
use super::{Provider, Target, ValidationError, escape, printable};

/// Builds a precise message for bytes that did not deserialize. This is the
/// slow path, run only on failure: it parses again, tracking the path.
pub(super) fn describe_parse_error(bytes: &[u8], target: Target) -> ValidationError {
    if let Err(e) = std::str::from_utf8(bytes) {
        let at = e.valid_up_to();
        return invalid(format!("not UTF-8 text (invalid byte at offset {at})"));
    }
    if bytes.trim_ascii().is_empty() {
        return invalid("it is empty");
    }
    // A generic reading, for the ids the message names; none for a
    // document nested deeper than serde_json's limit for it (128), whose
    // error the typed reading below says.
    let generic: Option<serde_json::Value> = match serde_json::from_slice(bytes) {
        Ok(value) => Some(value),
        Err(_) if looks_like_html(bytes) => return ValidationError::HtmlPage,
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => None,
        Err(e) => return invalid(json_syntax(bytes, &e)),
    };
    let expected = match (target, &generic) {
        (Target::Catalog, Some(g)) if !g.is_array() => Some("a JSON array of providers"),
        (Target::Hyper, Some(g)) if !g.is_object() => Some("a JSON object (one provider)"),
        _ => None,
    };
    if let (Some(expected), Some(generic)) = (expected, &generic) {
        return invalid(format!("expected {expected}, found {}", json_kind(generic)));
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let err = match target {
        Target::Catalog => serde_path_to_error::deserialize::<_, Vec<Provider>>(&mut de).err(),
        Target::Hyper => serde_path_to_error::deserialize::<_, Provider>(&mut de).err(),
    };
    let Some(err) = err else {
        return invalid("the catalog could not be read");
    };
    let segments: Vec<_> = err.path().iter().collect();
    let inner = plain_serde_message(err.inner());
    // Where it is: the provider (one of the catalog's, or the document
    // itself, read generically for its id and its models'), the model, the
    // field.
    let (mut value, path, mut place) = match (target, segments.split_first()) {
        (Target::Hyper, _) => (generic.as_ref(), &segments[..], "the provider".to_owned()),
        (Target::Catalog, Some((Segment::Seq { index }, path))) => {
            let provider = generic.as_ref().and_then(|g| g.get(*index));
            if let Some(provider) = provider.filter(|p| !p.is_object()) {
                let found = json_kind(provider);
                return invalid(format!(
                    "provider {index}: expected an object, found {found}"
                ));
            }
            (provider, path, format!("provider {index}"))
        }
        (Target::Catalog, _) => return invalid(inner),
    };
    place.push_str(&value_id(value));
    let mut field = String::new();
    for segment in path {
        match segment {
            Segment::Map { key } => {
                value = value.and_then(|v| v.get(key.as_str()));
                if !field.is_empty() {
                    field.push('.');
                }
                field.push_str(key);
            }
            Segment::Seq { index } => {
                value = value.and_then(|v| v.get(*index));
                if field == "models" {
                    place = format!("{place}: models[{index}]{}", value_id(value));
                    field.clear();
                } else {
                    field.push_str(&format!("[{index}]"));
                }
            }
            _ => {}
        }
    }
    invalid(match field.is_empty() {
        true => format!("{place}: {inner}"),
        false => format!("{place}: field {field}: {inner}"),
    })
}

/// What a file that starts with a byte-order mark is told: the mark is
/// invisible, so it is named (Go's decoder refuses it too).
pub(crate) const BYTE_ORDER_MARK: &str = "it starts with a byte-order mark (U+FEFF), which JSON does not allow: save it as UTF-8 without one";

/// A JSON syntax error in plain words, with where it is and what stands
/// there.
fn json_syntax(bytes: &[u8], e: &serde_json::Error) -> String {
    let (line, column) = (e.line(), e.column());
    if bytes.starts_with("\u{feff}".as_bytes()) {
        return format!("not JSON: {BYTE_ORDER_MARK}");
    }
    if e.classify() == serde_json::error::Category::Eof {
        return format!(
            "not JSON: it ends before the catalog is complete (line {line}, column {column}), as if cut short"
        );
    }
    let what = json_problem(e);
    // What stands there, when it is a character one can show.
    let found = String::from_utf8_lossy(bytes)
        .lines()
        .nth(line.saturating_sub(1))
        .and_then(|l| l.chars().nth(column.saturating_sub(1)))
        .map(|c| format!(", found `{}`", escape::safe(c.encode_utf8(&mut [0; 4]))))
        .unwrap_or_default();
    format!("not JSON: {what}{found} (line {line}, column {column})")
}

/// What a JSON syntax error is, in plain words, without where.
pub(crate) fn json_problem(e: &serde_json::Error) -> String {
    if e.classify() == serde_json::error::Category::Eof {
        return "it ends before the JSON is complete".into();
    }
    let message = e.to_string();
    let what = message.split(" at line ").next().unwrap_or(&message);
    let what = match what {
        "expected value" => "a JSON value was expected",
        "expected ident" => "an unknown word (JSON knows only true, false and null)",
        "trailing comma" => "a comma before a closing bracket",
        "trailing characters" => "more text after the catalog's closing bracket",
        "key must be a string" => "an object key that is not a string in quotes",
        "expected `:`" => "a colon after an object key was expected",
        "expected `,` or `]`" => "a comma or `]` was expected",
        "expected `,` or `}`" => "a comma or `}` was expected",
        "invalid escape" => "an invalid escape in a string",
        other if other.starts_with("control character") => {
            "a raw control character inside a string"
        }
        other => other,
    };
    what.to_owned()
}

/// ` ("id")` or ` (no id)` for a provider or model read generically;
/// nothing when it could not be.
fn value_id(value: Option<&serde_json::Value>) -> String {
    match value.map(|v| v.get("id")) {
        Some(Some(serde_json::Value::String(id))) => format!(" ({})", printable(id)),
        Some(_) => " (no id)".into(),
        None => String::new(),
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
    let message = message.split(" at line ").next().unwrap_or(&message);
    message
        .replace("expected i64", "expected an integer")
        .replace("expected f64", "expected a number")
        .replace("a sequence", "an array")
        .replace("invalid type: map", "invalid type: object")
        .replace("invalid type: sequence", "invalid type: array")
        // Only where Crush reads (`provider_options`): serde_json's own
        // limit, far below Go's (GO_MAX_DEPTH), which no catalog comes near.
        .replace(
            "recursion limit exceeded",
            "nested more than 128 deep, more than this reader follows",
        )
}

fn looks_like_html(bytes: &[u8]) -> bool {
    let start = bytes.trim_ascii_start();
    let head = &start[..start.len().min(64)];
    head.first() == Some(&b'<') || head.to_ascii_lowercase().windows(5).any(|w| w == b"<html")
}
