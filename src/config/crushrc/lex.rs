//! Splitting a crushrc into tokens the way the shell does: words after
//! quote removal, the operators that end or join commands, parentheses,
//! and redirections, whose here-document bodies are data, not commands
//! (mvdan.cc/sh's `syntax` parser, which Crush runs crushrc files with,
//! reads them so; an unclosed one is a syntax error there too).

/// A word of a command, after quote removal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Word {
    pub(super) text: String,
    /// Any part of it was quoted: it is no reserved word.
    pub(super) quoted: bool,
    /// It holds an expansion (`$…`, backquotes) outside single quotes:
    /// its value is only known to a shell.
    pub(super) dynamic: bool,
    /// It starts with an unquoted `NAME=`: a variable assignment when it
    /// comes before the command's name.
    pub(super) assignment: bool,
    /// A shell runs code in it that no command of the file shows: a
    /// command or process substitution (also inside another expansion),
    /// or, as a here-document's unquoted delimiter, the body it expands.
    pub(super) runs: bool,
}

#[derive(Debug, PartialEq, Eq)]
pub(super) enum Token {
    /// A word and its line.
    Word(Word, usize),
    /// `;`, `&` or a newline: ends a command.
    End,
    /// `&&`, `||` or `|`: joins commands whose running depends on each other.
    Join,
    Open(usize),
    Close(usize),
    /// A redirection operator (`>`, `2>>`, `<<`, …); its target is the next
    /// word, which is not an argument of the command.
    Redirect(usize),
}

/// What is wrong with a crushrc's shell, and on which line.
pub(super) type SyntaxError = (usize, String);

/// A here-document waiting for its body: the delimiter, whether leading
/// tabs are stripped (`<<-`), and the line it opened on.
type Heredoc = (String, bool, usize);

#[derive(Default)]
struct Lexer {
    chars: Vec<char>,
    at: usize,
    line: usize,
    word: Option<(Word, usize)>,
    tokens: Vec<Token>,
    /// The next word is a here-document's delimiter (`<<-`, and the line).
    delimiter_next: Option<(bool, usize)>,
    /// Here-documents whose bodies start on the next line.
    heredocs: Vec<Heredoc>,
}

pub(super) fn tokenize(text: &str) -> Result<Vec<Token>, SyntaxError> {
    // mvdan.cc/sh's reader turns `\r\n` into `\n` and drops NUL bytes
    // before anything else looks at them, inside quotes and here-documents
    // too.
    let text = text.replace("\r\n", "\n").replace('\0', "");
    let mut lexer = Lexer {
        chars: text.chars().collect(),
        line: 1,
        ..Lexer::default()
    };
    while let Some(c) = lexer.next() {
        lexer.char(c)?;
    }
    lexer.flush();
    if let Some(doc) = lexer.heredocs.first() {
        return Err(unclosed(doc));
    }
    lexer.tokens.push(Token::End);
    Ok(lexer.tokens)
}

fn unclosed((delimiter, _, line): &Heredoc) -> SyntaxError {
    (*line, format!("unclosed here-document `{delimiter}`"))
}

impl Lexer {
    fn next(&mut self) -> Option<char> {
        let c = self.chars.get(self.at).copied();
        self.at += 1;
        c
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    /// Takes `c` when it comes next.
    fn eat(&mut self, c: char) -> bool {
        let next = self.peek(0) == Some(c);
        self.at += usize::from(next);
        next
    }

    fn char(&mut self, c: char) -> Result<(), SyntaxError> {
        match c {
            '\n' => {
                self.push(Token::End);
                self.line += 1;
                self.heredoc_bodies()?;
            }
            ' ' | '\t' | '\r' => self.flush(),
            '#' if self.word.is_none() => self.comment(),
            ';' => self.push(Token::End),
            '&' if self.peek(0) == Some('>') => self.redirect(c),
            '&' | '|' => {
                let joins = self.eat(c) || c == '|';
                self.push(if joins { Token::Join } else { Token::End });
            }
            // A process substitution: a word only a shell can tell.
            '<' | '>' if self.peek(0) == Some('(') => {
                self.plain(c);
                self.substitution(c)?;
            }
            '<' | '>' => self.redirect(c),
            '(' => self.push(Token::Open(self.line)),
            ')' => self.push(Token::Close(self.line)),
            '\\' => match self.next() {
                Some('\n') => self.line += 1,
                Some(escaped) => {
                    let word = self.start();
                    word.text.push(escaped);
                    word.quoted = true;
                }
                None => {}
            },
            '\'' | '"' => self.quote(c)?,
            '$' | '`' => {
                self.plain(c);
                self.substitution(c)?;
            }
            other => self.plain(other),
        }
        Ok(())
    }

    /// Ends the word being read, and pushes `token`.
    fn push(&mut self, token: Token) {
        self.flush();
        self.tokens.push(token);
    }

    /// Skips a comment. A backslash-newline ends it without ending the
    /// line (mvdan.cc/sh reads the pair as a line continuation before it
    /// sees the comment), unless that backslash follows another one.
    fn comment(&mut self) {
        while self.peek(0).is_some_and(|c| c != '\n') {
            self.at += 1;
        }
        let read = &self.chars[..self.at];
        if read.ends_with(&['\\']) && !read.ends_with(&['\\', '\\']) && self.eat('\n') {
            self.line += 1;
        }
    }

    /// After `$`, a backquote or a process substitution's `<`/`>` (already
    /// in the current word): the rest of a `$( )`, `$(( ))`, `${ }`, `( )`
    /// or backquoted substitution, kept whole in the word, whose value only
    /// a shell knows. A `$` before anything else is a plain expansion.
    fn substitution(&mut self, first: char) -> Result<(), SyntaxError> {
        let (open, close) = match (first, self.peek(0)) {
            ('`', _) => ('`', '`'),
            (_, Some('(')) => ('(', ')'),
            ('$', Some('{')) => ('{', '}'),
            _ => return Ok(()),
        };
        self.start().dynamic = true;
        if first != '$' || self.command_follows() {
            self.start().runs = true;
        }
        if open != '`' {
            self.at += 1;
            self.start().text.push(open);
        }
        let (opened, mut depth, mut quote) = (self.line, 1, None);
        while let Some(c) = self.next() {
            self.line += usize::from(c == '\n');
            // Whatever the quotes inside say: inside `"${X:-'…'}"` single
            // quotes quote nothing.
            if c == '`' || (c == '$' && self.command_follows()) {
                self.start().runs = true;
            }
            self.start().text.push(c);
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some('\''), _) => {}
                (_, '\\') => {
                    if let Some(escaped) = self.next() {
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
        Err((opened, format!("`{first}{open}` is never closed")))
    }

    /// Whether a command substitution opens next: `(` but not `((`, an
    /// arithmetic expansion (as mvdan.cc/sh always reads `$((`).
    fn command_follows(&self) -> bool {
        self.peek(0) == Some('(') && self.peek(1) != Some('(')
    }

    fn flush(&mut self) {
        let Some((mut word, line)) = self.word.take() else {
            return;
        };
        if let Some((strip_tabs, at)) = self.delimiter_next.take() {
            // An unquoted delimiter: the body is expanded, and may run
            // commands.
            word.runs |= !word.quoted;
            self.heredocs.push((word.text.clone(), strip_tabs, at));
        }
        self.tokens.push(Token::Word(word, line));
    }

    fn start(&mut self) -> &mut Word {
        let line = self.line;
        &mut self.word.get_or_insert_with(|| (Word::default(), line)).0
    }

    fn plain(&mut self, c: char) {
        let word = self.start();
        word.dynamic |= c == '$' || c == '`';
        // `NAME=`, unquoted, at the start of a word: an assignment.
        word.assignment |= c == '=' && !word.quoted && is_name(&word.text);
        word.text.push(c);
    }

    /// `<`, `>`, `>>`, `<<`, `<<-`, `<<<`, `<&`, `>&`, `<>`, `>|`, `&>`,
    /// `&>>`; digits just before one are its file descriptor, not a word.
    fn redirect(&mut self, first: char) {
        if let Some((word, _)) = &self.word
            && !word.quoted
            && word.text.bytes().all(|b| b.is_ascii_digit())
        {
            self.word = None;
        }
        let heredoc = match first {
            // `<<` opens a here-document (`<<-` strips tabs), `<<<` not.
            '<' if self.eat('<') => (!self.eat('<')).then(|| self.eat('-')),
            '&' => {
                self.eat('>');
                self.eat('>');
                None
            }
            _ => {
                let _ = self.eat('>') || self.eat('&') || self.eat('|');
                None
            }
        };
        self.push(Token::Redirect(self.line));
        self.delimiter_next = heredoc.map(|strip_tabs| (strip_tabs, self.line));
    }

    /// At the start of a line: the bodies of the here-documents opened on
    /// the line before, up to each one's delimiter line.
    fn heredoc_bodies(&mut self) -> Result<(), SyntaxError> {
        for doc in std::mem::take(&mut self.heredocs) {
            loop {
                if self.at >= self.chars.len() {
                    return Err(unclosed(&doc));
                }
                let rest = &self.chars[self.at..];
                let length = rest.iter().position(|&c| c == '\n').unwrap_or(rest.len());
                let text: String = rest[..length].iter().collect();
                self.at += length + 1;
                self.line += 1;
                if text.trim_start_matches(|c| doc.1 && c == '\t') == doc.0 {
                    break;
                }
            }
        }
        Ok(())
    }

    /// A single- or double-quoted part of a word, its opening quote read.
    fn quote(&mut self, close: char) -> Result<(), SyntaxError> {
        let (opened, double) = (self.line, close == '"');
        self.start().quoted = true;
        loop {
            let Some(c) = self.next() else {
                let which = if double { "double" } else { "single" };
                return Err((opened, format!("unterminated {which} quote")));
            };
            match c {
                _ if c == close => return Ok(()),
                '\\' if double => match self.next() {
                    Some('\n') => self.line += 1,
                    Some(e @ ('$' | '`' | '"' | '\\')) => self.start().text.push(e),
                    Some(other) => self.start().text.extend(['\\', other]),
                    None => {}
                },
                '$' | '`' if double => {
                    self.plain(c);
                    self.substitution(c)?;
                }
                c => {
                    self.line += usize::from(c == '\n');
                    self.start().text.push(c);
                }
            }
        }
    }
}

/// A shell variable's name: a letter or `_`, then letters, digits, `_`.
pub(super) fn is_name(text: &str) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    text.bytes().all(word) && text.bytes().next().is_some_and(|b| !b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words of each command, with the line of its first word;
    /// redirections' targets left out.
    fn commands(text: &str) -> Vec<(usize, Vec<String>)> {
        let (mut commands, mut words, mut target) = (Vec::new(), Vec::new(), false);
        for token in tokenize(text).unwrap() {
            match token {
                Token::Word(word, line) if !target => words.push((word.text, line)),
                Token::Word(..) => target = false,
                Token::Redirect(_) => target = true,
                _ if words.is_empty() => {}
                _ => commands.push((words[0].1, words.drain(..).map(|(t, _)| t).collect())),
            }
        }
        commands
    }

    fn cmd(line: usize, words: &[&str]) -> (usize, Vec<String>) {
        (line, words.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn splits_lines_semicolons_and_comments() {
        let text = "# air-gapped laptop\noption provider-auto-update false # trailing\n\noption a 1; option b 2\n";
        assert_eq!(
            commands(text),
            [
                cmd(2, &["option", "provider-auto-update", "false"]),
                cmd(4, &["option", "a", "1"]),
                cmd(4, &["option", "b", "2"])
            ]
        );
    }

    #[test]
    fn quotes_and_escapes_group_words() {
        assert_eq!(
            commands(r#"option "provider-auto-update" 'fal''se' a\ b "x\"y" 'a#b' c#d"#),
            [cmd(
                1,
                &[
                    "option",
                    "provider-auto-update",
                    "false",
                    "a b",
                    "x\"y",
                    "a#b",
                    "c#d"
                ]
            )]
        );
    }

    #[test]
    fn continuation_joins_lines_and_keeps_first_line() {
        assert_eq!(
            commands("option \\\n  provider-auto-update \\\n  off\noption x"),
            [
                cmd(1, &["option", "provider-auto-update", "off"]),
                cmd(4, &["option", "x"])
            ]
        );
    }

    #[test]
    fn multi_line_quotes_count_lines() {
        assert_eq!(
            commands("model 'a\nb'\noption x"),
            [cmd(1, &["model", "a\nb"]), cmd(3, &["option", "x"])]
        );
    }

    #[test]
    fn redirections_and_here_document_bodies_are_not_words() {
        assert_eq!(
            commands("option provider-auto-update false 2>/dev/null >>log &>all\n"),
            [cmd(1, &["option", "provider-auto-update", "false"])]
        );
        assert_eq!(commands("echo 2 > x"), [cmd(1, &["echo", "2"])]);
        assert_eq!(
            commands(
                "cat <<EOF\noption a\nEOF\ncat <<-'END' >/dev/null\n\toption b 1\n\tEND\noption x 1 <<<word\noption y 2"
            ),
            [
                cmd(1, &["cat"]),
                cmd(4, &["cat"]),
                cmd(7, &["option", "x", "1"]),
                cmd(8, &["option", "y", "2"])
            ]
        );
    }

    /// mvdan.cc/sh reads `\r\n` as `\n` everywhere and drops NUL bytes:
    /// a file saved with Windows line endings reads as the same file.
    #[test]
    fn crlf_and_nul_bytes_read_as_mvdan_reads_them() {
        assert_eq!(
            commands("option \\\r\n  provider-auto-update false\r\noption x 1\r\n"),
            [
                cmd(1, &["option", "provider-auto-update", "false"]),
                cmd(3, &["option", "x", "1"])
            ]
        );
        assert_eq!(
            commands("cat <<'EOF'\r\noption a 1\r\nEOF\r\noption b 2\r\n"),
            [cmd(1, &["cat"]), cmd(4, &["option", "b", "2"])]
        );
        assert_eq!(
            commands("option provider-auto-update fal\0se\n"),
            [cmd(1, &["option", "provider-auto-update", "false"])]
        );
        // A lone carriage return is a blank outside quotes.
        assert_eq!(commands("option a\r1"), [cmd(1, &["option", "a", "1"])]);
    }

    /// `$( )`, `$(( ))`, `${ }` and backquotes are one word, whose value
    /// only a shell knows, and what is inside them is no command of the
    /// file; one that runs commands (not an arithmetic expansion) marks
    /// the word, and so does an unquoted here-document's delimiter.
    #[test]
    fn substitutions_are_one_dynamic_word() {
        let words = |text: &str| -> Vec<(String, bool, bool)> {
            let tokens = tokenize(text).unwrap().into_iter();
            let words = tokens.filter_map(|t| match t {
                Token::Word(w, _) => Some((w.text, w.dynamic, w.runs)),
                _ => None,
            });
            words.collect()
        };
        let word = |text: &str, dynamic, runs| (text.to_string(), dynamic, runs);
        assert_eq!(
            words("a `x; option b 1` $((1 + (2))) ${X:-$(y)} $V '$(q)' <(echo)"),
            [
                word("a", false, false),
                word("`x; option b 1`", true, true),
                word("$((1 + (2)))", true, false),
                word("${X:-$(y)}", true, true),
                word("$V", true, false),
                word("$(q)", false, false),
                word("<(echo)", true, true),
            ]
        );
        assert!(words("echo \"${X:-'$(option x)'}\"")[1].2);
        assert_eq!(
            words("cat <<EOF\nb\nEOF\ncat <<E\"O\"F\nb\nEOF\n"),
            [
                word("cat", false, false),
                word("EOF", false, true),
                word("cat", false, false),
                word("EOF", false, false),
            ]
        );
    }

    /// mvdan.cc/sh ends a comment at a backslash-newline and reads on, so
    /// the next line continues the command before the comment.
    #[test]
    fn a_comment_ending_in_a_backslash_joins_the_next_line() {
        assert_eq!(
            commands("option a 1 # note \\\noption b 2\n# own line \\\noption c 3\n"),
            [
                cmd(1, &["option", "a", "1", "option", "b", "2"]),
                cmd(4, &["option", "c", "3"])
            ]
        );
        assert_eq!(
            commands("option a 1 # two \\\\\noption b 2\n"),
            [cmd(1, &["option", "a", "1"]), cmd(2, &["option", "b", "2"])]
        );
    }

    #[test]
    fn syntax_errors_name_the_line() {
        let error = |text: &str| tokenize(text).unwrap_err();
        assert_eq!(
            error("option a\noption 'b\n"),
            (2, "unterminated single quote".into())
        );
        assert_eq!(error("\n\"x").0, 2);
        assert_eq!(
            error("cat <<EOF\nbody\n"),
            (1, "unclosed here-document `EOF`".into())
        );
        assert_eq!(error("x\necho $(a"), (2, "`$(` is never closed".into()));
    }
}
