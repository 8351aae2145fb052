//! A change as a person reads it: a field's old and new values whole, a
//! map's change by the key that changed (for the report of
//! `update-providers`).

use std::collections::{BTreeMap, BTreeSet};

use super::terminal::Atom;
use crate::catalog::changes::{FieldChange, Scalar};
use crate::catalog::escape::{json_text, quoted};

/// The changes one field makes, as a person reads them: one for a value,
/// one per key that changed for a map (`default_headers["X-Title"] "Crush"
/// → "Evil"`).
pub(super) fn parts(field: &FieldChange<'_>) -> Vec<Atom> {
    let keyed = matches!(
        (&field.before, &field.after),
        (Scalar::Headers(_), Scalar::Headers(_))
            | (Scalar::Object(_), Scalar::Object(_) | Scalar::None)
            | (Scalar::None, Scalar::Object(_))
    );
    if !keyed {
        let (before, after) = (value_text(&field.before), value_text(&field.after));
        return vec![Atom::change(field.field.to_owned(), before, after)];
    }
    // Each key's value as a person reads it.
    let entries = |value: &Scalar<'_>| -> BTreeMap<String, String> {
        match *value {
            Scalar::Headers(map) => (map.iter())
                .map(|(k, v)| (k.as_str().to_owned(), quoted(v.as_str())))
                .collect(),
            Scalar::Object(map) => map.iter().map(|(k, v)| (k.clone(), json_text(v))).collect(),
            _ => BTreeMap::new(),
        }
    };
    let (before, after) = (entries(&field.before), entries(&field.after));
    let keys: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    let shown = |value: Option<&String>| value.cloned().unwrap_or_else(|| "(none)".into());
    keys.into_iter()
        .filter(|key| before.get(*key) != after.get(*key))
        .map(|key| {
            let name = format!("{}[{}]", field.field, quoted(key));
            Atom::change(name, shown(before.get(key)), shown(after.get(key)))
        })
        .collect()
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
