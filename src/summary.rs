//! A catalog's summary: the ids, names and endpoints that comparing two
//! catalogs and listing one need, without the rest. Writers of the cache also
//! store the summary of what they wrote in an index file beside it, bound to
//! the cached bytes by their SHA-256, so that listing the cache or comparing
//! the next catalog with it does not parse the whole catalog again.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

use crate::cache::{self, CacheFiles};
use crate::catalog::{Catalog, Text};

/// Catalog files up to this size are read whole; larger ones in chunks.
const WHOLE_FILE_MAX_BYTES: u64 = 8 * 1024 * 1024;

/// What comparing and listing need of a catalog, owned, so that the
/// catalog's bytes can be dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Summary {
    /// The providers, in catalog order.
    pub providers: Vec<ProviderSummary>,
}

/// Only the fields comparing and listing read; everything else is skipped
/// unparsed, which makes reading a summary several times cheaper than
/// validating.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ProviderSummary {
    /// `id`.
    pub id: String,
    /// `name`.
    #[serde(default)]
    pub name: Option<String>,
    /// `type`.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// The models, only their ids.
    #[serde(default)]
    pub models: Option<Vec<ModelSummary>>,
    /// `api_endpoint`.
    #[serde(default)]
    pub api_endpoint: Option<String>,
    /// `api_key`.
    #[serde(default)]
    pub api_key: Option<String>,
    /// `default_headers`.
    #[serde(default)]
    pub default_headers: Option<BTreeMap<String, String>>,
}

impl ProviderSummary {
    /// The models, empty when the provider lists none.
    pub fn models(&self) -> &[ModelSummary] {
        self.models.as_deref().unwrap_or_default()
    }
}

/// A model, only its id.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ModelSummary {
    /// `id`.
    pub id: String,
}

/// The index file is two JSON values on two lines: first its head, the
/// SHA-256 of the catalog it describes and one row per provider for
/// listing; then the catalog's summary. Listing reads the head alone, a few
/// hundred bytes per provider, instead of every model id.
#[derive(Deserialize)]
struct Head<R> {
    sha256: String,
    listing: R,
}

/// A row of the head as read: a listing row whose models are a number.
#[derive(Deserialize)]
struct HeadRow {
    id: String,
    name: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    models: usize,
}

/// One row of `crush providers`: its models are counted, not kept.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Listed {
    /// `id`.
    pub id: String,
    /// `name`.
    #[serde(default)]
    pub name: Option<String>,
    /// `type`.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// How many models it has.
    #[serde(default, deserialize_with = "count")]
    pub models: usize,
}

impl From<&ProviderSummary> for Listed {
    fn from(p: &ProviderSummary) -> Listed {
        Listed {
            id: p.id.clone(),
            name: p.name.clone(),
            kind: p.kind.clone(),
            models: p.models().len(),
        }
    }
}

impl Listed {
    /// The rows of the index file at `path`, read from its head line alone,
    /// when it describes the catalog whose SHA-256 is `sha256` (hex); `None`
    /// otherwise.
    pub fn from_index(path: &Path, sha256: &str) -> Option<Vec<Listed>> {
        let mut line = Vec::new();
        BufReader::new(File::open(path).ok()?)
            .read_until(b'\n', &mut line)
            .ok()?;
        let head: Head<Vec<HeadRow>> = serde_json::from_slice(&line).ok()?;
        let rows = head.listing.into_iter().map(|row| Listed {
            id: row.id,
            name: row.name,
            kind: row.kind,
            models: row.models,
        });
        (head.sha256 == sha256).then(|| rows.collect())
    }

    /// The rows of a catalog held in memory.
    pub fn parse(bytes: &[u8]) -> Option<Vec<Listed>> {
        serde_json::from_slice(bytes).ok()
    }
}

/// The length of an array, or 0 for `null`, without keeping its elements.
fn count<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<usize, D::Error> {
    struct Count;
    impl<'de> serde::de::Visitor<'de> for Count {
        type Value = usize;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an array or null")
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<usize, E> {
            Ok(0)
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
            let mut n = 0;
            while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                n += 1;
            }
            Ok(n)
        }
    }
    deserializer.deserialize_any(Count)
}

/// The head of the index file, serialised straight from a validated
/// catalog; see [`Head`].
#[derive(Serialize)]
struct HeadOut<'c> {
    sha256: &'c str,
    listing: Vec<RowOut<'c>>,
}

#[derive(Serialize)]
struct RowOut<'c> {
    id: &'c str,
    name: &'c str,
    #[serde(rename = "type")]
    kind: Option<&'c str>,
    models: usize,
}

/// A provider of the summary in the index file.
#[derive(Serialize)]
struct ProviderOut<'c, 'a> {
    id: &'c str,
    name: &'c str,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'c str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    api_endpoint: Option<&'c str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    api_key: Option<&'c str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    default_headers: Option<&'c BTreeMap<Text<'a>, Text<'a>>>,
    models: Vec<ModelOut<'c>>,
}

#[derive(Serialize)]
struct ModelOut<'c> {
    id: &'c str,
}

/// The index of `catalog`, whose bytes have the SHA-256 `sha256` (hex): its
/// head and its summary, one line each.
pub fn index_json(catalog: &Catalog<'_>, sha256: &str) -> Vec<u8> {
    let providers: Vec<ProviderOut> = catalog
        .providers
        .iter()
        .map(|p| ProviderOut {
            id: p.id.as_str(),
            name: p.name.as_str(),
            kind: p.kind.as_ref().map(Text::as_str),
            api_endpoint: p.api_endpoint.as_ref().map(Text::as_str),
            api_key: p.api_key.as_ref().map(Text::as_str),
            default_headers: p.default_headers.as_ref(),
            models: p
                .models()
                .iter()
                .map(|m| ModelOut { id: m.id.as_str() })
                .collect(),
        })
        .collect();
    let head = HeadOut {
        sha256,
        listing: providers
            .iter()
            .map(|p| RowOut {
                id: p.id,
                name: p.name,
                kind: p.kind,
                models: p.models.len(),
            })
            .collect(),
    };
    let mut out = serde_json::to_vec(&head).unwrap_or_default();
    out.push(b'\n');
    // Serialising borrowed strings into memory cannot fail.
    let _ = serde_json::to_writer(&mut out, &providers);
    out.push(b'\n');
    out
}

impl Summary {
    /// The summary in the index file at `path`, when it describes the
    /// catalog whose SHA-256 is `sha256` (hex); `None` otherwise, and then
    /// the caller reads the catalog itself.
    pub fn from_index(path: &Path, sha256: &str) -> Option<Summary> {
        let bytes = std::fs::read(path).ok()?;
        let mut values = serde_json::Deserializer::from_slice(&bytes);
        let head = Head::<IgnoredAny>::deserialize(&mut values).ok()?;
        if head.sha256 != sha256 {
            return None;
        }
        let summary = Summary::deserialize(&mut values).ok()?;
        values.end().ok()?;
        Some(summary)
    }

    /// The summary of the cached catalog: from its index when the state file
    /// vouches for both (the cache still has the identity recorded there,
    /// and the index the SHA-256), else read from the catalog itself.
    pub fn of_cache(files: &CacheFiles) -> Option<Summary> {
        Summary::indexed(files).or_else(|| Summary::read(&files.catalog))
    }

    fn indexed(files: &CacheFiles) -> Option<Summary> {
        let state = cache::read_state(&files.state)?;
        let current = cache::identity(&std::fs::metadata(&files.catalog).ok()?);
        state
            .vouches_for(&current)
            .then(|| Summary::from_index(&files.index, &state.sha256))
            .flatten()
    }

    /// The summary of a catalog held in memory.
    pub fn parse(bytes: &[u8]) -> Option<Summary> {
        serde_json::from_slice(bytes).ok()
    }

    /// Reads the summary of a catalog file; `None` when there is no file or
    /// it does not hold a catalog, as then there is nothing to compare with.
    ///
    /// Memory stays bounded whatever the file's size: it is read in chunks
    /// and each provider is parsed on its own as soon as it is complete, so
    /// the previous catalog can be summarised while the new one is checked.
    pub fn read(path: &Path) -> Option<Summary> {
        let mut file = std::fs::File::open(path).ok()?;
        let len = file.metadata().ok()?.len();
        // Small files are cheaper to parse whole than to stream.
        if len <= WHOLE_FILE_MAX_BYTES {
            return Summary::parse(&crate::buffer::read_file(&mut file, len).ok()?);
        }
        Summary::read_from(file, 1 << 20)
    }

    /// Reads a summary from `reader` in chunks of `chunk` bytes (at least
    /// one), parsing each provider as soon as it is complete.
    pub fn read_from(mut reader: impl Read, chunk: usize) -> Option<Summary> {
        let chunk = chunk.max(1);
        let mut splitter = Splitter::default();
        let mut buf: Vec<u8> = Vec::new();
        let mut providers = Vec::new();
        loop {
            let filled = buf.len();
            buf.resize(filled + chunk, 0);
            let n = loop {
                match reader.read(&mut buf[filled..]) {
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    other => break other.ok()?,
                }
            };
            buf.truncate(filled + n);
            let consumed = splitter.feed(&buf, |element| {
                providers.push(serde_json::from_slice(element).ok()?);
                Some(())
            })?;
            buf.drain(..consumed);
            splitter.shift(consumed);
            if n == 0 {
                return splitter.done.then_some(Summary { providers });
            }
        }
    }
}

/// Finds the top-level elements of a JSON array in a stream of bytes,
/// tracking strings and nesting. It only splits; each element is then parsed
/// (and so checked) by serde_json, and anything unexpected between elements
/// ends the summary.
#[derive(Debug, Default)]
struct Splitter {
    /// Position up to which `buf` has been scanned.
    scanned: usize,
    /// Start of the element being read, when inside one.
    start: Option<usize>,
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// What may come next between elements.
    expect: Between,
    done: bool,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Between {
    /// Before the opening `[`.
    #[default]
    Open,
    /// After `[`: an element or `]`.
    FirstElement,
    /// After `,`: an element.
    Element,
    /// After an element: `,` or `]`.
    CommaOrClose,
}

/// JSON's white space: narrower than `u8::is_ascii_whitespace`, which also
/// takes form feed.
fn is_json_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl Splitter {
    /// Scans `buf` from where it stopped, hands each complete element to
    /// `element`, and returns how many leading bytes are no longer needed.
    /// `None` when the bytes are not an array of objects.
    fn feed(&mut self, buf: &[u8], mut element: impl FnMut(&[u8]) -> Option<()>) -> Option<usize> {
        let mut i = self.scanned;
        while i < buf.len() {
            let b = buf[i];
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                } else {
                    // Most of a catalog is inside strings: jump to the next
                    // quote or backslash.
                    i = memchr::memchr2(b'"', b'\\', &buf[i..]).map_or(buf.len(), |at| i + at);
                    continue;
                }
            } else if self.done {
                if !is_json_space(b) {
                    return None;
                }
            } else if self.depth == 0 {
                match (b, self.expect) {
                    _ if is_json_space(b) => {}
                    (b'[', Between::Open) => self.expect = Between::FirstElement,
                    (b'{', Between::FirstElement | Between::Element) => {
                        self.start = Some(i);
                        self.depth = 1;
                    }
                    (b',', Between::CommaOrClose) => self.expect = Between::Element,
                    (b']', Between::FirstElement | Between::CommaOrClose) => self.done = true,
                    _ => return None,
                }
            } else {
                match b {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => {
                        self.depth -= 1;
                        if self.depth == 0 {
                            let start = self.start.take()?;
                            element(&buf[start..=i])?;
                            self.expect = Between::CommaOrClose;
                        }
                    }
                    _ => {}
                }
            }
            i += 1;
        }
        self.scanned = i;
        Some(self.start.unwrap_or(i))
    }

    /// Moves positions back after `consumed` leading bytes were dropped.
    fn shift(&mut self, consumed: usize) {
        self.scanned -= consumed;
        if let Some(start) = &mut self.start {
            *start -= consumed;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chunked reader gives what parsing the whole file gives, whatever
    /// the chunk size, strings with brackets and escapes included.
    #[test]
    fn chunked_summary_equals_whole_parse() {
        let tricky = br#" [ {"id":"a]\"}{","name":"[{","models":[{"id":"m\\"},{"id":"}"}],
            "api_endpoint":"https://x/{}","default_headers":{"K":"v]"}} ,
            {"id":"b","name":"B","x":[[{}],{"y":"\u005d"}]} ]
"#;
        let synthetic = crate::synthetic::catalog(200_000, 3);
        for text in [&tricky[..], synthetic.as_bytes()] {
            let whole: Summary = serde_json::from_slice(text).unwrap();
            for chunk in [1, 2, 3, 7, 64, 4096, 1 << 20] {
                assert_eq!(
                    Summary::read_from(text, chunk).as_ref(),
                    Some(&whole),
                    "chunk {chunk}"
                );
            }
        }
    }

    #[test]
    fn chunked_summary_refuses_what_is_not_an_array_of_objects() {
        for text in [
            &b""[..],
            b"{}",
            b"[1]",
            b"[{\"id\":\"a\"}",
            b"[{\"id\":\"a\"}] x",
            b"x[]",
            b"[{\"id\":1}]",
            b"[{\"id\":\"a\"} {\"id\":\"b\"}]",
            b"[,{\"id\":\"a\"}]",
            b"[{\"id\":\"a\"},]",
            b"[{\"id\":\"a\"}]]",
            b"[]{}",
        ] {
            assert_eq!(
                Summary::read_from(text, 3),
                None,
                "{:?}",
                String::from_utf8_lossy(text)
            );
        }
        assert_eq!(
            Summary::read_from(&b" [ ] "[..], 2),
            Some(Summary::default())
        );
    }

    #[test]
    fn listing_counts_models_and_agrees_with_the_summary() {
        let text =
            br#"[{"id":"a","name":"A","type":"openai","models":[{"id":"m1","x":[1]},{"id":"m2"}]},
            {"id":"b","name":"B","models":null},{"id":"c","name":"C"}]"#;
        let listed = Listed::parse(text).unwrap();
        let summary = Summary::parse(text).unwrap();
        let rows: Vec<Listed> = summary.providers.iter().map(Listed::from).collect();
        assert_eq!(listed, rows);
        assert_eq!(listed[0].models, 2);
        assert_eq!(listed[1].models, 0);
        assert_eq!(listed[0].kind.as_deref(), Some("openai"));
        assert_eq!(Listed::parse(br#"[{"id":"a","models":3}]"#), None);
    }

    /// An index is read back as the summary of the catalog it was made from,
    /// and only for that catalog's SHA-256.
    #[test]
    fn index_round_trips_and_is_bound_to_its_sha256() {
        let text = crate::synthetic::catalog(100_000, 5);
        let catalog = crate::catalog::validate(text.as_bytes()).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("index.json");
        std::fs::write(&path, index_json(&catalog, "abc")).unwrap();
        assert_eq!(
            Summary::from_index(&path, "abc"),
            Summary::parse(text.as_bytes())
        );
        assert_eq!(
            Listed::from_index(&path, "abc"),
            Listed::parse(text.as_bytes())
        );
        assert_eq!(Summary::from_index(&path, "abd"), None);
        assert_eq!(Listed::from_index(&path, "abd"), None);

        // Listing reads the head line alone; the summary needs both lines,
        // whole, and nothing after them.
        let index = index_json(&catalog, "abc");
        let head_end = index.iter().position(|&b| b == b'\n').unwrap() + 1;
        for (tail, summary_survives) in [
            (&b""[..], false),
            (&b"[{\"id\":"[..], false),
            (&index[head_end..], true),
            (&b"[]\n[]\n"[..], false),
        ] {
            std::fs::write(&path, [&index[..head_end], tail].concat()).unwrap();
            assert_eq!(
                Listed::from_index(&path, "abc"),
                Listed::parse(text.as_bytes())
            );
            assert_eq!(
                Summary::from_index(&path, "abc").is_some(),
                summary_survives
            );
        }
    }
}
