//! Reading a crushrc without evaluating the shell.
//!
//! A crushrc is a POSIX shell script of configuration commands. This reader
//! splits it into simple commands the way sh does (quotes, backslashes,
//! comments, `;`, line continuations) and hands back the ones that run
//! unconditionally. Commands whose effect depends on evaluating the shell —
//! inside `if`, `for`, `while`, `case`, `{ }`, `( )` or a function, joined by
//! `&&`, `||` or `|`, `source`/`.`, or with `$` expansions in their words —
//! are never guessed at: they are reported as skipped, with their line.

use std::fmt;

/// A word of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The word after quote removal.
    pub text: String,
    /// Whether any part was quoted (so it cannot be a reserved word).
    pub quoted: bool,
    /// Whether it holds an expansion (`$…` or a backquote) outside single
    /// quotes: its value is only known to a shell.
    pub dynamic: bool,
}

/// A simple command that runs unconditionally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// Line of its first word (1-based).
    pub line: usize,
    /// Its words; never empty.
    pub words: Vec<Word>,
}

impl Command {
    /// The command's words as plain text.
    pub fn texts(&self) -> Vec<&str> {
        self.words.iter().map(|w| w.text.as_str()).collect()
    }
}

/// A command that was not honoured, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Line of its first word.
    pub line: usize,
    /// The command as written (words joined by spaces).
    pub command: String,
    /// Why it was skipped.
    pub reason: String,
}

/// What a crushrc holds.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Script {
    /// Commands that run unconditionally, in order.
    pub commands: Vec<Command>,
    /// Configuration commands that were skipped.
    pub skipped: Vec<Skipped>,
}

/// The script is not valid shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// The line where the problem is (1-based).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Commands that configure Crush: skipping one of them is worth a warning;
/// skipping `echo` inside an `if` is not.
const CONFIG_COMMANDS: &[&str] = &[
    "option",
    "provider",
    "model",
    "mcp",
    "lsp",
    "hook",
    "permissions",
];

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(Word, usize),
    /// `;`, newline or `&`: ends a command.
    End,
    /// `&&`, `||` or `|`: joins commands whose running depends on each other.
    Join,
    Open(usize),
    Close(usize),
}

fn tokenize(text: &str) -> Result<Vec<Token>, SyntaxError> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    let mut line = 1;
    let mut word: Option<(Word, usize)> = None;
    let flush = |word: &mut Option<(Word, usize)>, tokens: &mut Vec<Token>| {
        if let Some((w, l)) = word.take() {
            tokens.push(Token::Word(w, l));
        }
    };
    let start = |word: &mut Option<(Word, usize)>, line: usize| -> usize {
        word.get_or_insert_with(|| {
            (
                Word {
                    text: String::new(),
                    quoted: false,
                    dynamic: false,
                },
                line,
            )
        });
        line
    };
    while let Some(c) = chars.next() {
        match c {
            '\n' => {
                flush(&mut word, &mut tokens);
                tokens.push(Token::End);
                line += 1;
            }
            ' ' | '\t' | '\r' => flush(&mut word, &mut tokens),
            '#' if word.is_none() => {
                while chars.peek().is_some_and(|&c| c != '\n') {
                    chars.next();
                }
            }
            ';' => {
                flush(&mut word, &mut tokens);
                tokens.push(Token::End);
            }
            '&' | '|' => {
                flush(&mut word, &mut tokens);
                if chars.peek() == Some(&c) {
                    chars.next();
                    tokens.push(Token::Join);
                } else if c == '|' {
                    tokens.push(Token::Join);
                } else {
                    tokens.push(Token::End);
                }
            }
            '(' => {
                flush(&mut word, &mut tokens);
                tokens.push(Token::Open(line));
            }
            ')' => {
                flush(&mut word, &mut tokens);
                tokens.push(Token::Close(line));
            }
            '\\' => match chars.next() {
                Some('\n') => line += 1,
                Some(escaped) => {
                    start(&mut word, line);
                    let (w, _) = word.as_mut().expect("started");
                    w.text.push(escaped);
                    w.quoted = true;
                }
                None => {}
            },
            '\'' => {
                let opened = start(&mut word, line);
                let (w, _) = word.as_mut().expect("started");
                w.quoted = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => {
                            if c == '\n' {
                                line += 1;
                            }
                            w.text.push(c);
                        }
                        None => {
                            return Err(SyntaxError {
                                line: opened,
                                message: "unterminated single quote".into(),
                            });
                        }
                    }
                }
            }
            '"' => {
                let opened = start(&mut word, line);
                let (w, _) = word.as_mut().expect("started");
                w.quoted = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some('\n') => line += 1,
                            Some(e @ ('$' | '`' | '"' | '\\')) => w.text.push(e),
                            Some(other) => {
                                w.text.push('\\');
                                w.text.push(other);
                            }
                            None => {}
                        },
                        Some(c) => {
                            if c == '\n' {
                                line += 1;
                            }
                            if c == '$' || c == '`' {
                                w.dynamic = true;
                            }
                            w.text.push(c);
                        }
                        None => {
                            return Err(SyntaxError {
                                line: opened,
                                message: "unterminated double quote".into(),
                            });
                        }
                    }
                }
            }
            other => {
                start(&mut word, line);
                let (w, _) = word.as_mut().expect("started");
                if other == '$' || other == '`' {
                    w.dynamic = true;
                }
                w.text.push(other);
            }
        }
    }
    flush(&mut word, &mut tokens);
    tokens.push(Token::End);
    Ok(tokens)
}

/// A block the shell would have to evaluate, opened at `line`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    If,
    Loop,
    Case,
    Group,
    Subshell,
}

impl Block {
    fn name(self) -> &'static str {
        match self {
            Block::If => "an if block",
            Block::Loop => "a loop",
            Block::Case => "a case block",
            Block::Group => "a { } group or function",
            Block::Subshell => "a ( ) subshell or function",
        }
    }
}

/// Parses a crushrc.
pub fn parse(text: &str) -> Result<Script, SyntaxError> {
    let tokens = tokenize(text)?;
    let mut script = Script::default();
    let mut blocks: Vec<(Block, usize)> = Vec::new();
    let mut words: Vec<(Word, usize)> = Vec::new();
    let mut after_join = false;

    let close =
        |blocks: &mut Vec<(Block, usize)>, kind: Block, keyword: &str, line: usize| match blocks
            .last()
        {
            Some((open, _)) if *open == kind => {
                blocks.pop();
                Ok(())
            }
            _ => Err(SyntaxError {
                line,
                message: format!("`{keyword}` without a matching opening"),
            }),
        };

    for token in tokens {
        match token {
            Token::Word(word, line) => {
                // Reserved words count only at the start of a command and
                // unquoted, as in sh.
                let reserved = if words.is_empty() && !word.quoted {
                    word.text.as_str()
                } else {
                    ""
                };
                let in_case = blocks.last().is_some_and(|(b, _)| *b == Block::Case);
                match reserved {
                    "if" if !in_case => blocks.push((Block::If, line)),
                    "while" | "until" | "for" | "select" if !in_case => {
                        blocks.push((Block::Loop, line))
                    }
                    "case" if !in_case => blocks.push((Block::Case, line)),
                    "{" if !in_case => blocks.push((Block::Group, line)),
                    "then" | "else" | "elif" | "do" if !in_case => {}
                    "fi" if !in_case => close(&mut blocks, Block::If, "fi", line)?,
                    "done" if !in_case => close(&mut blocks, Block::Loop, "done", line)?,
                    "}" if !in_case => close(&mut blocks, Block::Group, "}", line)?,
                    "esac" => close(&mut blocks, Block::Case, "esac", line)?,
                    _ => words.push((word, line)),
                }
            }
            Token::Open(line) => {
                if !blocks.last().is_some_and(|(b, _)| *b == Block::Case) {
                    blocks.push((Block::Subshell, line));
                }
                // `name()` defines a function: the name is not a command.
                words.clear();
            }
            Token::Close(line) => {
                if !words.is_empty() {
                    emit(&mut script, &mut words, &blocks, after_join);
                }
                match blocks.last() {
                    Some((Block::Case, _)) => {} // a case pattern
                    _ => close(&mut blocks, Block::Subshell, ")", line)?,
                }
                words.clear();
            }
            Token::Join | Token::End => {
                let is_join = token == Token::Join;
                if words.is_empty() {
                    // `a &&` may continue on the next line: the join holds.
                    after_join |= is_join;
                } else {
                    emit(&mut script, &mut words, &blocks, is_join || after_join);
                    after_join = is_join;
                }
            }
        }
    }
    if let Some((block, line)) = blocks.last() {
        return Err(SyntaxError {
            line: *line,
            message: format!("{} is never closed", block.name()),
        });
    }
    Ok(script)
}

/// Hands the words gathered so far to [`classify`] as one command.
fn emit(
    script: &mut Script,
    words: &mut Vec<(Word, usize)>,
    blocks: &[(Block, usize)],
    joined: bool,
) {
    let command = Command {
        line: words[0].1,
        words: words.drain(..).map(|(w, _)| w).collect(),
    };
    let reason = if let Some((block, opened)) = blocks.last() {
        Some(format!("inside {} opened at line {opened}", block.name()))
    } else if joined {
        Some("joined to another command by &&, || or |".to_string())
    } else {
        None
    };
    classify(script, command, reason);
}

fn classify(script: &mut Script, command: Command, reason: Option<String>) {
    let name = command.words[0].text.as_str();
    let written = command.texts().join(" ");
    let skip = |reason: String| Skipped {
        line: command.line,
        command: written.clone(),
        reason,
    };
    if let Some(reason) = reason {
        if CONFIG_COMMANDS.contains(&name) || name == "source" || name == "." {
            script.skipped.push(skip(reason));
        }
        return;
    }
    if name == "source" || name == "." {
        script
            .skipped
            .push(skip("another file is read only by a shell".into()));
    } else if CONFIG_COMMANDS.contains(&name) && command.words.iter().any(|w| w.dynamic) {
        script.skipped.push(skip(
            "its value depends on a shell expansion ($ or `)".into(),
        ));
    } else {
        script.commands.push(command);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(text: &str) -> Vec<(usize, Vec<String>)> {
        parse(text)
            .unwrap()
            .commands
            .iter()
            .map(|c| (c.line, c.texts().iter().map(|s| s.to_string()).collect()))
            .collect()
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
    fn compound_statements_are_skipped_with_their_line() {
        let text = "\
option keep 1
if [ -n \"$CI\" ]; then
  option provider-auto-update false
else option provider-auto-update true
fi
for x in a b; do option loop $x; done
case $HOST in
  laptop) option provider-auto-update false ;;
esac
{ option grouped 1; }
setup() {
  option in-function 1
}
( option subshell 1 )
option after 1
";
        let script = parse(text).unwrap();
        let kept: Vec<_> = script
            .commands
            .iter()
            .map(|c| (c.line, c.texts().join(" ")))
            .collect();
        assert_eq!(
            kept,
            [
                (1, "option keep 1".to_string()),
                (15, "option after 1".to_string())
            ]
        );
        let skipped: Vec<_> = script
            .skipped
            .iter()
            .map(|s| (s.line, s.reason.as_str()))
            .collect();
        assert_eq!(
            skipped,
            [
                (3, "inside an if block opened at line 2"),
                (4, "inside an if block opened at line 2"),
                (6, "inside a loop opened at line 6"),
                (8, "inside a case block opened at line 7"),
                (10, "inside a { } group or function opened at line 10"),
                (12, "inside a { } group or function opened at line 11"),
                (14, "inside a ( ) subshell or function opened at line 14"),
            ]
        );
    }

    #[test]
    fn source_joins_and_expansions_are_skipped() {
        let text = "source ~/.crushrc.local\n. ./other\ntest -n x && option a 1\noption b $B\noption c \"$C\"\noption d '$literal'\necho hi | cat\n";
        let script = parse(text).unwrap();
        let skipped: Vec<_> = script
            .skipped
            .iter()
            .map(|s| (s.line, s.command.as_str()))
            .collect();
        assert_eq!(
            skipped,
            [
                (1, "source ~/.crushrc.local"),
                (2, ". ./other"),
                (3, "option a 1"),
                (4, "option b $B"),
                (5, "option c $C")
            ]
        );
        assert_eq!(
            script.commands.last().unwrap().texts(),
            ["option", "d", "$literal"]
        );
    }

    #[test]
    fn quoted_reserved_words_are_plain_words() {
        assert_eq!(
            commands("'if' x\noption fi"),
            [cmd(1, &["if", "x"]), cmd(2, &["option", "fi"])]
        );
    }

    #[test]
    fn syntax_errors_name_the_line() {
        assert_eq!(
            parse("option a\noption 'b\n").unwrap_err().to_string(),
            "line 2: unterminated single quote"
        );
        assert_eq!(parse("\n\"x").unwrap_err().line, 2);
        assert_eq!(
            parse("if true; then\noption a\n").unwrap_err().to_string(),
            "line 1: an if block is never closed"
        );
        assert_eq!(
            parse("option a\nfi\n").unwrap_err().to_string(),
            "line 2: `fi` without a matching opening"
        );
        assert!(parse("done").is_err());
        assert!(parse(")").is_err());
    }

    #[test]
    fn never_panics_on_odd_input() {
        for text in [
            "\\", "'", "\"\\", "((", "))", "case", "esac", "&&&", "|;|", "{ }", "\u{0}", "$(", "#",
        ] {
            let _ = parse(text);
        }
    }
}
