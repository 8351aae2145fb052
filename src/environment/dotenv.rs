//! Reading a `.env` file as Crush does: its `main` package imports
//! `github.com/joho/godotenv/autoload` (v1.5.1), whose `init` calls
//! `godotenv.Load()`. These are that parser's rules (`parser.go`:
//! `parseBytes`, `locateKeyName`, `extractVarValue`, `expandEscapes`,
//! `expandVariables`), facts only:
//!
//! - `\r\n` is `\n`; blank lines and lines starting with `#` are skipped;
//! - `[export ]NAME=value` or `NAME: value`; a name holds letters, digits,
//!   `_` and `.` (read byte by byte, as Latin-1), and blanks, which are
//!   trimmed from its end; any other character makes the whole file an
//!   error, and then **nothing** of it is loaded;
//! - an unquoted value runs to the end of the line, loses a ` #comment`
//!   (the last `#` that follows a blank) and its surrounding blanks;
//! - a value in single quotes is literal; in double quotes `\n` and `\r`
//!   are a newline and a carriage return and a backslash before any other
//!   character but `$` is dropped; either may span lines, and ends at the
//!   first quote not preceded by a backslash;
//! - in an unquoted or double-quoted value, `$NAME` and `${NAME}` (NAME in
//!   upper case, digits and `_`) are replaced by the value the **same
//!   file** gave NAME earlier (the environment is not consulted), or
//!   nothing; `\$` is a literal `$`;
//! - a name given twice keeps its last value.

/// One variable a `.env` file sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its name.
    pub name: String,
    /// Its value, as bytes (Go strings need not be UTF-8).
    pub value: Vec<u8>,
    /// The line its statement starts on (1-based).
    pub line: usize,
}

/// Why a `.env` file is not loaded at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ParseError {
    /// The line of the statement at fault (1-based).
    pub line: usize,
    /// What is wrong, in godotenv's terms.
    pub message: String,
}

/// Parses a `.env` file's bytes into the variables it sets, in the order
/// their last assignment appears; a name godotenv would refuse to set
/// (empty) is left out.
pub fn parse(src: &[u8]) -> Result<Vec<Entry>, ParseError> {
    // `\r\n` is `\n`, before anything else reads the file.
    let crlf = |i: usize| src[i] == b'\r' && src.get(i + 1) == Some(&b'\n');
    let text: Vec<u8> = (0..src.len())
        .filter(|&i| !crlf(i))
        .map(|i| src[i])
        .collect();
    let mut entries: Vec<Entry> = Vec::new();
    let mut rest: &[u8] = &text;
    while let Some(statement) = statement_start(rest) {
        let offset = text.len() - statement.len();
        let line = 1 + text[..offset].iter().filter(|&&b| b == b'\n').count();
        let error = |message: String| ParseError { line, message };
        let (name, after_name) = key_name(statement).map_err(error)?;
        let (value, after_value) = value(after_name, &entries).map_err(error)?;
        entries.retain(|e| e.name != name);
        if !name.is_empty() {
            entries.push(Entry { name, value, line });
        }
        rest = after_value;
    }
    Ok(entries)
}

/// godotenv's `isSpace`: blanks but not line breaks.
fn is_blank(c: char) -> bool {
    matches!(
        c,
        '\t' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{85}' | '\u{a0}'
    )
}

/// The first character of `bytes` as Go's UTF-8 decoding reads it (an
/// invalid byte is U+FFFD of width 1), and its width.
fn first_char(bytes: &[u8]) -> Option<(char, usize)> {
    let c = bytes.utf8_chunks().next()?.valid().chars().next();
    Some(c.map_or(('\u{fffd}', 1), |c| (c, c.len_utf8())))
}

fn trim_start_by(mut bytes: &[u8], pred: fn(char) -> bool) -> &[u8] {
    while let Some((c, width)) = first_char(bytes)
        && pred(c)
    {
        bytes = &bytes[width..];
    }
    bytes
}

/// `getStatementStart`: skips blanks, line breaks and comment lines.
fn statement_start(src: &[u8]) -> Option<&[u8]> {
    // Go's `unicode.IsSpace` is Unicode's White_Space, as Rust's.
    let src = trim_start_by(src, char::is_whitespace);
    if src.is_empty() {
        return None;
    }
    if src[0] != b'#' {
        return Some(src);
    }
    let newline = src.iter().position(|&b| b == b'\n')?;
    statement_start(&src[newline..])
}

/// `locateKeyName`: the name and what follows its `=` or `:`.
fn key_name(src: &[u8]) -> Result<(String, &[u8]), String> {
    let mut src = trim_start_by(src, is_blank);
    if let Some(after) = src.strip_prefix(b"export")
        && first_char(after).is_some_and(|(c, _)| is_blank(c))
    {
        src = trim_start_by(after, is_blank);
    }
    // Up to the separator, byte by byte, each read as the character of
    // that code point.
    let end = src.iter().position(|&b| b == b'=' || b == b':');
    let in_name = |c: char| is_blank(c) || c == '_' || c == '.' || c.is_alphanumeric();
    let mut written = src[..end.unwrap_or(src.len())].iter().map(|&b| b as char);
    if let Some(c) = written.find(|&c| !in_name(c)) {
        return Err(format!(
            "unexpected character {:?} in variable name near {:?}",
            c.to_string(),
            String::from_utf8_lossy(src)
        ));
    }
    if src.is_empty() {
        return Err("zero length string".into());
    }
    // Without a separator the name is empty, and the whole statement is
    // read as its value.
    let (name, rest) = match end {
        Some(i) => (&src[..i], &src[i + 1..]),
        None => (&src[..0], src),
    };
    let name = String::from_utf8_lossy(name);
    let name = name.trim_end_matches(char::is_whitespace).to_owned();
    Ok((name, trim_start_by(rest, is_blank)))
}

/// `extractVarValue`: the value and what follows it.
fn value<'a>(src: &'a [u8], earlier: &[Entry]) -> Result<(Vec<u8>, &'a [u8]), String> {
    let quote = match src.first() {
        Some(&q @ (b'\'' | b'"')) => q,
        _ => return Ok(unquoted(src, earlier)),
    };
    // The first quote not preceded by a backslash ends it.
    let Some(end) = (1..src.len()).find(|&i| src[i] == quote && src[i - 1] != b'\\') else {
        let line_end = src.iter().position(|&b| b == b'\n').unwrap_or(src.len());
        let line = String::from_utf8_lossy(&src[..line_end]);
        return Err(format!("unterminated quoted value {line}"));
    };
    // Quotes trimmed from both ends, the opening one among them.
    let inner = &src[..end];
    let not_quote = |b: &u8| *b != quote;
    let start = inner.iter().position(not_quote).unwrap_or(end);
    let stop = inner.iter().rposition(not_quote).map_or(start, |i| i + 1);
    let mut value = inner[start..stop].to_vec();
    if quote == b'"' {
        value = expand_variables(&expand_escapes(&value), earlier);
    }
    Ok((value, &src[end + 1..]))
}

fn unquoted<'a>(src: &'a [u8], earlier: &[Entry]) -> (Vec<u8>, &'a [u8]) {
    let end_of_line = src
        .iter()
        .position(|&b| b == b'\n' || b == b'\r')
        .unwrap_or(src.len());
    let line = &src[..end_of_line];
    // The last `#` preceded by a blank starts a comment.
    let text = String::from_utf8_lossy(line);
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let end_of_var = chars
        .windows(2)
        .rev()
        .find(|pair| pair[1].1 == '#' && is_blank(pair[0].1))
        .map_or(text.len(), |pair| pair[1].0);
    let value = text[..end_of_var].trim_matches(is_blank).as_bytes();
    (expand_variables(value, earlier), &src[end_of_line..])
}

/// `expandEscapes`: `\n` and `\r`, and a backslash before anything but
/// `$` dropped. Go makes two passes (`\\.`, which does not match a
/// newline, then `\\([^$])`, which does); both meet the same backslashes,
/// so one pass gives the same bytes.
fn expand_escapes(value: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.len());
    let mut i = 0;
    while i < value.len() {
        if value[i] == b'\\'
            && let Some((c, width)) = first_char(&value[i + 1..])
            && c != '$'
        {
            match c {
                'n' => out.push(b'\n'),
                'r' => out.push(b'\r'),
                _ => out.extend_from_slice(&value[i + 1..i + 1 + width]),
            }
            i += 1 + width;
            continue;
        }
        out.push(value[i]);
        i += 1;
    }
    out
}

/// `expandVariables`: godotenv's pattern `(\\)?(\$)(\()?\{?([A-Z0-9_]+)?\}?`,
/// each match replaced by the earlier value of its name, kept without its
/// backslash when escaped, or kept as it is without a name.
fn expand_variables(value: &[u8], earlier: &[Entry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(value.len());
    let mut i = 0;
    while i < value.len() {
        let escaped = value[i] == b'\\' && value.get(i + 1) == Some(&b'$');
        let dollar = if escaped { i + 1 } else { i };
        if value[dollar] != b'$' {
            out.push(value[i]);
            i += 1;
            continue;
        }
        // Each optional part of the pattern taken when it is there.
        let optional = |at: usize, byte: u8| at + usize::from(value.get(at) == Some(&byte));
        let start = optional(dollar + 1, b'(');
        let start = optional(start, b'{');
        let in_name = |b: &&u8| b.is_ascii_uppercase() || b.is_ascii_digit() || **b == b'_';
        let length = value[start..].iter().take_while(in_name).count();
        let name = &value[start..start + length];
        let j = optional(start + name.len(), b'}');
        let matched = &value[i..j];
        if escaped {
            out.extend_from_slice(&matched[1..]);
        } else if !name.is_empty() {
            if let Some(entry) = earlier.iter().find(|e| e.name.as_bytes() == name) {
                out.extend_from_slice(&entry.value);
            }
        } else {
            out.extend_from_slice(matched);
        }
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(text: &str) -> Vec<(String, String, usize)> {
        parse(text.as_bytes())
            .unwrap()
            .into_iter()
            .map(|e| (e.name, String::from_utf8(e.value).unwrap(), e.line))
            .collect()
    }

    fn one(text: &str) -> String {
        let all = vars(text);
        assert_eq!(all.len(), 1, "{text:?}: {all:?}");
        all[0].1.clone()
    }

    #[test]
    fn names_values_and_lines() {
        assert_eq!(
            vars("# comment\n\nA=1\nexport B = two words \r\nC: yaml\n  D=\n"),
            [
                ("A".into(), "1".into(), 3),
                ("B".into(), "two words".into(), 4),
                ("C".into(), "yaml".into(), 5),
                ("D".into(), "".into(), 6),
            ]
        );
        assert_eq!(one("exportX=1"), "1", "no blank: part of the name");
        assert_eq!(vars("exportX=1")[0].0, "exportX");
        assert_eq!(vars("A.b_1=x")[0].0, "A.b_1");
    }

    #[test]
    fn comments_after_unquoted_values() {
        assert_eq!(one("A=1 # note"), "1");
        assert_eq!(one("A=a#b"), "a#b");
        assert_eq!(one("A=a #b #c"), "a #b", "the last blank-# starts it");
        assert_eq!(one("A=\"q\" # note"), "q");
    }

    #[test]
    fn quotes() {
        assert_eq!(one("A='$B \\n x'"), "$B \\n x");
        assert_eq!(one("A=\"a\\nb\\\"c\\$d\\e\""), "a\nb\"c$de");
        assert_eq!(one("A=\"line\nnext\""), "line\nnext");
        assert_eq!(one("A=''"), "");
    }

    #[test]
    fn expansions_read_earlier_values_of_the_same_file() {
        assert_eq!(
            vars("B=x\nA=$B-${B}-\\$B-$lower-${C}")[1].1,
            "x-x-$B-$lower-"
        );
        assert_eq!(vars("B=x\nA='$B'")[1].1, "$B");
        assert_eq!(vars("B=x\nA=\"$B\"")[1].1, "x");
    }

    #[test]
    fn the_last_assignment_wins() {
        assert_eq!(
            vars("A=1\nB=2\nA=3"),
            [("B".into(), "2".into(), 2), ("A".into(), "3".into(), 3)]
        );
    }

    #[test]
    fn a_bad_line_loses_the_whole_file() {
        let e = parse(b"A=1\nnot-a-name=2\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.starts_with("unexpected character \"-\""), "{e}");
        assert!(
            parse(b"A=\"open\n")
                .unwrap_err()
                .message
                .starts_with("unterminated")
        );
        assert!(parse(b"JUSTANAME\nB=1").is_err(), "a line break in a name");
    }

    #[test]
    fn never_panics() {
        for text in [
            &b"\xff=\xfe"[..],
            b"=",
            b"\"",
            b"A=\\",
            b"A=\"\\",
            b"A=$",
            b"A=${",
            b"export",
            b"export ",
            b"\xc2\xa0A=1",
            b"A=\xe2\x80",
        ] {
            let _ = parse(text);
        }
    }
}
