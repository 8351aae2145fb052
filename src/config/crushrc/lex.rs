//! Splitting a crushrc into tokens the way the shell does: words after
//! quote removal, the operators that end or join commands, parentheses,
//! and redirections, whose here-document bodies are data, not commands
//! (mvdan.cc/sh's `syntax` parser, which Crush runs crushrc files with,
//! reads them so; an unclosed one is a syntax error there too).

use std::iter::Peekable;
use std::str::Chars;

use super::{Runs, SyntaxError, Word};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Token {
    Word(Word, usize),
    /// `;`, newline or `&`: ends a command.
    End,
    /// `&&`, `||` or `|`: joins commands whose running depends on each other.
    Join,
    Open(usize),
    Close(usize),
    /// A redirection operator (`>`, `2>>`, `<<`, …); its target is the next
    /// word, which is not an argument of the command.
    Redirect(usize),
}

/// A here-document waiting for the end of its line.
struct Heredoc {
    delimiter: String,
    /// `<<-`: leading tabs are stripped from the body's lines.
    strip_tabs: bool,
    line: usize,
}

struct Lexer<'a> {
    chars: Peekable<Chars<'a>>,
    line: usize,
    word: Option<(Word, usize)>,
    tokens: Vec<Token>,
    /// The next word ends a `<<` and is a here-document's delimiter.
    delimiter_next: Option<(bool, usize)>,
    heredocs: Vec<Heredoc>,
}

pub(super) fn tokenize(text: &str) -> Result<Vec<Token>, SyntaxError> {
    // mvdan.cc/sh's reader turns `\r\n` into `\n` and drops NUL bytes
    // before anything else looks at them, inside quotes and here-documents
    // too.
    let text = text.replace("\r\n", "\n").replace('\0', "");
    let mut lexer = Lexer {
        chars: text.chars().peekable(),
        line: 1,
        word: None,
        tokens: Vec::new(),
        delimiter_next: None,
        heredocs: Vec::new(),
    };
    while let Some(c) = lexer.chars.next() {
        lexer.char(c)?;
    }
    lexer.flush();
    if let Some(doc) = lexer.heredocs.first() {
        return Err(unclosed(doc));
    }
    lexer.tokens.push(Token::End);
    Ok(lexer.tokens)
}

fn unclosed(doc: &Heredoc) -> SyntaxError {
    let message = format!("unclosed here-document `{}`", doc.delimiter);
    SyntaxError::new(doc.line, message)
}

impl Lexer<'_> {
    fn char(&mut self, c: char) -> Result<(), SyntaxError> {
        match c {
            '\n' => {
                self.flush();
                self.tokens.push(Token::End);
                self.line += 1;
                self.heredoc_bodies()?;
            }
            ' ' | '\t' | '\r' => self.flush(),
            '#' if self.word.is_none() => self.comment(),
            ';' => {
                self.flush();
                self.tokens.push(Token::End);
            }
            '&' if self.chars.peek() == Some(&'>') => self.redirect(c),
            '&' | '|' => {
                self.flush();
                let doubled = self.chars.next_if_eq(&c).is_some();
                let joins = doubled || c == '|';
                self.tokens
                    .push(if joins { Token::Join } else { Token::End });
            }
            // Process substitution: a word only a shell can tell.
            '<' | '>' if self.chars.peek() == Some(&'(') => {
                self.plain(c);
                self.start().dynamic = true;
                self.substitution(c)?;
            }
            '<' | '>' => self.redirect(c),
            '(' | ')' => {
                self.flush();
                let line = self.line;
                self.tokens.push(if c == '(' {
                    Token::Open(line)
                } else {
                    Token::Close(line)
                });
            }
            '\\' => match self.chars.next() {
                Some('\n') => self.line += 1,
                Some(escaped) => {
                    let w = self.start();
                    w.text.push(escaped);
                    w.quoted = true;
                }
                None => {}
            },
            '\'' => self.single_quote()?,
            '"' => self.double_quote()?,
            '$' | '`' => {
                self.plain(c);
                self.substitution(c)?;
            }
            other => self.plain(other),
        }
        Ok(())
    }

    /// Skips a comment. A backslash-newline ends it without ending the
    /// line (mvdan.cc/sh reads the pair as a line continuation before it
    /// sees the comment), unless that backslash follows another one.
    fn comment(&mut self) {
        let (mut last, mut before) = (None, None);
        while let Some(&c) = self.chars.peek() {
            if c == '\n' {
                break;
            }
            (before, last) = (last, Some(c));
            self.chars.next();
        }
        if last == Some('\\') && before != Some('\\') && self.chars.next_if_eq(&'\n').is_some() {
            self.line += 1;
        }
    }

    /// After `$`, `` ` `` or a process substitution's `<`/`>` (already in
    /// the current word): the rest of a `$( )`, `$(( ))`, `${ }`, `( )` or
    /// backquoted substitution, kept whole in the word, whose value only a
    /// shell knows. A `$` before anything else is a plain expansion. One
    /// that runs commands (a command or process substitution, or one
    /// inside an arithmetic or parameter expansion, quoted or not) marks
    /// the word ([`Runs::Substitution`]).
    fn substitution(&mut self, first: char) -> Result<(), SyntaxError> {
        let close = match (first, self.chars.peek()) {
            ('`', _) => '`',
            (_, Some('(')) => ')',
            ('$', Some('{')) => '}',
            _ => return Ok(()),
        };
        if first != '$' || self.command_follows() {
            self.start().runs = Some(Runs::Substitution);
        }
        let opened = self.line;
        let open = if close == '`' {
            '`'
        } else {
            self.chars.next().unwrap_or(close)
        };
        if open != '`' {
            self.start().text.push(open);
        }
        let mut depth = 1;
        let mut quote = None;
        while let Some(c) = self.chars.next() {
            if c == '\n' {
                self.line += 1;
            }
            // Whatever the quotes inside say: inside `"${X:-'…'}"` single
            // quotes quote nothing.
            if c == '`' || (c == '$' && self.command_follows()) {
                self.start().runs = Some(Runs::Substitution);
            }
            self.start().text.push(c);
            match (quote, c) {
                (Some('\''), '\'') | (Some('"'), '"') => quote = None,
                (Some('\''), _) => {}
                (_, '\\') => {
                    if let Some(escaped) = self.chars.next() {
                        self.start().text.push(escaped);
                    }
                }
                (None, '\'' | '"') if close != '`' => quote = Some(c),
                (None, c) if c == close => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                (None, c) if c == open && close != '`' => depth += 1,
                _ => {}
            }
        }
        Err(SyntaxError::new(
            opened,
            format!("`{first}{open}` is never closed"),
        ))
    }

    /// Whether the next characters open a command substitution, `(` but
    /// not `((` (an arithmetic expansion, as mvdan.cc/sh always reads
    /// `$((`).
    fn command_follows(&self) -> bool {
        let mut ahead = self.chars.clone();
        ahead.next() == Some('(') && ahead.next() != Some('(')
    }

    fn flush(&mut self) {
        if let Some((mut w, l)) = self.word.take() {
            if let Some((strip_tabs, line)) = self.delimiter_next.take() {
                // An unquoted delimiter: the body is expanded, and may run
                // commands.
                if !w.quoted {
                    w.runs = Some(Runs::HereDocument);
                }
                self.heredocs.push(Heredoc {
                    delimiter: w.text.clone(),
                    strip_tabs,
                    line,
                });
            }
            self.tokens.push(Token::Word(w, l));
        }
    }

    fn start(&mut self) -> &mut Word {
        let line = self.line;
        &mut self.word.get_or_insert_with(|| (Word::default(), line)).0
    }

    fn plain(&mut self, c: char) {
        let w = self.start();
        if c == '$' || c == '`' {
            w.dynamic = true;
        }
        // `NAME=`, unquoted, at the start of a word: an assignment.
        if c == '=' && !w.quoted && !w.assignment && is_name(&w.text) {
            w.assignment = true;
        }
        w.text.push(c);
    }

    /// `<`, `>`, `>>`, `<<`, `<<-`, `<<<`, `<&`, `>&`, `<>`, `>|`, `&>`,
    /// `&>>`; digits just before one are its file descriptor, not a word.
    fn redirect(&mut self, first: char) {
        if let Some((w, _)) = &self.word
            && !w.quoted
            && !w.text.is_empty()
            && w.text.bytes().all(|b| b.is_ascii_digit())
        {
            self.word = None;
        }
        self.flush();
        let line = self.line;
        let mut next = |c: char| self.chars.next_if_eq(&c).is_some();
        let heredoc = match first {
            // `<<` opens a here-document (`<<-` strips tabs), `<<<` not.
            '<' if next('<') => (!next('<')).then(|| next('-')),
            // `&>` (its `>` known to follow), `&>>`.
            '&' => {
                next('>');
                next('>');
                None
            }
            _ => {
                let _ = next('>') || next('&') || next('|');
                None
            }
        };
        self.delimiter_next = heredoc.map(|strip| (strip, line));
        self.tokens.push(Token::Redirect(line));
    }

    /// At the start of a line: the bodies of the here-documents opened on
    /// the line before, up to each one's delimiter line.
    fn heredoc_bodies(&mut self) -> Result<(), SyntaxError> {
        for doc in std::mem::take(&mut self.heredocs) {
            loop {
                if self.chars.peek().is_none() {
                    return Err(unclosed(&doc));
                }
                let text: String = self.chars.by_ref().take_while(|c| *c != '\n').collect();
                self.line += 1;
                let text = text.trim_start_matches(|c| doc.strip_tabs && c == '\t');
                if text == doc.delimiter {
                    break;
                }
            }
        }
        Ok(())
    }

    fn single_quote(&mut self) -> Result<(), SyntaxError> {
        let opened = self.line;
        self.start().quoted = true;
        while let Some(c) = self.chars.next() {
            if c == '\'' {
                return Ok(());
            }
            self.line += usize::from(c == '\n');
            self.start().text.push(c);
        }
        Err(SyntaxError::new(opened, "unterminated single quote"))
    }

    fn double_quote(&mut self) -> Result<(), SyntaxError> {
        let opened = self.line;
        self.start().quoted = true;
        while let Some(c) = self.chars.next() {
            match c {
                '"' => return Ok(()),
                '\\' => match self.chars.next() {
                    Some('\n') => self.line += 1,
                    Some(e @ ('$' | '`' | '"' | '\\')) => self.start().text.push(e),
                    Some(other) => self.start().text.extend(['\\', other]),
                    None => {}
                },
                '$' | '`' => {
                    let w = self.start();
                    w.dynamic = true;
                    w.text.push(c);
                    self.substitution(c)?;
                }
                c => {
                    self.line += usize::from(c == '\n');
                    self.start().text.push(c);
                }
            }
        }
        Err(SyntaxError::new(opened, "unterminated double quote"))
    }
}

/// A shell variable's name: a letter or `_`, then letters, digits, `_`.
pub(super) fn is_name(text: &str) -> bool {
    let mut bytes = text.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}
