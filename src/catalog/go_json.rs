//! Go's `encoding/json` rules for reading a struct, as Crush's decode
//! applies them: which field an object key names, a field named twice,
//! an object only (never an array of the fields), and the depth Go's
//! decoder reads.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::{Text, quoted};

/// Whether Go's `encoding/json` fills the field tagged `name` (lowercase
/// ASCII, as every catwalk tag is) from the object key `key`: ASCII letters
/// match in either case, and the only other characters that fold to ASCII
/// ones are `K` (U+212A, Kelvin) to `k` and `ſ` (U+017F, long s) to `s`
/// (Go's `foldName`; Go 1.19's `equalFoldRight` says the same).
pub(crate) fn go_key_matches(key: &str, name: &str) -> bool {
    let mut chars = key.chars();
    name.bytes().all(|b| match chars.next() {
        Some('\u{212A}') => b == b'k',
        Some('\u{17F}') => b == b's',
        Some(c) if c.is_ascii() => c.to_ascii_lowercase() as u8 == b,
        _ => false,
    }) && chars.next().is_none()
}

/// The members of one JSON object, read into a Go struct's fields: each key
/// names the field it matches under Go's rules ([`go_key_matches`]), and a
/// field named twice is refused.
struct Members<'de> {
    fields: &'static [&'static str],
    /// Whether each field was named so far.
    seen: Vec<bool>,
    /// The keys that named a field in another spelling than its own, for
    /// the message about a field named twice; almost always none, and then
    /// nothing is allocated for each object.
    spellings: Vec<(usize, Text<'de>)>,
}

impl<'de> Members<'de> {
    fn new(fields: &'static [&'static str]) -> Members<'de> {
        Members {
            fields,
            seen: vec![false; fields.len()],
            spellings: Vec::new(),
        }
    }

    /// The next key's field (its index in `fields`; `None` for a key Go
    /// ignores), or `Ok(None)` at the end of the object.
    fn next<A: MapAccess<'de>>(&mut self, map: &mut A) -> Result<Option<Option<usize>>, A::Error> {
        let Some(key) = map.next_key::<Text<'de>>()? else {
            return Ok(None);
        };
        let key_str = key.as_str();
        let exact = self.fields.iter().position(|name| *name == key_str);
        let Some(index) = exact.or_else(|| {
            self.fields
                .iter()
                .position(|name| go_key_matches(key_str, name))
        }) else {
            return Ok(Some(None));
        };
        if self.seen[index] {
            let first = self
                .spellings
                .iter()
                .find(|(i, _)| *i == index)
                .map_or(self.fields[index], |(_, spelling)| spelling.as_str());
            return Err(de::Error::custom(format!(
                "two keys name the field {}: {} and {} (Crush would read only the last)",
                self.fields[index],
                quoted(first),
                quoted(key_str)
            )));
        }
        self.seen[index] = true;
        if exact.is_none() {
            self.spellings.push((index, key));
        }
        Ok(Some(Some(index)))
    }
}

/// Reads a Go struct from a JSON object (and only an object: serde's derive
/// would also take an array of the fields, which Go refuses).
pub(super) trait GoStruct<'de>: Sized {
    /// The struct's JSON field tags, lowercase.
    const FIELDS: &'static [&'static str];
    /// How deep its object stands in a catalog (the top-level array being
    /// 1 deep), for the depth of what it skips.
    const DEPTH: usize;
    /// What it is, for messages.
    const WHAT: &'static str;
    /// Reads the value of field `index` from `map` into `self`.
    fn read<A: MapAccess<'de>>(&mut self, index: usize, map: &mut A) -> Result<(), A::Error>;
}

struct GoVisitor<T>(PhantomData<T>);

impl<'de, T: GoStruct<'de> + Default> Visitor<'de> for GoVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an object ({})", T::WHAT)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let mut members = Members::new(T::FIELDS);
        let mut value = T::default();
        while let Some(field) = members.next(&mut map)? {
            match field {
                Some(index) => value.read(index, &mut map)?,
                // A field Crush does not read either: skipped, however it
                // nests (serde_json skips without a limit), but not past
                // the depth Go's decoder reads. Every other value has a
                // depth bounded by the catwalk structs, or by serde_json's
                // own limit of 128 (`provider_options`).
                None => map.next_value_seed(Skipped(T::DEPTH))?,
            }
        }
        Ok(value)
    }
}

/// A value skipped by a struct whose object stands this deep: refused
/// when it nests past [`GO_MAX_DEPTH`] (inside the value, so that the
/// message names its field).
struct Skipped(usize);

impl<'de> de::DeserializeSeed<'de> for Skipped {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        let skipped = <&'de RawValue>::deserialize(d)?;
        match too_deep(skipped.get().as_bytes(), self.0) {
            Some(_) => Err(de::Error::custom(TOO_DEEP)),
            None => Ok(()),
        }
    }
}

pub(super) fn go_struct<'de, T: GoStruct<'de> + Default, D: Deserializer<'de>>(
    d: D,
) -> Result<T, D::Error> {
    d.deserialize_map(GoVisitor(PhantomData))
}

/// A list Go decodes into a slice: an array, or `null` for none.
pub(super) fn list<'de, T: Deserialize<'de>, A: MapAccess<'de>>(
    map: &mut A,
) -> Result<Vec<T>, A::Error> {
    Ok(map.next_value::<Option<Vec<T>>>()?.unwrap_or_default())
}

/// The deepest nesting of arrays and objects Go's `encoding/json` reads, the
/// top-level array being 1 deep (its scanner's `maxNestingDepth`).
pub const GO_MAX_DEPTH: usize = 10_000;

/// What validation says of nesting past [`GO_MAX_DEPTH`].
pub(super) const TOO_DEEP: &str = "nested more than 10000 arrays or objects deep, which Go's encoding/json, Crush's reader, refuses (exceeded max depth)";

/// Where the first array or object more than [`GO_MAX_DEPTH`] deep opens
/// in `bytes`, a JSON value that stands `base` deep in its document (else
/// what it finds is a guess, and the parse refuses the value anyway).
/// Iterative, one pass: no depth can exhaust it.
fn too_deep(bytes: &[u8], base: usize) -> Option<usize> {
    let mut depth = base;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() {
                    match bytes[i] {
                        b'"' => break,
                        b'\\' => i += 2,
                        _ => i += 1,
                    }
                }
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > GO_MAX_DEPTH {
                    return Some(i);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}
