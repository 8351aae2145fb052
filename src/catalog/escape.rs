//! What a string from a catalog, a server, a signature or a file on disk
//! may look like on a terminal: the one place that decides it. Whatever
//! such a string holds, it is printed with [`safe`] (or, quoted, with
//! [`quoted`] and [`printable`]); JSON this program writes goes through
//! [`json_bytes`], which spells the same characters as `\u` escapes.
//!
//! Escaped are the characters that make a terminal do something other
//! than show a letter, or that make text read otherwise than it is
//! stored: C0 and C1 controls and DEL (escape sequences, a carriage return
//! that overwrites a line, a backspace), the bidirectional controls
//! (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C: `evil.example`
//! shown as `elpmaxe.live`), zero-width characters (U+200B–U+200D,
//! U+2060, U+FEFF: two hosts that look the same), and the line and
//! paragraph separators U+2028 and U+2029.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io;

/// Whether `c` must not reach a terminal as it is.
pub fn is_unsafe(c: char) -> bool {
    matches!(
        c,
        '\0'..='\x1f'
            | '\x7f'..='\u{9f}'
            | '\u{61c}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}'
            | '\u{feff}'
    )
}

/// Writes `c` as an escape a person can read: `\n`, `\t`, `\r`, else
/// `\u{1b}`.
fn escape_into(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        '\r' => out.push_str("\\r"),
        c => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

/// `text` safe to print: every character of [`is_unsafe`] written as an
/// escape (`\u{1b}`, `\n`), the rest as it is. Borrowed when there is
/// nothing to escape, which is almost always.
pub(crate) fn safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe(c) {
            escape_into(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// [`safe`] for a message of several lines: each line made safe, the
/// line breaks kept.
pub(crate) fn safe_lines(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c != '\n' && is_unsafe(c)) {
        return Cow::Borrowed(text);
    }
    let lines: Vec<Cow<'_, str>> = text.split('\n').map(safe).collect();
    Cow::Owned(lines.join("\n"))
}

/// `text` in double quotes, shortened to at most `max` characters (then
/// ending in `…`): `"`, `\` and every character of [`is_unsafe`] escaped,
/// so that the quotes show where it starts and ends.
fn quote(text: &str, max: usize) -> String {
    let mut out = String::from("\"");
    for (count, c) in text.chars().enumerate() {
        if count == max {
            out.push('…');
            break;
        }
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if is_unsafe(c) => escape_into(&mut out, c),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Quotes a string from the catalog for a one-line message, escaped and
/// shortened to 80 characters.
pub(crate) fn printable(text: &str) -> String {
    quote(text, 80)
}

/// Quotes a string in full, escaped: for what a message must never cut (a
/// host, a variable, an endpoint).
pub(crate) fn quoted(text: &str) -> String {
    quote(text, usize::MAX)
}

/// Writes `value` as pretty JSON, every character of [`is_unsafe`] as a
/// `\u` escape ([`json_bytes`]).
pub(crate) fn write_json(
    out: &mut impl io::Write,
    value: &impl serde::Serialize,
) -> io::Result<()> {
    out.write_all(&json_bytes(&serde_json::to_vec_pretty(value)?))
}

/// `value` as one line of JSON, every character of [`is_unsafe`] escaped:
/// for a list or an object quoted in a message.
pub(crate) fn json_text(value: &impl serde::Serialize) -> String {
    match serde_json::to_vec(value) {
        // serde_json writes UTF-8 only.
        Ok(bytes) => String::from_utf8_lossy(&json_bytes(&bytes)).into_owned(),
        Err(e) => format!("(cannot be shown: {e})"),
    }
}

/// The bytes of a JSON document (valid UTF-8 JSON, such as a validated
/// catalog) with every character of [`is_unsafe`] but JSON's own white
/// space (tab, line feed, carriage return) spelled as a `\u` escape: the
/// same JSON value, safe on a terminal. Such characters can only stand
/// inside strings in a valid document, where the escape means the same.
pub(crate) fn json_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Cow::Borrowed(bytes);
    };
    let risky = |c: char| is_unsafe(c) && !matches!(c, '\t' | '\n' | '\r');
    if !text.chars().any(risky) {
        return Cow::Borrowed(bytes);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if risky(c) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind the module names, and its neighbours that stay.
    const HOSTILE: &str = "a\u{1b}[31mb\u{7}c\rd\u{8}e\u{7f}f\u{85}g\u{9b}h\u{202e}i\u{2066}j\u{2069}k\u{200e}l\u{200f}m\u{61c}n\u{200b}o\u{200d}p\u{2060}q\u{feff}r\u{2028}s\u{2029}t\nu";

    #[test]
    fn every_hostile_character_is_escaped_and_nothing_else() {
        let shown = safe(HOSTILE);
        assert!(!shown.chars().any(is_unsafe), "{shown}");
        assert_eq!(
            shown,
            "a\\u{1b}[31mb\\u{7}c\\rd\\u{8}e\\u{7f}f\\u{85}g\\u{9b}h\\u{202e}i\\u{2066}j\\u{2069}k\\u{200e}l\\u{200f}m\\u{61c}n\\u{200b}o\\u{200d}p\\u{2060}q\\u{feff}r\\u{2028}s\\u{2029}t\\nu"
        );
        for fine in [
            "anthropic",
            "日本語モデル",
            "é",
            "\u{a0}",
            "\u{2014}",
            "👍",
            "x\u{301}",
        ] {
            assert!(matches!(safe(fine), Cow::Borrowed(_)), "{fine}");
        }
        assert_eq!(safe_lines("a\u{1b}\nb"), "a\\u{1b}\nb");
    }

    #[test]
    fn quotes_escape_quotes_backslashes_and_shorten() {
        assert_eq!(printable("a\nb"), "\"a\\nb\"");
        assert_eq!(printable("a\"\\b"), "\"a\\\"\\\\b\"");
        assert_eq!(printable(&"x".repeat(100)).chars().count(), 83);
        assert_eq!(quoted("evil\u{202e}.example"), "\"evil\\u{202e}.example\"");
    }

    #[test]
    fn json_spells_them_as_u_escapes_and_reads_back_the_same() {
        let value = serde_json::json!({ "name": HOSTILE, HOSTILE: [HOSTILE] });
        let mut out = Vec::new();
        write_json(&mut out, &value).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.chars().any(|c| is_unsafe(c) && c != '\n'), "{text}");
        assert!(
            text.contains("\\u202e") && text.contains("\\u0085"),
            "{text}"
        );
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value);
        assert!(text.starts_with("{\n  \""), "pretty: {text}");
        let line = json_text(&value);
        assert!(
            !line.contains('\n') && !line.chars().any(is_unsafe),
            "{line}"
        );
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&line).unwrap(),
            value
        );
    }

    #[test]
    fn a_documents_bytes_escape_inside_strings_only() {
        let document = format!("[\n\t{{\"id\": \"{}\"}}\r\n]", "a\u{202e}b\u{7f}");
        let shown = json_bytes(document.as_bytes());
        let text = std::str::from_utf8(&shown).unwrap();
        assert_eq!(text, "[\n\t{\"id\": \"a\\u202eb\\u007f\"}\r\n]");
        let same = |t: &str| serde_json::from_str::<serde_json::Value>(t).unwrap();
        assert_eq!(same(text), same(&document));
        assert!(matches!(json_bytes(b"[1]"), Cow::Borrowed(_)));
    }
}
