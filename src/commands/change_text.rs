//! A change as a person reads it: a field's old and new values whole, a
//! map's change by the key that changed (for the report of
//! `update-providers`).

use super::terminal::Atom;
use crate::catalog::changes::{FieldChange, Scalar};
use crate::catalog::escape::{json_text, quoted};

/// The changes one field makes, as a person reads them: one for a value,
/// one per key that changed for a map (`default_headers["X-Title"] "Crush"
/// → "Evil"`).
pub(super) fn parts<'a>(field: &FieldChange<'a>) -> Vec<Atom> {
    let change = |name: String, before: String, after: String| Atom::change(name, before, after);
    let keyed = |name: &str, key: &str| format!("{name}[{}]", quoted(key));
    match (&field.before, &field.after) {
        (Scalar::Headers(before), Scalar::Headers(after)) => {
            let keys: std::collections::BTreeSet<&str> = before
                .keys()
                .chain(after.keys())
                .map(|k| k.as_str())
                .collect();
            let value = |map: &std::collections::BTreeMap<String, String>, key: &str| {
                map.iter()
                    .find(|(k, _)| k.as_str() == key)
                    .map_or("(none)".to_string(), |(_, v)| quoted(v.as_str()))
            };
            keys.into_iter()
                .map(|key| (key, value(before, key), value(after, key)))
                .filter(|(_, b, a)| b != a)
                .map(|(key, b, a)| change(keyed(field.field, key), b, a))
                .collect()
        }
        (Scalar::Object(_), Scalar::Object(_) | Scalar::None)
        | (Scalar::None, Scalar::Object(_)) => {
            let object = |s: Scalar<'a>| match s {
                Scalar::Object(map) => Some(map),
                _ => None,
            };
            let (b, a) = (object(field.before), object(field.after));
            let keys: std::collections::BTreeSet<&String> =
                b.into_iter().chain(a).flat_map(|m| m.keys()).collect();
            let value = |m: Option<&serde_json::Map<String, serde_json::Value>>, key: &str| {
                m.and_then(|m| m.get(key))
                    .map_or("(none)".to_string(), json_text)
            };
            keys.into_iter()
                .map(|key| (key, value(b, key), value(a, key)))
                .filter(|(_, b, a)| b != a)
                .map(|(key, b, a)| change(keyed(field.field, key), b, a))
                .collect()
        }
        (before, after) => vec![change(
            field.field.to_owned(),
            value_text(before),
            value_text(after),
        )],
    }
}

/// A value as a person reads it, whole: numbers plain, strings quoted,
/// lists and objects as JSON.
fn value_text(value: &Scalar<'_>) -> String {
    match *value {
        Scalar::None | Scalar::Text("") => "(none)".into(),
        Scalar::Text(s) => quoted(s),
        Scalar::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
        Scalar::Int(i) => i.to_string(),
        Scalar::Bool(b) => b.to_string(),
        _ => json_text(value),
    }
}
