//! What a new catalog changes against the previous one: providers and models
//! added and removed, and the changes that redirect users' credentials.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read;

use serde::{Deserialize, Serialize};

use crate::catalog::{Catalog, Text, printable};

/// The differences between two catalogs.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct Changes {
    /// Ids of providers only in the new catalog.
    pub providers_added: Vec<String>,
    /// Ids of providers only in the previous catalog.
    pub providers_removed: Vec<String>,
    /// Model changes of providers in both catalogs.
    pub models: Vec<ModelChanges>,
    /// Changes of where requests go or what they carry.
    pub security: Vec<SecurityChange>,
}

impl Changes {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.providers_added.is_empty()
            && self.providers_removed.is_empty()
            && self.models.is_empty()
            && self.security.is_empty()
    }
}

/// Models added to and removed from one provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelChanges {
    /// The provider id.
    pub provider: String,
    /// Model ids only in the new catalog.
    pub added: Vec<String>,
    /// Model ids only in the previous catalog.
    pub removed: Vec<String>,
}

/// A change of a provider's `api_endpoint`, `api_key` reference or
/// `default_headers`: a catalog that moves an endpoint sends users' API keys
/// somewhere else.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SecurityChange {
    /// The provider id.
    pub provider: String,
    /// The field that changed.
    pub field: &'static str,
    /// Its previous value (absent fields as null).
    pub before: Option<String>,
    /// Its new value.
    pub after: Option<String>,
}

impl SecurityChange {
    /// One line for a human, with every value quoted and escaped.
    pub fn describe(&self) -> String {
        let show =
            |v: &Option<String>| v.as_deref().map_or_else(|| "(none)".to_string(), printable);
        let consequence = match self.field {
            "api_endpoint" => "requests carrying your API key will go to the new address",
            "api_key" => "a different credential will be sent",
            _ => "different headers will be sent with your requests",
        };
        format!(
            "provider {}: {} changed from {} to {}; {consequence}",
            printable(&self.provider),
            self.field,
            show(&self.before),
            show(&self.after)
        )
    }
}

/// What comparing needs of the previous catalog, owned, so that its bytes
/// can be dropped before the next catalog is read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Summary {
    providers: Vec<ProviderSummary>,
}

/// Only the fields comparing reads; everything else is skipped unparsed,
/// which makes reading a summary several times cheaper than validating.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
struct ProviderSummary {
    id: String,
    #[serde(default)]
    models: Option<Vec<ModelSummary>>,
    #[serde(default)]
    api_endpoint: Option<String>,
    #[serde(default)]
    api_key: Option<String>,
    #[serde(default)]
    default_headers: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
struct ModelSummary {
    id: String,
}

/// Previous catalogs up to this size are read whole; larger ones in chunks.
const WHOLE_FILE_MAX_BYTES: u64 = 8 * 1024 * 1024;

impl Summary {
    /// Reads the summary of a catalog file; `None` when there is no file or
    /// it does not hold a catalog, as then there is nothing to compare with.
    ///
    /// Memory stays bounded whatever the file's size: it is read in chunks
    /// and each provider is parsed on its own as soon as it is complete, so
    /// the previous catalog can be summarised while the new one is checked.
    pub fn read(path: &std::path::Path) -> Option<Summary> {
        let file = std::fs::File::open(path).ok()?;
        // Small files are cheaper to parse whole than to stream.
        if file.metadata().ok()?.len() <= WHOLE_FILE_MAX_BYTES {
            let mut bytes = Vec::new();
            let mut file = file;
            file.read_to_end(&mut bytes).ok()?;
            return serde_json::from_slice(&bytes).ok();
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

/// Compares the `previous` catalog with the `next` one.
pub fn compare(previous: &Summary, next: &Catalog<'_>) -> Changes {
    let old: HashMap<&str, &ProviderSummary> = previous
        .providers
        .iter()
        .map(|p| (p.id.as_str(), p))
        .collect();
    let new_ids: HashSet<&str> = next.providers.iter().map(|p| p.id.as_str()).collect();
    let mut changes = Changes::default();
    for provider in &next.providers {
        let id = provider.id.as_str();
        let Some(before) = old.get(id) else {
            changes.providers_added.push(id.to_owned());
            continue;
        };
        let before_model_list = before.models.as_deref().unwrap_or_default();
        let before_models: HashSet<&str> =
            before_model_list.iter().map(|m| m.id.as_str()).collect();
        let after_models: HashSet<&str> = provider.models().iter().map(|m| m.id.as_str()).collect();
        let added: Vec<String> = provider
            .models()
            .iter()
            .map(|m| m.id.as_str())
            .filter(|m| !before_models.contains(m))
            .map(str::to_owned)
            .collect();
        let removed: Vec<String> = before_model_list
            .iter()
            .map(|m| m.id.as_str())
            .filter(|m| !after_models.contains(m))
            .map(str::to_owned)
            .collect();
        if !added.is_empty() || !removed.is_empty() {
            changes.models.push(ModelChanges {
                provider: id.to_owned(),
                added,
                removed,
            });
        }
        let text = |t: &Option<Text<'_>>| t.as_ref().map(|t| t.as_str().to_owned());
        let new_headers = headers_text(provider.default_headers.as_ref());
        let old_headers = headers_text(before.default_headers.as_ref());
        for (field, before, after) in [
            (
                "api_endpoint",
                before.api_endpoint.clone(),
                text(&provider.api_endpoint),
            ),
            ("api_key", before.api_key.clone(), text(&provider.api_key)),
            ("default_headers", old_headers, new_headers),
        ] {
            if before != after {
                changes.security.push(SecurityChange {
                    provider: id.to_owned(),
                    field,
                    before,
                    after,
                });
            }
        }
    }
    changes.providers_removed = previous
        .providers
        .iter()
        .map(|p| p.id.as_str())
        .filter(|id| !new_ids.contains(id))
        .map(str::to_owned)
        .collect();
    changes
}

/// Headers in one line, sorted by name (both sides come from sorted maps).
fn headers_text<K: AsRef<str>, V: AsRef<str>>(headers: Option<&BTreeMap<K, V>>) -> Option<String> {
    let headers = headers.filter(|h| !h.is_empty())?;
    Some(
        headers
            .iter()
            .map(|(k, v)| format!("{}: {}", k.as_ref(), v.as_ref()))
            .collect::<Vec<_>>()
            .join(", "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::validate;

    #[test]
    fn reports_providers_models_and_security_changes() {
        let old = br#"[{"id":"a","name":"A","api_endpoint":"https://a","api_key":"$A","models":[{"id":"m1"},{"id":"m2"}]},
                       {"id":"gone","name":"G"}]"#;
        let new = br#"[{"id":"a","name":"A","api_endpoint":"https://evil","api_key":"$A","default_headers":{"X":"1"},"models":[{"id":"m2"},{"id":"m3"}]},
                       {"id":"fresh","name":"F"}]"#;
        let changes = compare(
            &serde_json::from_slice(old).unwrap(),
            &validate(new).unwrap(),
        );
        assert_eq!(changes.providers_added, ["fresh"]);
        assert_eq!(changes.providers_removed, ["gone"]);
        assert_eq!(
            changes.models,
            [ModelChanges {
                provider: "a".into(),
                added: vec!["m3".into()],
                removed: vec!["m1".into()]
            }]
        );
        let fields: Vec<_> = changes.security.iter().map(|c| c.field).collect();
        assert_eq!(fields, ["api_endpoint", "default_headers"]);
        assert_eq!(
            changes.security[0].describe(),
            "provider \"a\": api_endpoint changed from \"https://a\" to \"https://evil\"; requests carrying your API key will go to the new address"
        );
        assert_eq!(changes.security[1].after.as_deref(), Some("X: 1"));
    }

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
    fn identical_catalogs_have_no_changes() {
        let json = br#"[{"id":"a","name":"A","models":[{"id":"m"}],"default_headers":{}}]"#;
        let json2 = br#"[{"id":"a","name":"A","models":[{"id":"m"}]}]"#;
        assert!(
            compare(
                &serde_json::from_slice(json).unwrap(),
                &validate(json2).unwrap()
            )
            .is_empty()
        );
    }
}
