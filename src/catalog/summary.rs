//! A catalog's summary: the ids and the places keys are sent to, which
//! comparing the previous catalog with a new one needs, without the rest.
//! It is read from the previous file in bounded memory while the new
//! catalog is validated.
//!
//! The summary has a reader of its own rather than serde's: it keeps five
//! fields of a provider and one of a model, and skips the rest, and an
//! update waits for it. What it keeps is parsed as strictly as serde_json
//! parses it; a provider or model written as an array is refused, as Crush
//! refuses it. What it skips is only delimited: strings, numbers and
//! literals at a provider's top level are checked, but a skipped container
//! (most of the file: every model after its id) is followed by its strings
//! and brackets alone, 64 bytes at a time. The file was checked as a whole
//! when it was written, and only the summary depends on this reading: it is
//! four times faster than the serde_json stream it replaced (1.21 to 0.30
//! ms for the real catalog; docs/BENCHMARKS.md).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::fetch::http::MAX_BODY_BYTES;

/// How much of the previous catalog is read at a time, at most (a read
/// never asks for more than the file holds): large enough that a provider
/// rarely straddles two chunks, which costs parsing it again (with 64 KiB
/// the largest real provider, 120 KB, was parsed three times), small enough
/// to keep memory bounded.
const CHUNK_BYTES: usize = 1 << 20;

/// What comparing needs of a catalog, owned, so that the catalog's bytes
/// can be dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(test, derive(serde::Deserialize), serde(transparent))]
pub struct Summary {
    /// The providers, in catalog order.
    pub providers: Vec<ProviderSummary>,
}

/// Only the fields comparing reads; everything else is skipped unparsed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(serde::Deserialize))]
pub struct ProviderSummary {
    /// `id`.
    pub id: String,
    /// The models, only their ids.
    #[cfg_attr(test, serde(default))]
    pub models: Option<Vec<ModelSummary>>,
    /// `api_endpoint`.
    #[cfg_attr(test, serde(default))]
    pub api_endpoint: Option<String>,
    /// `api_key`.
    #[cfg_attr(test, serde(default))]
    pub api_key: Option<String>,
    /// `default_headers`.
    #[cfg_attr(test, serde(default))]
    pub default_headers: Option<BTreeMap<String, String>>,
}

impl ProviderSummary {
    /// The models, empty when the provider lists none.
    pub fn models(&self) -> &[ModelSummary] {
        self.models.as_deref().unwrap_or_default()
    }
}

/// A model, only its id.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(test, derive(serde::Deserialize))]
pub struct ModelSummary {
    /// `id`.
    pub id: String,
}

impl Summary {
    /// The summary of a catalog held in memory.
    pub fn parse(bytes: &[u8]) -> Option<Summary> {
        Summary::read_from(bytes, bytes.len())
    }

    /// Reads the summary of a catalog file; `None` when there is no file or
    /// it does not hold a catalog, as then there is nothing to compare with.
    ///
    /// Memory stays bounded whatever the file's size: it is read in chunks
    /// and each provider is parsed as soon as it is complete, so the
    /// previous catalog can be summarised while the new one is checked.
    pub fn read(path: &Path) -> Option<Summary> {
        let file = File::open(path).ok()?;
        // No larger than the file: one read then takes it all.
        let len = file.metadata().map_or(CHUNK_BYTES, |m| m.len() as usize);
        Summary::read_from(file, CHUNK_BYTES.min(len.saturating_add(1)))
    }

    /// Reads a summary from `reader` in chunks of `chunk` bytes (at least
    /// one), parsing each provider as soon as it is complete. Whatever the
    /// chunk size, it gives the same answer.
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
            let mut scanner = Scanner {
                text: &self.buf,
                at: self.at,
            };
            scanner.skip_space();
            self.at = scanner.at;
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
        loop {
            let mut scanner = Scanner {
                text: &self.buf,
                at: self.at,
            };
            match scanner.provider() {
                Ok(provider) => {
                    self.at = scanner.at;
                    return Some(provider);
                }
                // Cut off by the end of the chunk: read more, at least as
                // much as is pending, so that a provider larger than a chunk
                // is parsed again only a few times. No catalog has a
                // provider over the cap.
                Err(Stop::More) if !self.ended && self.buf.len() - self.at <= MAX_BODY_BYTES => {
                    let pending = self.buf.len() - self.at;
                    self.fill(pending)?;
                }
                Err(_) => return None,
            }
        }
    }
}

/// Why the scanner stopped short of a value.
#[derive(Debug, PartialEq, Eq)]
enum Stop {
    /// The text at hand ends inside it: there may be more to read.
    More,
    /// It is not JSON, or not the shape of a catalog.
    Invalid,
}

type Scan<T> = Result<T, Stop>;

/// The bytes that end the plain run of a JSON string: the quote, the
/// backslash, and the control characters JSON forbids in strings.
const STRING_STOPS: [bool; 256] = {
    let mut stops = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        stops[b] = true;
        b += 1;
    }
    stops[b'"' as usize] = true;
    stops[b'\\' as usize] = true;
    stops
};

/// Where the bytes that matter to [`Scanner::skip_rest`] are in a block of
/// 64: bit `i` for byte `i`.
#[derive(Debug, Default, PartialEq, Eq)]
struct Marks {
    quote: u64,
    backslash: u64,
    /// `{` and `[`.
    open: u64,
    /// `}` and `]`.
    close: u64,
}

impl Marks {
    #[cfg(target_arch = "x86_64")]
    fn of(block: &[u8; 64]) -> Marks {
        // SAFETY: SSE2 is part of x86_64 itself: every x86_64 CPU has it.
        unsafe { Marks::of_sse2(block) }
    }

    /// Sixteen bytes per comparison.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "sse2")]
    fn of_sse2(block: &[u8; 64]) -> Marks {
        use std::arch::x86_64::{
            _mm_cmpeq_epi8, _mm_movemask_epi8, _mm_or_si128, _mm_set_epi64x, _mm_set1_epi8,
        };
        let mut marks = Marks::default();
        for (i, lane) in block.chunks_exact(16).enumerate() {
            let half =
                |at: usize| i64::from_le_bytes(lane[at..at + 8].try_into().expect("eight bytes"));
            let bytes = _mm_set_epi64x(half(8), half(0));
            let eq = |b: u8| _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b as i8));
            let mask = |m| u64::from(_mm_movemask_epi8(m) as u16) << (16 * i);
            marks.quote |= mask(eq(b'"'));
            marks.backslash |= mask(eq(b'\\'));
            marks.open |= mask(_mm_or_si128(eq(b'{'), eq(b'[')));
            marks.close |= mask(_mm_or_si128(eq(b'}'), eq(b']')));
        }
        marks
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn of(block: &[u8; 64]) -> Marks {
        Marks::of_bytes(block)
    }

    /// One byte at a time, where there is no SSE2.
    #[cfg(any(test, not(target_arch = "x86_64")))]
    fn of_bytes(block: &[u8; 64]) -> Marks {
        let mut marks = Marks::default();
        for (i, &b) in block.iter().enumerate() {
            let bit = 1 << i;
            match b {
                b'"' => marks.quote |= bit,
                b'\\' => marks.backslash |= bit,
                b'{' | b'[' => marks.open |= bit,
                b'}' | b']' => marks.close |= bit,
                _ => {}
            }
        }
        marks
    }
}

/// JSON text being read, from `at`.
struct Scanner<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Scanner<'a> {
    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.text.get(self.at) {
            self.at += 1;
            // Pretty-printed catalogs indent with runs of spaces.
            while self.text.get(self.at..self.at + 8) == Some(b"        ") {
                self.at += 8;
            }
        }
    }

    /// The next byte after white space, not taken.
    fn peek(&mut self) -> Scan<u8> {
        self.skip_space();
        self.text.get(self.at).copied().ok_or(Stop::More)
    }

    /// Takes `byte`, which must come next after white space.
    fn expect(&mut self, byte: u8) -> Scan<()> {
        if self.peek()? != byte {
            return Err(Stop::Invalid);
        }
        self.at += 1;
        Ok(())
    }

    /// After a member or an element: true for a comma, false for `close`.
    fn more(&mut self, close: u8) -> Scan<bool> {
        let b = self.peek()?;
        self.at += 1;
        match b {
            b',' => Ok(true),
            b if b == close => Ok(false),
            _ => Err(Stop::Invalid),
        }
    }

    /// Takes `open` and tells whether the container is empty (its `close`
    /// taken too).
    fn open(&mut self, open: u8, close: u8) -> Scan<bool> {
        self.expect(open)?;
        if self.peek()? == close {
            self.at += 1;
            return Ok(true);
        }
        Ok(false)
    }

    /// Takes `null` if it comes next.
    fn null(&mut self) -> Scan<bool> {
        if self.peek()? != b'n' {
            return Ok(false);
        }
        self.literal(b"null")?;
        Ok(true)
    }

    /// `None` for `null`, else what `read` reads.
    fn nullable<T>(&mut self, read: impl FnOnce(&mut Self) -> Scan<T>) -> Scan<Option<T>> {
        if self.null()? {
            return Ok(None);
        }
        read(self).map(Some)
    }

    fn literal(&mut self, word: &[u8]) -> Scan<()> {
        let rest = &self.text[self.at..];
        let n = rest.len().min(word.len());
        if rest[..n] != word[..n] {
            return Err(Stop::Invalid);
        }
        if n < word.len() {
            return Err(Stop::More);
        }
        self.at += n;
        Ok(())
    }

    /// The plain run of a string from `at` (inside the quotes), up to the
    /// next quote, backslash or control character, which is returned.
    fn string_run(&mut self) -> Scan<u8> {
        let rest = &self.text[self.at..];
        let n = rest
            .iter()
            .position(|&b| STRING_STOPS[usize::from(b)])
            .ok_or(Stop::More)?;
        self.at += n;
        Ok(rest[n])
    }

    /// Skips a string; its opening quote is next. Its escapes are checked
    /// as serde_json checks those of a string it skips: the right letter,
    /// four hex digits after `u`.
    fn skip_string(&mut self) -> Scan<()> {
        self.expect(b'"')?;
        loop {
            match self.string_run()? {
                b'"' => {
                    self.at += 1;
                    return Ok(());
                }
                b'\\' => match self.text.get(self.at + 1) {
                    None => return Err(Stop::More),
                    Some(b'u') => {
                        self.at += 2;
                        self.hex4()?;
                    }
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => self.at += 2,
                    Some(_) => return Err(Stop::Invalid),
                },
                _ => return Err(Stop::Invalid),
            }
        }
    }

    /// Reads a string; its opening quote is next.
    fn string(&mut self) -> Scan<String> {
        self.text().map(Cow::into_owned)
    }

    /// Reads a string, borrowed from the text unless it has escapes.
    fn text(&mut self) -> Scan<Cow<'a, str>> {
        self.expect(b'"')?;
        let text = self.text;
        let start = self.at;
        let mut decoded = Vec::new();
        loop {
            let run = self.at;
            let stop = self.string_run()?;
            match stop {
                b'"' if decoded.is_empty() && run == start => {
                    self.at += 1;
                    let plain = &text[start..self.at - 1];
                    return std::str::from_utf8(plain)
                        .map(Cow::Borrowed)
                        .map_err(|_| Stop::Invalid);
                }
                b'"' => {
                    decoded.extend_from_slice(&text[run..self.at]);
                    self.at += 1;
                    return String::from_utf8(decoded)
                        .map(Cow::Owned)
                        .map_err(|_| Stop::Invalid);
                }
                b'\\' => {
                    decoded.extend_from_slice(&text[run..self.at]);
                    let c = self.escape()?;
                    decoded.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                }
                _ => return Err(Stop::Invalid),
            }
        }
    }

    /// Reads an escape, its backslash next, as serde_json does in a string
    /// it keeps: a lone surrogate is refused.
    fn escape(&mut self) -> Scan<char> {
        let Some(&b) = self.text.get(self.at + 1) else {
            return Err(Stop::More);
        };
        self.at += 2;
        Ok(match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let high = self.hex4()?;
                if !(0xD800..0xDC00).contains(&high) {
                    return char::from_u32(high).ok_or(Stop::Invalid);
                }
                self.literal(b"\\u")?;
                let low = self.hex4()?;
                if !(0xDC00..0xE000).contains(&low) {
                    return Err(Stop::Invalid);
                }
                char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
                    .ok_or(Stop::Invalid)?
            }
            _ => return Err(Stop::Invalid),
        })
    }

    fn hex4(&mut self) -> Scan<u32> {
        let digits = self.text.get(self.at..self.at + 4).ok_or_else(|| {
            // Too few bytes at hand: more, unless those at hand are wrong.
            if self.text[self.at..].iter().all(u8::is_ascii_hexdigit) {
                Stop::More
            } else {
                Stop::Invalid
            }
        })?;
        let mut value = 0;
        for &d in digits {
            value = value * 16 + char::from(d).to_digit(16).ok_or(Stop::Invalid)?;
        }
        self.at += 4;
        Ok(value)
    }

    fn digits(&mut self) -> Scan<usize> {
        let rest = &self.text[self.at..];
        let n = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if n == rest.len() {
            // A number runs on to the end of the text at hand.
            return Err(Stop::More);
        }
        self.at += n;
        Ok(n)
    }

    /// Skips a number, with JSON's grammar.
    fn skip_number(&mut self) -> Scan<()> {
        if self.text.get(self.at) == Some(&b'-') {
            self.at += 1;
        }
        match self.text.get(self.at) {
            None => return Err(Stop::More),
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                self.digits()?;
            }
            Some(_) => return Err(Stop::Invalid),
        }
        if self.text.get(self.at) == Some(&b'.') {
            self.at += 1;
            if self.digits()? == 0 {
                return Err(Stop::Invalid);
            }
        }
        if let Some(b'e' | b'E') = self.text.get(self.at) {
            self.at += 1;
            if let Some(b'+' | b'-') = self.text.get(self.at) {
                self.at += 1;
            }
            if self.digits()? == 0 {
                return Err(Stop::Invalid);
            }
        }
        // Within the text at hand, a number ends before another byte.
        match self.text.get(self.at) {
            None => Err(Stop::More),
            Some(_) => Ok(()),
        }
    }

    /// Skips any value. Strings, numbers and literals are checked as
    /// JSON; containers are only delimited (see [`Scanner::skip_rest`]).
    fn skip_value(&mut self) -> Scan<()> {
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' | b'[' => {
                self.at += 1;
                self.skip_rest()
            }
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => self.skip_number(),
        }
    }

    /// Skips the rest of a container whose opening bracket was taken, up to
    /// and with its closing one. Only strings and brackets are followed:
    /// what a summary skips is most of the file, and it was checked as a
    /// whole when it was written; following only those, 64 bytes at a time,
    /// is several times faster than parsing each value (docs/BENCHMARKS.md).
    fn skip_rest(&mut self) -> Scan<()> {
        let mut depth = 1usize;
        let mut in_string = false;
        loop {
            let rest = &self.text[self.at..];
            let Some(block) = rest.first_chunk::<64>() else {
                return self.skip_rest_slowly(&mut depth, &mut in_string, rest.len());
            };
            let marks = Marks::of(block);
            if marks.backslash != 0 {
                // Escapes are rare: a block with one goes byte by byte.
                match self.skip_rest_slowly(&mut depth, &mut in_string, 64) {
                    Err(Stop::More) => continue,
                    done => return done,
                }
            }
            // Bytes inside strings: from an opening quote up to the closing
            // one, which a running XOR of the quote marks gives.
            let mut strings = marks.quote;
            for shift in [1, 2, 4, 8, 16, 32] {
                strings ^= strings << shift;
            }
            if in_string {
                strings = !strings;
            }
            let mut brackets = (marks.open | marks.close) & !strings;
            while brackets != 0 {
                let at = brackets.trailing_zeros();
                if marks.open >> at & 1 == 1 {
                    depth += 1;
                } else {
                    depth -= 1;
                    if depth == 0 {
                        self.at += at as usize + 1;
                        return Ok(());
                    }
                }
                brackets &= brackets - 1;
            }
            in_string ^= marks.quote.count_ones() % 2 == 1;
            self.at += 64;
        }
    }

    /// [`Scanner::skip_rest`] byte by byte over the next `len` bytes (or
    /// a byte more, for an escape at their end): `Err(Stop::More)` when the
    /// container goes on after them.
    fn skip_rest_slowly(
        &mut self,
        depth: &mut usize,
        in_string: &mut bool,
        len: usize,
    ) -> Scan<()> {
        let end = self.at + len;
        while self.at < end {
            let b = self.text[self.at];
            self.at += 1;
            match (b, *in_string) {
                (b'\\', true) => {
                    if self.at == self.text.len() {
                        self.at -= 1;
                        return Err(Stop::More);
                    }
                    self.at += 1;
                }
                (b'"', _) => *in_string = !*in_string,
                (b'{' | b'[', false) => *depth += 1,
                (b'}' | b']', false) => {
                    *depth -= 1;
                    if *depth == 0 {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
        Err(Stop::More)
    }

    /// Reads a key: its bytes, borrowed unless it has escapes. Like a
    /// skipped string, it is not checked to be UTF-8: a key that is not
    /// never matches a field's name.
    fn key(&mut self) -> Scan<Cow<'a, [u8]>> {
        self.expect(b'"')?;
        let start = self.at;
        if self.string_run()? == b'"' {
            self.at += 1;
            return Ok(Cow::Borrowed(&self.text[start..self.at - 1]));
        }
        self.at = start - 1;
        self.text()
            .map(|key| Cow::Owned(key.into_owned().into_bytes()))
    }

    /// Reads an object's members with `member`, which gets each key and
    /// reads or skips its value.
    fn object(&mut self, mut member: impl FnMut(&mut Self, Cow<'a, [u8]>) -> Scan<()>) -> Scan<()> {
        if self.open(b'{', b'}')? {
            return Ok(());
        }
        loop {
            let key = self.key()?;
            self.expect(b':')?;
            member(self, key)?;
            if !self.more(b'}')? {
                return Ok(());
            }
        }
    }

    /// Reads a provider: an object with an `id`.
    fn provider(&mut self) -> Scan<ProviderSummary> {
        let mut id = None;
        let mut models = None;
        let mut api_endpoint = None;
        let mut api_key = None;
        let mut default_headers = None;
        self.object(|s, key| match &*key {
            b"id" => once(&mut id, s.string()?),
            b"models" => once(&mut models, s.nullable(Self::models)?),
            b"api_endpoint" => once(&mut api_endpoint, s.nullable(Self::string)?),
            b"api_key" => once(&mut api_key, s.nullable(Self::string)?),
            b"default_headers" => once(&mut default_headers, s.nullable(Self::headers)?),
            _ => s.skip_value(),
        })?;
        Ok(ProviderSummary {
            id: id.ok_or(Stop::Invalid)?,
            models: models.flatten(),
            api_endpoint: api_endpoint.flatten(),
            api_key: api_key.flatten(),
            default_headers: default_headers.flatten(),
        })
    }

    /// Reads a provider's models: an array of objects with an `id`.
    fn models(&mut self) -> Scan<Vec<ModelSummary>> {
        let mut models = Vec::new();
        if self.open(b'[', b']')? {
            return Ok(models);
        }
        loop {
            models.push(self.model()?);
            if !self.more(b']')? {
                return Ok(models);
            }
        }
    }

    /// Reads a model: an object with an `id`. The members after the id are
    /// skipped as one (see [`Scanner::skip_rest`]).
    fn model(&mut self) -> Scan<ModelSummary> {
        self.expect(b'{')?;
        loop {
            let key = self.key()?;
            self.expect(b':')?;
            if *key == *b"id" {
                let id = self.string()?;
                if self.more(b'}')? {
                    self.skip_rest()?;
                }
                return Ok(ModelSummary { id });
            }
            self.skip_value()?;
            if !self.more(b'}')? {
                // No id.
                return Err(Stop::Invalid);
            }
        }
    }

    /// Reads headers: an object of strings; a repeated name keeps its last
    /// value, as serde_json's maps do.
    fn headers(&mut self) -> Scan<BTreeMap<String, String>> {
        let mut headers = BTreeMap::new();
        self.object(|s, key| {
            let name = String::from_utf8(key.into_owned()).map_err(|_| Stop::Invalid)?;
            headers.insert(name, s.string()?);
            Ok(())
        })?;
        Ok(headers)
    }
}

/// Sets a field read once; a repeated field is refused, as serde's derived
/// structs refuse it.
fn once<T>(field: &mut Option<T>, value: T) -> Scan<()> {
    if field.replace(value).is_some() {
        return Err(Stop::Invalid);
    }
    Ok(())
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
        let synthetic = crate::catalog::synthetic::catalog(200_000, 3);
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
        let text = crate::catalog::synthetic::catalog(5_000_000, 9);
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

    /// Skipped members are followed 64 bytes at a time: brackets and
    /// escaped quotes inside strings, and nested containers, must be read
    /// right wherever they fall in a block, and whatever the chunk size.
    #[test]
    fn skipped_members_end_where_they_end_at_every_offset() {
        let tricky = r#""a\"]}\\",
            "nested": [{"x": "}]", "y": [[], {}, "\\\""]}, 1.5e3, null, true],
            "s": "\u005d\"{[""#;
        for pad in 0..130 {
            let padding = "p".repeat(pad);
            let text = format!(
                r#"[{{"id":"a","models":[{{"id":"m","pad":"{padding}","t":{tricky},"n":[1]}},
                   {{"pad":"{padding}","t":{tricky},"id":"m2","z":{{}}}}],
                   "u":{{"pad":"{padding}","t":{tricky}}},"api_key":"$K"}},
                   {{"id":"b","x":[{{"t":{tricky}}}]}}]"#
            );
            let whole: Summary = serde_json::from_str(&text).unwrap();
            assert_eq!(whole.providers[0].models().len(), 2);
            for chunk in [1, 7, 64, 100, text.len()] {
                assert_eq!(
                    Summary::read_from(text.as_bytes(), chunk).as_ref(),
                    Some(&whole),
                    "pad {pad}, chunk {chunk}"
                );
            }
            // Cut anywhere inside, it is not a catalog.
            for cut in (1..text.len()).step_by(13) {
                assert_eq!(
                    Summary::parse(&text.as_bytes()[..cut]),
                    None,
                    "pad {pad}, cut {cut}"
                );
            }
        }
    }

    /// The marks of a block are the same, whichever way they are found.
    #[test]
    fn block_marks_agree_with_a_byte_by_byte_look() {
        let alphabet = b"\"\\{}[]a :,\x00\xff";
        let mut state = 0x9E37_79B9_7F4A_7C15_u64;
        for _ in 0..2000 {
            let mut block = [0u8; 64];
            for byte in &mut block {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                *byte = alphabet[(state % alphabet.len() as u64) as usize];
            }
            assert_eq!(Marks::of(&block), Marks::of_bytes(&block), "{block:?}");
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
}
