//! A catalog's summary: the ids and the places keys are sent to, which
//! comparing the previous catalog with a new one needs, without the rest.
//! It is read from the previous file in bounded memory while the new
//! catalog is validated.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::Path;

use serde::Deserialize;

use crate::http::MAX_BODY_BYTES;

/// How much of the previous catalog is read at a time: small enough that
/// the one buffer, reused, costs few page faults (with 1 MiB an update of
/// the real catalog took about 200 more), large enough for few reads.
const CHUNK_BYTES: usize = 64 << 10;

/// What comparing needs of a catalog, owned, so that the catalog's bytes
/// can be dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Summary {
    /// The providers, in catalog order.
    pub providers: Vec<ProviderSummary>,
}

/// Only the fields comparing reads; everything else is skipped unparsed,
/// which makes reading a summary several times cheaper than validating.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ProviderSummary {
    /// `id`.
    pub id: String,
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

impl Summary {
    /// The summary of a catalog held in memory.
    pub fn parse(bytes: &[u8]) -> Option<Summary> {
        serde_json::from_slice(bytes).ok()
    }

    /// Reads the summary of a catalog file; `None` when there is no file or
    /// it does not hold a catalog, as then there is nothing to compare with.
    ///
    /// Memory stays bounded whatever the file's size: it is read in chunks
    /// and each provider is parsed as soon as it is complete, so the
    /// previous catalog can be summarised while the new one is checked.
    pub fn read(path: &Path) -> Option<Summary> {
        Summary::read_from(File::open(path).ok()?, CHUNK_BYTES)
    }

    /// Reads a summary from `reader` in chunks of `chunk` bytes (at least
    /// one), parsing each provider as soon as it is complete. It accepts
    /// exactly what [`Summary::parse`] accepts.
    pub fn read_from(reader: impl Read, chunk: usize) -> Option<Summary> {
        let mut input = Chunks {
            reader,
            buf: Vec::new(),
            at: 0,
            chunk: chunk.max(1),
            ended: false,
        };
        let mut providers = Vec::new();
        input.expect(b"[")?;
        if input.expect(b"]").is_none() {
            loop {
                providers.push(input.element()?);
                if input.expect(b"]").is_some() {
                    break;
                }
                input.expect(b",")?;
            }
        }
        // Nothing but white space after the array.
        input.next_byte().is_none().then_some(Summary { providers })
    }
}

/// A reader's bytes, read a chunk at a time, of which those before `at`
/// have been parsed.
struct Chunks<R> {
    reader: R,
    buf: Vec<u8>,
    at: usize,
    /// How much a read asks for, at least.
    chunk: usize,
    ended: bool,
}

impl<R: Read> Chunks<R> {
    /// Reads one more chunk, or `more` bytes if that is more, dropping what
    /// was parsed; false at the end.
    fn fill(&mut self, more: usize) -> Option<bool> {
        if self.ended {
            return Some(false);
        }
        self.buf.drain(..self.at);
        self.at = 0;
        let filled = self.buf.len();
        self.buf.resize(filled + self.chunk.max(more), 0);
        let n = loop {
            match self.reader.read(&mut self.buf[filled..]) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                other => break other.ok()?,
            }
        };
        self.buf.truncate(filled + n);
        self.ended = n == 0;
        Some(n > 0)
    }

    /// The next byte that is not JSON white space, without taking it;
    /// `None` at the end (or on a read error).
    fn next_byte(&mut self) -> Option<u8> {
        loop {
            // JSON's white space: narrower than `u8::is_ascii_whitespace`,
            // which also takes form feed.
            let rest = &self.buf[self.at..];
            let spaces = rest
                .iter()
                .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
                .count();
            self.at += spaces;
            if let Some(&b) = self.buf.get(self.at) {
                return Some(b);
            }
            if !self.fill(0)? {
                return None;
            }
        }
    }

    /// Takes `token` (one byte) if it comes next.
    fn expect(&mut self, token: &[u8; 1]) -> Option<()> {
        (self.next_byte()? == token[0]).then(|| self.at += 1)
    }

    /// Parses the provider that comes next, reading as much as it takes.
    fn element(&mut self) -> Option<ProviderSummary> {
        // At least its first byte is at hand: a parser given only white
        // space finds no value at all.
        self.next_byte()?;
        loop {
            let mut values = serde_json::Deserializer::from_slice(&self.buf[self.at..]).into_iter();
            match values.next()? {
                Ok(provider) => {
                    self.at += values.byte_offset();
                    return Some(provider);
                }
                // Perhaps cut off by the end of the chunk (serde_json does
                // not say: `0.` at the end is an invalid number, not an
                // early end): read more, at least as much as is pending, so
                // that a provider larger than a chunk is parsed again only
                // a few times. No catalog has a provider over the cap.
                Err(_) if !self.ended && self.buf.len() - self.at <= MAX_BODY_BYTES => {
                    let pending = self.buf.len() - self.at;
                    self.fill(pending)?;
                }
                Err(_) => return None,
            }
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
        let tricky = r#" [ {"id":"a]\"}{","name":"[{","models":[{"id":"m\\"},{"id":"}"}],
            "api_endpoint":"https://x/{}","default_headers":{"K":"v]"}} ,
            {"id":"b","name":"B","x":[[{}],{"y":"\u005d"}],"n":[0.5,1e-3,-2.25E+10,12345678901234567890,true,null]},
            {"id":"c","name":"Ç","models":[{"id":"é"}],"z":0.25} ]
"#;
        let tricky = tricky.as_bytes();
        let synthetic = crate::synthetic::catalog(200_000, 3);
        // Every chunk size up to the tricky text's length puts a chunk's end
        // inside every token: a number, an escape, a multi-byte character.
        let small_chunks = 1..=tricky.len();
        let large_chunks = [1, 2, 3, 7, 64, 4096, 1 << 20];
        for (text, chunks) in [
            (tricky, small_chunks.collect::<Vec<_>>()),
            (synthetic.as_bytes(), large_chunks.to_vec()),
        ] {
            let whole: Summary = serde_json::from_slice(text).unwrap();
            for chunk in chunks {
                assert_eq!(
                    Summary::read_from(text, chunk).as_ref(),
                    Some(&whole),
                    "chunk {chunk}"
                );
            }
        }
    }

    /// Memory stays bounded: reads ask for one chunk at a time, or for as
    /// much as a provider larger than a chunk needs, never for the file.
    #[test]
    fn chunked_reads_stay_near_the_chunk_size() {
        struct Counting<'a>(&'a [u8], usize);
        impl Read for Counting<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                self.1 = self.1.max(buf.len());
                self.0.read(buf)
            }
        }
        let text = crate::synthetic::catalog(5_000_000, 9);
        let largest = Summary::parse(text.as_bytes())
            .unwrap()
            .providers
            .iter()
            .map(estimated_len)
            .max()
            .unwrap();
        for chunk in [4096, 64 * 1024] {
            let mut reader = Counting(text.as_bytes(), 0);
            assert!(Summary::read_from(&mut reader, chunk).is_some());
            assert!(
                reader.1 <= chunk.max(2 * largest),
                "asked for {} bytes at once",
                reader.1
            );
        }
    }

    /// About how long a provider's text is in the synthetic catalogs.
    fn estimated_len(p: &ProviderSummary) -> usize {
        p.models().len() * 600
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
}
