//! Crush's JSON configuration read as Crush reads it: every file merged
//! first, then the result decoded (`internal/config/load.go`:
//! `loadFromBytes`, which calls `jsons.Merge` of github.com/qjebbs/go-jsons,
//! then `json.Unmarshal` into its `Config`). A crushrc takes part as the
//! JSON object its commands build (`shellconfig.LoadShellConfig`).
//!
//! The merge (go-jsons v1.0.0-alpha.5, `internal/merge/ordered.go` and
//! `internal/ordered/json.go`; Crush pins alpha.6, which is not readable
//! here): object keys are compared exactly, in the order they first
//! appear (a key given twice in one file keeps its last value, at its last
//! place); a `null` never replaces anything; objects merge key by key;
//! any other value replaces the one before. A value of another type than
//! the one it replaces is an error in alpha.5; here the later one wins and
//! a warning names both files.
//!
//! The decoding (Go's `encoding/json`): a key names a field in any letter
//! case ([`crate::catalog::go_key_matches`]), in the document's order, so
//! the last spelling wins; `null` leaves a bool or a string as it was and
//! sets the `options` pointer to nil (every option back to its default);
//! a value of the wrong type is an error, on which Crush refuses to start.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::catalog::go_key_matches;

/// Where a value came from: the file (an index into the files read) and,
/// for a crushrc, the line of the command that set it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Src {
    /// Which file.
    pub file: usize,
    /// The line, for a crushrc.
    pub line: Option<usize>,
    /// Set by a crushrc command only a shell can evaluate, counted as
    /// setting it ([`super::Origin::Unevaluated`]).
    pub unevaluated: bool,
}

impl Src {
    /// File `file`'s; a crushrc's with the `line` of the command.
    pub const fn new(file: usize, line: Option<usize>, unevaluated: bool) -> Src {
        Src {
            file,
            line,
            unevaluated,
        }
    }
}

/// A JSON value with where each of its values came from. Only what the
/// decoding needs is kept: booleans, strings and lists whole, numbers by
/// kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// `null`.
    Null,
    /// A boolean.
    Bool(bool, Src),
    /// A number.
    Number(Src),
    /// A string.
    Str(String, Src),
    /// An array.
    Array(Vec<Node>, Src),
    /// An object, its keys in order.
    Object(Vec<(String, Node)>),
}

impl Node {
    /// What kind of value it is, as a person names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Node::Null => "null",
            Node::Bool(..) => "a boolean",
            Node::Number(_) => "a number",
            Node::Str(..) => "a string",
            Node::Array(..) => "a list",
            Node::Object(_) => "an object",
        }
    }

    /// Where it came from, for a value that is not an object.
    pub fn src(&self) -> Option<Src> {
        match self {
            Node::Bool(_, s) | Node::Number(s) | Node::Str(_, s) | Node::Array(_, s) => Some(*s),
            Node::Null | Node::Object(_) => None,
        }
    }

    /// A string's text.
    pub(crate) fn text(&self) -> Option<String> {
        match self {
            Node::Str(s, _) => Some(s.clone()),
            _ => None,
        }
    }

    /// The value of `key`, written exactly so, of an object.
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

/// A JSON value as read, with where it came from, keys in document order.
struct Raw(Node);

impl<'de> Deserialize<'de> for Raw {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Raw, D::Error> {
        struct RawVisitor;
        // The file is filled in by `parse`.
        const SRC: Src = Src::new(0, None, false);
        impl<'de> Visitor<'de> for RawVisitor {
            type Value = Raw;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Raw, E> {
                Ok(Raw(Node::Null))
            }
            fn visit_bool<E: de::Error>(self, b: bool) -> Result<Raw, E> {
                Ok(Raw(Node::Bool(b, SRC)))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Raw, E> {
                Ok(Raw(Node::Number(SRC)))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Raw, E> {
                Ok(Raw(Node::Number(SRC)))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Raw, E> {
                Ok(Raw(Node::Number(SRC)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Raw, E> {
                Ok(Raw(Node::Str(s.to_owned(), SRC)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Raw, A::Error> {
                let mut items = Vec::new();
                while let Some(Raw(item)) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Raw(Node::Array(items, SRC)))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Raw, A::Error> {
                let mut entries: Vec<(String, Node)> = Vec::new();
                while let Some((key, Raw(value))) = map.next_entry::<String, Raw>()? {
                    // A key given twice keeps its last value, at its last
                    // place (go-jsons' `ordered.Map.UnmarshalJSON`).
                    entries.retain(|(k, _)| *k != key);
                    entries.push((key, value));
                }
                Ok(Raw(Node::Object(entries)))
            }
        }
        d.deserialize_any(RawVisitor)
    }
}

/// Sets the file of every value of `node`.
fn from_file(node: &mut Node, file: usize) {
    match node {
        Node::Null => {}
        Node::Bool(_, s) | Node::Number(s) | Node::Str(_, s) => s.file = file,
        Node::Array(items, s) => {
            s.file = file;
            items.iter_mut().for_each(|item| from_file(item, file));
        }
        Node::Object(entries) => entries.iter_mut().for_each(|(_, v)| from_file(v, file)),
    }
}

/// A JSON file's text as a `Node`: `Err` with the line when it is not
/// JSON, or when it is not an object (`None` for the line).
pub fn parse(text: &str, file: usize) -> Result<Node, (Option<usize>, String)> {
    let Raw(mut node) =
        serde_json::from_str(text).map_err(|e| (Some(e.line()), not_json(text, &e)))?;
    if !matches!(node, Node::Object(_)) {
        return Err((None, format!("expected a JSON object, not {}", node.kind())));
    }
    from_file(&mut node, file);
    Ok(node)
}

/// What a JSON file that does not parse is told, in plain words; its line
/// is named apart, once.
fn not_json(text: &str, e: &serde_json::Error) -> String {
    if text.starts_with('\u{feff}') {
        return format!("not valid JSON: {}", crate::catalog::BYTE_ORDER_MARK);
    }
    let what = crate::catalog::json_problem(e);
    match e.classify() {
        serde_json::error::Category::Eof => format!("not valid JSON: {what}"),
        _ => format!("not valid JSON at column {}: {what}", e.column()),
    }
}

/// A value of one type replaced by one of another in a later file.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeChange {
    /// The key, e.g. `options.disable_provider_auto_update`.
    pub key: String,
    /// The value before, its kind and where it came from.
    pub before: (&'static str, Option<Src>),
    /// The kind of the value after, which comes from the file merged.
    pub after: &'static str,
}

/// Merges `source` into `target`, go-jsons' way; each change of type is
/// recorded in `changes`.
pub fn merge(target: &mut Node, source: Node, changes: &mut Vec<TypeChange>) {
    merge_at(target, source, &mut Vec::new(), changes);
}

fn merge_at(target: &mut Node, source: Node, key: &mut Vec<String>, changes: &mut Vec<TypeChange>) {
    match (&mut *target, source) {
        (_, Node::Null) => {}
        (Node::Null, source) => *target = source,
        (Node::Object(entries), Node::Object(incoming)) => {
            for (k, v) in incoming {
                match entries.iter_mut().find(|(e, _)| *e == k) {
                    Some((_, existing)) => {
                        key.push(k);
                        merge_at(existing, v, key, changes);
                        key.pop();
                    }
                    None => entries.push((k, v)),
                }
            }
        }
        (t, source) => {
            if std::mem::discriminant(t) != std::mem::discriminant(&source) {
                changes.push(TypeChange {
                    key: key.join("."),
                    before: (t.kind(), t.src()),
                    after: source.kind(),
                });
            }
            *target = source;
        }
    }
}

/// A value as decoded, with the key it was spelt by and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found<T> {
    /// The value.
    pub value: T,
    /// The key path as written, e.g. `Options.Disable_Provider_Auto_Update`.
    pub key: String,
    /// Where it came from.
    pub src: Src,
}

/// The settings this tool reads, decoded from the merged configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// `options.disable_provider_auto_update`.
    pub disable_provider_auto_update: Option<Found<bool>>,
    /// `options.disable_default_providers`.
    pub disable_default_providers: Option<Found<bool>>,
    /// `options.data_directory`.
    pub data_directory: Option<Found<String>>,
    /// `providers.hyper.api_key`, the Hyper key Crush sends (a value of
    /// another type is none here).
    pub hyper_api_key: Option<Found<String>>,
}

/// A value of the wrong type for its field: Crush refuses to start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{} must be {expected}, not {found}; Crush refuses to start on it",
    super::shown(key)
)]
pub struct DecodeError {
    /// The key as written.
    pub key: String,
    /// What it should be.
    pub expected: &'static str,
    /// What it is.
    pub found: &'static str,
    /// Where it came from.
    pub src: Option<Src>,
}

/// The entries of an object; none of another value.
fn entries(node: &Node) -> &[(String, Node)] {
    match node {
        Node::Object(entries) => entries,
        _ => &[],
    }
}

/// Decodes the settings this tool reads from the merged `root`, as Go's
/// `encoding/json` fills Crush's `Config`: the first wrong type is the
/// error.
pub fn decode(root: &Node) -> Result<Options, DecodeError> {
    let mut options = Options::default();
    let mut error = None;
    let mut wrong = |key, expected, value: &Node| {
        let (found, src) = (value.kind(), value.src());
        error.get_or_insert(DecodeError {
            key,
            expected,
            found,
            src,
        });
    };
    fn found<T>(value: T, key: String, &src: &Src) -> Option<Found<T>> {
        Some(Found { value, key, src })
    }
    for (key, value) in entries(root) {
        if go_key_matches(key, "providers") {
            // A map, whose entry `hyper` (exactly so) is decoded afresh.
            if let Some(hyper) = value.get("hyper") {
                options.hyper_api_key = None;
                for (field, value) in entries(hyper) {
                    if let (true, Node::Str(s, src)) = (go_key_matches(field, "api_key"), value) {
                        options.hyper_api_key =
                            found(s.clone(), format!("{key}.hyper.{field}"), src);
                    }
                }
            }
            continue;
        }
        match value {
            _ if !go_key_matches(key, "options") => {}
            // A nil pointer: whatever an earlier spelling set is gone.
            Node::Null => {
                let hyper_api_key = options.hyper_api_key.take();
                options = Options {
                    hyper_api_key,
                    ..Options::default()
                };
            }
            Node::Object(fields) => {
                for (field, value) in fields {
                    let path = format!("{key}.{field}");
                    let flag = if go_key_matches(field, "disable_provider_auto_update") {
                        Some(&mut options.disable_provider_auto_update)
                    } else if go_key_matches(field, "disable_default_providers") {
                        Some(&mut options.disable_default_providers)
                    } else {
                        None
                    };
                    let directory = go_key_matches(field, "data_directory");
                    match (flag, value) {
                        (_, Node::Null) => {}
                        (Some(flag), Node::Bool(b, src)) => *flag = found(*b, path, src),
                        (Some(_), _) => wrong(path, "true or false", value),
                        (None, Node::Str(s, src)) if directory => {
                            options.data_directory = found(s.clone(), path, src)
                        }
                        (None, _) if directory => wrong(path, "a string", value),
                        (None, _) => {}
                    }
                }
            }
            other => wrong(key.clone(), "an object", other),
        }
    }
    error.map_or(Ok(options), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merged(files: &[&str]) -> (Node, Vec<TypeChange>) {
        let mut root = Node::Object(Vec::new());
        let mut changes = Vec::new();
        for (i, text) in files.iter().enumerate() {
            merge(&mut root, parse(text, i).unwrap(), &mut changes);
        }
        (root, changes)
    }

    fn auto(files: &[&str]) -> Option<(bool, usize, String)> {
        let (root, _) = merged(files);
        decode(&root)
            .unwrap()
            .disable_provider_auto_update
            .map(|f| (f.value, f.src.file, f.key))
    }

    #[test]
    fn keys_match_in_any_case_and_the_last_spelling_wins() {
        assert_eq!(
            auto(&[r#"{"Options": {"Disable_Provider_Auto_Update": true}}"#]),
            Some((true, 0, "Options.Disable_Provider_Auto_Update".into()))
        );
        assert_eq!(
            auto(&[
                r#"{"options": {"DISABLE_PROVIDER_AUTO_UPDATE": true, "disable_provider_auto_update": false}}"#
            ]),
            Some((false, 0, "options.disable_provider_auto_update".into()))
        );
        // Spellings merge apart, then decode in order of first appearance:
        // the later file's `Options` comes after the earlier `options`.
        assert_eq!(
            auto(&[
                r#"{"options": {"disable_provider_auto_update": false}}"#,
                r#"{"Options": {"disable_provider_auto_update": true}}"#,
            ]),
            Some((true, 1, "Options.disable_provider_auto_update".into()))
        );
        // ... and a third file's `options` merges into the first, which
        // decodes before the second's `Options`: the second wins.
        assert_eq!(
            auto(&[
                r#"{"options": {}}"#,
                r#"{"Options": {"disable_provider_auto_update": true}}"#,
                r#"{"options": {"disable_provider_auto_update": false}}"#,
            ]),
            Some((true, 1, "Options.disable_provider_auto_update".into()))
        );
    }

    #[test]
    fn null_never_replaces_and_resets_only_when_decoded() {
        assert_eq!(auto(&[r#"{"options": null}"#]), None);
        assert_eq!(
            auto(&[
                r#"{"options": {"disable_provider_auto_update": true}}"#,
                r#"{"options": null}"#,
                r#"{"options": {"disable_provider_auto_update": null}}"#,
            ]),
            Some((true, 0, "options.disable_provider_auto_update".into()))
        );
        // Another spelling's null is decoded after: the pointer is nil.
        assert_eq!(
            auto(&[r#"{"options": {"disable_provider_auto_update": true}, "OPTIONS": null}"#]),
            None
        );
    }

    #[test]
    fn a_later_value_of_another_type_wins_and_is_told() {
        let (root, changes) = merged(&[
            r#"{"options": {"disable_provider_auto_update": "yes"}}"#,
            r#"{"options": {"disable_provider_auto_update": true}}"#,
        ]);
        assert!(
            decode(&root)
                .unwrap()
                .disable_provider_auto_update
                .unwrap()
                .value
        );
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].key, "options.disable_provider_auto_update");
        assert_eq!(changes[0].before.0, "a string");
        assert_eq!(changes[0].after, "a boolean");
    }

    #[test]
    fn a_wrong_type_left_after_merging_is_an_error() {
        let (root, _) = merged(&[r#"{"options": {"disable_default_providers": 1}}"#]);
        let e = decode(&root).unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.expected, e.found),
            (
                "options.disable_default_providers",
                "true or false",
                "a number"
            )
        );
        let (root, _) = merged(&[r#"{"options": []}"#]);
        assert_eq!(decode(&root).unwrap_err().found, "a list");
        let (root, _) = merged(&[r#"{"options": {"data_directory": false}}"#]);
        assert_eq!(decode(&root).unwrap_err().expected, "a string");
    }

    #[test]
    fn duplicate_keys_keep_the_last_value() {
        assert_eq!(
            auto(&[
                r#"{"options": {"disable_provider_auto_update": true}, "x": 1, "options": {}}"#
            ]),
            None
        );
        assert!(parse("[]", 0).is_err());
        assert_eq!(parse("{\n\"a\": tru }", 0).unwrap_err().0, Some(2));
    }
}
