//! Go's `encoding/json` rules for reading a struct, as Crush's decode
//! applies them: which field an object key names, a field named twice,
//! an object only (never an array of the fields), `null` as the zero
//! value, and the depth Go's decoder reads. [`go_struct!`] declares a
//! catwalk struct once and reads it by these rules.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::quoted;

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

/// A Go struct read from a JSON object, and only an object: serde's derive
/// would also take an array of the fields, which Go refuses.
pub(super) trait GoStruct<'de>: Default {
    /// The struct's JSON field tags, lowercase (at most 32).
    const FIELDS: &'static [&'static str];
    /// The tags that must be present (Go would take none as empty, which
    /// no catalog means).
    const REQUIRED: &'static [&'static str];
    /// How deep its object stands in a catalog (the top-level array being
    /// 1 deep), for the depth of what it skips.
    const DEPTH: usize;
    /// What it is, for messages.
    const WHAT: &'static str;
    /// The index in `FIELDS` of the tag `key`, when it is one.
    fn field(key: &str) -> Option<usize>;
    /// Reads the value of the field `FIELDS[index]` from `map` into `self`.
    fn read<A: MapAccess<'de>>(&mut self, index: usize, map: &mut A) -> Result<(), A::Error>;
}

/// Declares a catwalk struct once: its fields (each one's JSON tag is its
/// name, or the literal after `=`), and [`GoStruct`] to read it.
macro_rules! go_struct {
    ($(#[$doc:meta])* $name:ident: $what:literal, depth $depth:literal, required $required:expr;
     $($(#[$field_doc:meta])* $field:ident $(= $tag:literal)?: $ty:ty,)*) => {
        $(#[$doc])*
        #[derive(Debug, Default, Clone, PartialEq)]
        pub struct $name {
            $($(#[$field_doc])* pub $field: $ty,)*
        }

        impl<'de> $crate::catalog::go_json::GoStruct<'de> for $name {
            const FIELDS: &'static [&'static str] = &[$(go_struct!(@tag $field $($tag)?)),*];
            const REQUIRED: &'static [&'static str] = $required;
            const DEPTH: usize = $depth;
            const WHAT: &'static str = $what;
            // Each tag compared as a constant, each index as one: a key is
            // read without a search.
            fn field(key: &str) -> Option<usize> {
                let mut at = 0..;
                $(let index = at.next();
                if key == go_struct!(@tag $field $($tag)?) {
                    return index;
                })*
                None
            }
            fn read<A: serde::de::MapAccess<'de>>(
                &mut self,
                index: usize,
                map: &mut A,
            ) -> Result<(), A::Error> {
                let mut at = 0..;
                $(if at.next() == Some(index) {
                    // `null` is Go's zero value.
                    self.$field = map.next_value::<Option<$ty>>()?.unwrap_or_default();
                    return Ok(());
                })*
                map.next_value::<serde::de::IgnoredAny>().map(drop)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let visitor = $crate::catalog::go_json::GoVisitor(std::marker::PhantomData);
                d.deserialize_map(visitor)
            }
        }
    };
    (@tag $field:ident) => { stringify!($field) };
    (@tag $field:ident $tag:literal) => { $tag };
}
pub(super) use go_struct;

/// Reads an object's key as the index of the field Go fills from it
/// (`None`: a key Go ignores), and the key as written when it is not the
/// tag itself, for the message about a field named twice.
struct Key<T>(PhantomData<T>);

impl<'de, T: GoStruct<'de>> DeserializeSeed<'de> for Key<T> {
    type Value = (Option<usize>, Option<String>);
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de, T: GoStruct<'de>> Visitor<'de> for Key<T> {
    type Value = (Option<usize>, Option<String>);
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, key: &str) -> Result<Self::Value, E> {
        if let Some(index) = T::field(key) {
            return Ok((Some(index), None));
        }
        let index = T::FIELDS.iter().position(|name| go_key_matches(key, name));
        Ok((index, index.map(|_| key.to_owned())))
    }
}

pub(super) struct GoVisitor<T>(pub(super) PhantomData<T>);

impl<'de, T: GoStruct<'de>> Visitor<'de> for GoVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an object ({})", T::WHAT)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let mut value = T::default();
        let mut seen = 0u32;
        // Almost always none: nothing is allocated for each object.
        let mut spellings: Vec<(usize, String)> = Vec::new();
        while let Some((index, spelling)) = map.next_key_seed(Key::<T>(PhantomData))? {
            let Some(index) = index else {
                // A field Crush does not read either: skipped, however it
                // nests (serde_json skips without a limit), but not past
                // the depth Go's decoder reads. Every other value has a
                // depth bounded by the catwalk structs, or by serde_json's
                // own limit of 128 (`provider_options`).
                map.next_value_seed(Skipped(T::DEPTH))?;
                continue;
            };
            let field = T::FIELDS[index];
            if seen & 1 << index != 0 {
                let first = spellings.iter().find(|(i, _)| *i == index);
                return Err(de::Error::custom(format!(
                    "two keys name the field {field}: {} and {} (Crush would read only the last)",
                    quoted(first.map_or(field, |(_, s)| s)),
                    quoted(spelling.as_deref().unwrap_or(field))
                )));
            }
            seen |= 1 << index;
            spellings.extend(spelling.map(|s| (index, s)));
            value.read(index, &mut map)?;
        }
        let missing = (T::FIELDS.iter().enumerate())
            .find(|(i, field)| seen & 1 << i == 0 && T::REQUIRED.contains(field));
        match missing {
            Some((_, field)) => Err(de::Error::missing_field(field)),
            None => Ok(value),
        }
    }
}

/// A value skipped by a struct whose object stands this deep: refused
/// when it nests past [`GO_MAX_DEPTH`] (inside the value, so that the
/// message names its field).
struct Skipped(usize);

impl<'de> DeserializeSeed<'de> for Skipped {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        let skipped = <&'de RawValue>::deserialize(d)?;
        match too_deep(skipped.get().as_bytes(), self.0) {
            true => Err(de::Error::custom(TOO_DEEP)),
            false => Ok(()),
        }
    }
}

/// The deepest nesting of arrays and objects Go's `encoding/json` reads, the
/// top-level array being 1 deep (its scanner's `maxNestingDepth`).
pub const GO_MAX_DEPTH: usize = 10_000;

/// What validation says of nesting past [`GO_MAX_DEPTH`].
pub(super) const TOO_DEEP: &str = "nested more than 10000 arrays or objects deep, which Go's encoding/json, Crush's reader, refuses (exceeded max depth)";

/// Whether an array or object in `bytes`, a JSON value that stands `base`
/// deep in its document, opens more than [`GO_MAX_DEPTH`] deep.
/// Iterative, one pass: no depth can exhaust it.
fn too_deep(bytes: &[u8], base: usize) -> bool {
    let mut depth = base;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'[' | b'{' if depth == GO_MAX_DEPTH => return true,
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    false
}
