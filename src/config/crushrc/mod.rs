//! Reading a crushrc without evaluating the shell.
//!
//! A crushrc is a shell script of configuration commands, which Crush runs
//! (mvdan.cc/sh's interpreter, `internal/shellconfig/load.go`). This reader
//! splits it into simple commands the way the shell does (quotes,
//! backslashes, comments, `;`, line continuations, redirections and
//! here-documents, [`lex`]) and hands back the ones that run
//! unconditionally, up to an `exit`, after which Crush runs nothing.
//! Commands whose effect depends on evaluating the shell — inside `if`,
//! `for`, `while`, `case`, `{ }`, `( )` or a function, joined by `&&`, `||`
//! or `|`, `source`/`.`, run through another command (`command option …`)
//! or after a variable assignment (`VAR=x option …`), or with `$`
//! expansions in their words — are never guessed at: they are reported as
//! skipped, with their line. So is every command that makes the shell run
//! code this reader never sees ([`shell_only`]: `eval`, another file, a
//! command or process substitution, an unquoted here-document), which
//! may set anything. What the commands set is [`options`]' job.

mod lex;
pub(crate) mod options;
mod redact;

use lex::Token;
use redact::shown_without_secrets;

/// A word of a command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Word {
    /// The word after quote removal.
    pub text: String,
    /// Whether any part was quoted (so it cannot be a reserved word).
    pub quoted: bool,
    /// Whether it holds an expansion (`$…` or a backquote) outside single
    /// quotes: its value is only known to a shell.
    pub dynamic: bool,
    /// Whether it starts with an unquoted `NAME=`: a variable assignment
    /// when it comes before the command's name.
    pub assignment: bool,
    /// What in it a shell runs as commands, unseen here: a substitution,
    /// or, as a here-document's unquoted delimiter, the body it expands.
    pub runs: Option<Runs>,
}

/// Code a shell runs that is in no command this reader sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runs {
    /// A command or process substitution (`$( )`, backquotes, `<( )`),
    /// also inside another expansion.
    Substitution,
    /// An unquoted here-document: its body is expanded, substitutions and
    /// all.
    HereDocument,
}

/// A simple command that runs unconditionally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// Line of its first word (1-based).
    pub line: usize,
    /// Its words, redirections left out; never empty.
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
    /// The command as written (words joined by spaces), its secrets
    /// shown as `***` (`redact`).
    pub command: String,
    /// Why it was skipped.
    pub reason: String,
    /// The `option` keys that keep the network off ([`options::NETWORK_KEYS`])
    /// it may turn off, run by a shell: going out counts it as off.
    pub turns_off: Vec<&'static str>,
    /// Whether what it turns off may be turned off at any time up to the
    /// end of the file (a function's body, run when it is called; `eval`
    /// or `trap` text, a substitution, another file, which may define
    /// one): counted after every line of the file, not at its own.
    pub any_time: bool,
}

/// An `exit` that ends the file for every command after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit {
    /// Its line.
    pub line: usize,
    /// Its status word, when it has one (`exit 1`).
    pub status: Option<String>,
}

/// What a crushrc holds.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Script {
    /// Commands that run unconditionally, in order.
    pub commands: Vec<Command>,
    /// Configuration commands that were skipped.
    pub skipped: Vec<Skipped>,
    /// The `exit` that ends the file, when one runs unconditionally.
    pub exit: Option<Exit>,
}

/// The script is not valid shell.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct SyntaxError {
    /// The line where the problem is (1-based).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl SyntaxError {
    fn new(line: usize, message: impl Into<String>) -> SyntaxError {
        let message = message.into();
        SyntaxError { line, message }
    }
}

/// Commands that configure Crush: skipping one of them is worth a warning;
/// skipping `echo` inside an `if` is not (`internal/shellconfig/register.go`).
pub(crate) const CONFIG_COMMANDS: &[&str] = &[
    "option",
    "provider",
    "model",
    "mcp",
    "lsp",
    "hook",
    "permissions",
];

/// Commands that run the words after them as another command: a config
/// command behind one runs only through a shell.
const RUNNERS: &[&str] = &[
    "command", "builtin", "exec", "eval", "env", "time", "nice", "nohup", "xargs", "sudo",
];

/// Commands that run text as commands: `eval` its words, `trap` its first
/// at the script's end, `alias` a name's (with `shopt -s expand_aliases`);
/// mvdan.cc/sh parses each again, as Crush's config builtins run there.
const EVALUATORS: &[&str] = &["eval", "trap", "alias"];

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

/// Where parsing is.
#[derive(Default)]
struct Parser {
    script: Script,
    blocks: Vec<(Block, usize)>,
    words: Vec<(Word, usize)>,
    after_join: bool,
    /// The next word is a redirection's target, opened at this line.
    target_next: Option<usize>,
    /// An `exit` that only the shell can tell runs, at this line.
    maybe_exited: Option<usize>,
    /// The next word names a function (`function NAME`), not a command.
    function_name_next: bool,
    /// A redirection's target of the command being read runs code
    /// (`cat <<EOF`, `> "$(x)"`), and its line.
    redirect_runs: Option<(Runs, usize)>,
}

/// Parses a crushrc.
pub fn parse(text: &str) -> Result<Script, SyntaxError> {
    let mut p = Parser::default();
    for token in lex::tokenize(text)? {
        if let Some(line) = p.target_next.take() {
            let Token::Word(word, _) = token else {
                return Err(SyntaxError::new(line, "a redirection without a target"));
            };
            if let Some(runs) = word.runs {
                p.redirect_runs.get_or_insert((runs, line));
            }
            continue;
        }
        match token {
            Token::Word(word, line) => p.word(word, line)?,
            Token::Redirect(line) => p.target_next = Some(line),
            Token::Open(line) => {
                if !p.in_case() {
                    p.blocks.push((Block::Subshell, line));
                }
                // `name()` defines a function: the name is not a command.
                p.words.clear();
            }
            Token::Close(line) => {
                if !p.words.is_empty() {
                    p.emit(p.after_join);
                }
                if !p.in_case() {
                    p.close(Block::Subshell, ")", line)?;
                }
                p.words.clear();
            }
            Token::Join | Token::End => {
                let is_join = token == Token::Join;
                if p.words.is_empty()
                    && let Some((runs, line)) = p.redirect_runs
                {
                    // A command of redirections alone (`<<EOF`): the shell
                    // still performs them.
                    let text = match runs {
                        Runs::HereDocument => "<<",
                        Runs::Substitution => "<",
                    };
                    let text = text.into();
                    p.words.push((
                        Word {
                            text,
                            ..Word::default()
                        },
                        line,
                    ));
                }
                if p.words.is_empty() {
                    // `a &&` may continue on the next line: the join holds.
                    p.after_join |= is_join;
                } else {
                    p.emit(is_join || p.after_join);
                    p.after_join = is_join;
                }
            }
        }
    }
    match p.blocks.last() {
        Some((block, line)) => Err(SyntaxError::new(
            *line,
            format!("{} is never closed", block.name()),
        )),
        None => Ok(p.script),
    }
}

impl Parser {
    fn in_case(&self) -> bool {
        self.blocks.last().is_some_and(|(b, _)| *b == Block::Case)
    }

    fn close(&mut self, kind: Block, keyword: &str, line: usize) -> Result<(), SyntaxError> {
        match self.blocks.last() {
            Some((open, _)) if *open == kind => {
                self.blocks.pop();
                Ok(())
            }
            _ => Err(SyntaxError::new(
                line,
                format!("`{keyword}` without a matching opening"),
            )),
        }
    }

    fn word(&mut self, word: Word, line: usize) -> Result<(), SyntaxError> {
        if std::mem::take(&mut self.function_name_next) {
            return Ok(());
        }
        // Reserved words count only at the start of a command and
        // unquoted, as in sh.
        let reserved = if self.words.is_empty() && !word.quoted {
            word.text.as_str()
        } else {
            ""
        };
        let in_case = self.in_case();
        match reserved {
            "if" if !in_case => self.blocks.push((Block::If, line)),
            "while" | "until" | "for" | "select" if !in_case => {
                self.blocks.push((Block::Loop, line))
            }
            "case" if !in_case => self.blocks.push((Block::Case, line)),
            "{" if !in_case => self.blocks.push((Block::Group, line)),
            "then" | "else" | "elif" | "do" if !in_case => {}
            "fi" if !in_case => self.close(Block::If, "fi", line)?,
            "done" if !in_case => self.close(Block::Loop, "done", line)?,
            "}" if !in_case => self.close(Block::Group, "}", line)?,
            "esac" => self.close(Block::Case, "esac", line)?,
            // Bash's `function NAME`: its body, the block that follows,
            // runs only when it is called.
            "function" if !in_case => self.function_name_next = true,
            // `! command` runs the command; only its status is inverted.
            "!" if !in_case => {}
            _ => self.words.push((word, line)),
        }
        Ok(())
    }

    /// Sorts the words gathered so far out as one command (`joined` to
    /// another by `&&`, `||` or `|`): run unconditionally, skipped (with
    /// why), or the file's end.
    fn emit(&mut self, joined: bool) {
        let command = Command {
            line: self.words[0].1,
            words: self.words.drain(..).map(|(w, _)| w).collect(),
        };
        let redirect_runs = self.redirect_runs.take().map(|(runs, _)| runs);
        let in_subshell = self.blocks.iter().any(|(b, _)| *b == Block::Subshell);
        // Crush never runs what follows an `exit`; one in a subshell ends
        // the subshell, never the file.
        if self.script.exit.is_some() || (in_subshell && command.words[0].text == "exit") {
            return;
        }
        let reason = if let Some((block, opened)) = self.blocks.last() {
            Some(format!("inside {} opened at line {opened}", block.name()))
        } else if joined {
            Some("joined to another command by &&, || or |".to_string())
        } else {
            self.maybe_exited.map(|line| {
                format!("after the `exit` at line {line}, which only a shell can tell runs")
            })
        };
        let (texts, words) = (command.texts(), &command.words);
        let name = texts[0];
        if name == "exit" {
            match reason {
                None => {
                    let status = texts.get(1).map(|s| s.to_string());
                    self.script.exit = Some(Exit {
                        line: command.line,
                        status,
                    });
                }
                Some(_) => drop(self.maybe_exited.get_or_insert(command.line)),
            }
            return;
        }
        // The command's name is the first word that is no assignment; a
        // command that runs the words after it makes any of them one.
        let first = words
            .iter()
            .position(|w| !w.assignment)
            .unwrap_or(words.len());
        let runner = words
            .get(first)
            .is_some_and(|w| !w.dynamic && RUNNERS.contains(&w.text.as_str()));
        let names = match runner {
            true => first..words.len(),
            false => first..(first + 1).min(words.len()),
        };
        let configures = CONFIG_COMMANDS.contains(&name) || name == "source" || name == ".";
        let plain_off = may_turn_off(words, names.clone());
        let code = shell_only(words, names, redirect_runs, self.in_case());
        let hidden = if first > 0 && first < words.len() && CONFIG_COMMANDS.contains(&texts[first])
        {
            Some("a variable assignment before it is applied only by a shell".to_string())
        } else {
            let runs_config = texts
                .iter()
                .skip(first + 1)
                .any(|t| CONFIG_COMMANDS.contains(t));
            (runner && runs_config)
                .then(|| format!("`{}` runs it, which only a shell does", texts[first]))
        };
        // Code this reader never sees may set anything. A command shown
        // only because it runs code shows its assignments' names and its
        // name alone: its arguments are that code, which may hold
        // anything (`eval "provider add x --api-key …"`).
        let turns_off = match code {
            Some(_) => options::NETWORK_KEYS.map(|(k, _)| k).to_vec(),
            None => plain_off.clone(),
        };
        let command_text =
            if code.is_some() && !configures && plain_off.is_empty() && hidden.is_none() {
                let shown = words
                    .iter()
                    .enumerate()
                    .map(|(i, w)| match w.text.split_once('=') {
                        Some((name, _)) if i < first => format!("{name}=***"),
                        _ if i == first && w.runs.is_none() => shown_without_secrets(&[&w.text]),
                        _ => "***".into(),
                    });
                shown.collect::<Vec<_>>().join(" ")
            } else {
                shown_without_secrets(&texts)
            };
        let reason = match reason {
            Some(_) if !configures && turns_off.is_empty() => return,
            Some(reason) => reason,
            None => match hidden {
                Some(hidden) => hidden,
                None if (CONFIG_COMMANDS.contains(&name) || !plain_off.is_empty())
                    && words.iter().any(|w| w.dynamic) =>
                {
                    "its value depends on a shell expansion ($ or `)".into()
                }
                None => match (code.clone(), mistyped(name)) {
                    (Some(why), _) => why,
                    (None, Some(meant)) => format!(
                        "`{name}` is none of the commands Crush's crushrc knows; did you mean `{meant}`?"
                    ),
                    (None, None) => return self.script.commands.push(command),
                },
            },
        };
        // A group or subshell may be a function's body, which runs when
        // it is called, after any line.
        let in_body = self
            .blocks
            .iter()
            .any(|(b, _)| matches!(b, Block::Group | Block::Subshell));
        self.script.skipped.push(Skipped {
            line: command.line,
            command: command_text,
            reason,
            turns_off,
            any_time: code.is_some() || in_body,
        });
    }
}

/// The command of Crush's crushrc that `name`, none of them, is a typo of:
/// two letters swapped, or, for a name of six letters or more, one or two
/// letters wrong, left out or added (one for five). A program a script
/// runs (`echo`, `less`, `scp`) is far from all of them.
fn mistyped(name: &str) -> Option<&'static str> {
    CONFIG_COMMANDS.iter().copied().find(|meant| {
        let allowed = match meant.len() {
            0..=4 => 0,
            5 => 1,
            _ => 2,
        };
        let distance = strsim::osa_distance(name, meant);
        let swapped = distance == 1 && strsim::hamming(name, meant) == Ok(2);
        (1..=allowed).contains(&distance) || swapped
    })
}

/// The keys of [`options::NETWORK_KEYS`] that `words`, a command a shell
/// would run, may turn off: `option <key> <value>` where the value is not
/// a literal `true` (a bare flag, an empty value and `true` can only turn
/// it on), the `option` word being at one of `names`, where the command's
/// name may be; a key only a shell knows (`option $K false`) may be
/// either, and so may a command name only a shell knows (`$OPT
/// provider-auto-update false`).
fn may_turn_off(words: &[Word], names: std::ops::Range<usize>) -> Vec<&'static str> {
    let mut keys = Vec::new();
    for at in names {
        let (name, Some(key)) = (&words[at], words.get(at + 1)) else {
            continue;
        };
        let is_option = name.text == "option" && !name.dynamic;
        let on_only = words.get(at + 2).is_none_or(|v| {
            !v.dynamic && (v.text.is_empty() || options::parse_bool(&v.text) == Some(true))
        });
        if (!is_option && !name.dynamic) || on_only {
            continue;
        }
        for (option, _) in options::NETWORK_KEYS {
            let named = if key.dynamic {
                is_option
            } else {
                key.text == option
            };
            if named && !keys.contains(&option) {
                keys.push(option);
            }
        }
    }
    keys
}

/// Why the command of `words` makes the shell run code this reader never
/// sees, which may set anything: a word at one of `names` (where the
/// command's name may be) that runs text or another file as commands, or
/// names a script by its path (Crush's shell runs one without `#!`
/// itself, its config builtins included: `internal/shell/dispatch.go`,
/// `isPathPrefixed`: `./`, `../`, `/`, on Windows `C:\`, `C:/`, `\`, and
/// `~/` once expanded); a command or process substitution in any word or
/// redirection (`redirect_runs`), an unquoted here-document, or a command
/// name only a shell knows (`$E`, which may be `eval`), but in a `case`
/// block, where the words gathered may be its subject or a pattern
/// (`$HOST)`).
fn shell_only(
    words: &[Word],
    names: std::ops::Range<usize>,
    redirect_runs: Option<Runs>,
    in_case: bool,
) -> Option<String> {
    for word in &words[names.clone()] {
        let (name, bytes) = (word.text.as_str(), word.text.as_bytes());
        let drive = bytes.len() >= 3
            && bytes[0].is_ascii_alphabetic()
            && bytes[1] == b':'
            && matches!(bytes[2], b'\\' | b'/');
        if let Some(evaluator) = EVALUATORS.iter().find(|e| **e == name) {
            return Some(format!(
                "`{evaluator}` runs text as commands, which only a shell does"
            ));
        } else if name == "source" || name == "." {
            return Some("another file is read only by a shell".into());
        } else if drive
            || ["./", "../", "/", "~/", "\\"]
                .iter()
                .any(|p| name.starts_with(p))
        {
            return Some(
                "it runs a script by its path, which Crush's shell runs itself when it has no #! line"
                    .into(),
            );
        }
    }
    if words.iter().any(|w| w.runs.is_some()) || redirect_runs == Some(Runs::Substitution) {
        return Some(
            "a command substitution ($( ), backquotes or <( )) runs commands, which only a shell does"
                .into(),
        );
    }
    if redirect_runs == Some(Runs::HereDocument) {
        return Some(
            "an unquoted here-document's body is expanded by a shell, which runs the commands it substitutes"
                .into(),
        );
    }
    let named_by_shell = words[names].iter().any(|w| w.dynamic && !w.assignment);
    (named_by_shell && !in_case)
        .then(|| "its command's name depends on a shell expansion ($ or `)".into())
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

    /// Each skipped command's line and reason.
    fn reasons(script: &Script) -> Vec<(usize, &str)> {
        script
            .skipped
            .iter()
            .map(|s| (s.line, s.reason.as_str()))
            .collect()
    }

    fn cmd(line: usize, words: &[&str]) -> (usize, Vec<String>) {
        (line, words.iter().map(|s| s.to_string()).collect())
    }

    /// F3: every form a secret takes on a skipped line is hidden, and the
    /// line still shows its command word.
    #[test]
    fn a_skipped_lines_secrets_are_hidden_in_every_form() {
        let shown = |line: &str| {
            let script = parse(line).unwrap();
            assert_eq!(script.skipped.len(), 1, "{line}");
            script.skipped[0].command.clone()
        };
        for (line, expected) in [
            (
                "OPENAI_API_KEY=sk-RK1 provider add openai",
                "OPENAI_API_KEY=*** provider add openai",
            ),
            (
                r#"if true; then provider add x --base-url "https://h/v1?key=RK3"; fi"#,
                "provider add x --base-url https://h/v1?***",
            ),
            (
                r#"K=1 mcp add m --url "https://h/sse?token=RK9""#,
                "K=*** mcp add m --url https://h/sse?***",
            ),
            (
                r#"K=1 provider add x --extra-body '{"token":"RK4"}' --provider-options '{"api_key":"RK5"}'"#,
                "K=*** provider add x --extra-body *** --provider-options ***",
            ),
            (
                "K=1 mcp add m --type stdio --command tool --args --token RK6",
                "K=*** mcp add m --type stdio --command *** --args *** ***",
            ),
            (
                "K=1 provider add x --api-key RK7 --name Mine --disable true --api-key=RK8",
                "K=*** provider add x --api-key *** --name Mine --disable true --api-key=***",
            ),
            (
                "K=1 provider add x --extra-header X-Token RK10 --extra-header 'Authorization: Bearer RK11' v",
                "K=*** provider add x --extra-header X-Token *** --extra-header *** ***",
            ),
            (
                "K=1 mcp add m --env TOKEN RK12 --header Authorization RK13 --oauth-client-secret RK14",
                "K=*** mcp add m --env TOKEN *** --header Authorization *** --oauth-client-secret ***",
            ),
            (
                "K=1 provider add x --base-url http://u:RK15@h/ --base-url https://RK16@h/#RK17",
                "K=*** provider add x --base-url http://***@h/ --base-url https://***@h/#***",
            ),
            // Crush stops at a flag it does not know: nothing after one is
            // read, so nothing after one is shown.
            (
                "K=1 provider add x --name --api-key RK18 --token RK19",
                "K=*** provider add x --name --api-key *** *** ***",
            ),
            (
                "K=1 provider add x -pRK20 RK21",
                "K=*** provider add x *** ***",
            ),
            (
                "env TOKEN=RK22 provider add x --base-url h/v1?key=RK23",
                "env TOKEN=*** provider add x --base-url ***",
            ),
        ] {
            let shown = shown(line);
            assert_eq!(shown, expected, "{line}");
            assert!(!shown.contains("RK"), "{line}: {shown}");
        }
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
        assert_eq!(
            reasons(&script),
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
    fn here_document_bodies_are_data() {
        let text = "cat <<EOF\noption provider-auto-update false\nEOF\ncat <<-'END' >/dev/null\n\toption a 1\n\tEND\noption after 1\n";
        let script = parse(text).unwrap();
        assert_eq!(
            script
                .commands
                .iter()
                .map(|c| (c.line, c.texts().join(" ")))
                .collect::<Vec<_>>(),
            [(4, "cat".to_string()), (7, "option after 1".to_string())]
        );
        // An unquoted one's body is expanded, and may run commands: the
        // command is skipped, never its body read as commands.
        assert_eq!(
            reasons(&script),
            [(
                1,
                "an unquoted here-document's body is expanded by a shell, which runs the commands it substitutes"
            )]
        );
        assert_eq!(
            parse("cat <<EOF\nbody\n").unwrap_err().to_string(),
            "line 1: unclosed here-document `EOF`"
        );
        assert_eq!(
            commands("option x 1 <<<word\noption y 2"),
            [cmd(1, &["option", "x", "1"]), cmd(2, &["option", "y", "2"])]
        );
    }

    #[test]
    fn redirections_are_not_words() {
        assert_eq!(
            commands("option provider-auto-update false 2>/dev/null >>log &>all\n"),
            [cmd(1, &["option", "provider-auto-update", "false"])]
        );
        assert_eq!(commands("echo 2 > x"), [cmd(1, &["echo", "2"])]);
        assert!(parse("option a >").is_err());
    }

    #[test]
    fn exit_ends_the_file() {
        let script = parse("option a 1\nexit\noption provider-auto-update false\n").unwrap();
        assert_eq!(script.commands.len(), 1);
        assert!(script.skipped.is_empty());
        assert_eq!(
            script.exit,
            Some(Exit {
                line: 2,
                status: None
            })
        );
        assert_eq!(
            parse("exit 3").unwrap().exit.unwrap().status.as_deref(),
            Some("3")
        );
        // A syntax error after it is still one: the file is parsed whole.
        assert!(parse("exit\nif true; then\n").is_err());
        // An exit only a shell can tell runs: what follows is not guessed.
        let script = parse("[ -n \"$CI\" ] && exit\noption provider-auto-update false\n").unwrap();
        assert_eq!(script.exit, None);
        assert_eq!(
            script.skipped[0].reason,
            "after the `exit` at line 1, which only a shell can tell runs"
        );
    }

    #[test]
    fn assignments_and_runners_before_a_config_command_are_skipped() {
        let script = parse(
            "VAR=x option provider-auto-update false\ncommand option default-providers false\nenv A=1 option x\nX=1\nA=\"b c\" echo hi\n\"X\"=1 option y\n",
        )
        .unwrap();
        assert_eq!(
            reasons(&script),
            [
                (
                    1,
                    "a variable assignment before it is applied only by a shell"
                ),
                (2, "`command` runs it, which only a shell does"),
                (3, "`env` runs it, which only a shell does"),
            ]
        );
        assert_eq!(
            script.commands.iter().map(|c| c.line).collect::<Vec<_>>(),
            [4, 5, 6],
            "a quoted name is no assignment: `\"X\"=1` is a command"
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
            commands("cat <<EOF\r\noption a 1\r\nEOF\r\noption b 2\r\n"),
            [cmd(4, &["option", "b", "2"])]
        );
        assert_eq!(
            commands("option provider-auto-update fal\0se\n"),
            [cmd(1, &["option", "provider-auto-update", "false"])]
        );
        // A lone carriage return is a blank outside quotes.
        assert_eq!(commands("option a\r1"), [cmd(1, &["option", "a", "1"])]);
    }

    /// `$( )`, `$(( ))`, `${ }` and backquotes are one word, whose value
    /// only a shell knows: a config command with one is told, never
    /// dropped, and what is inside them is no command of the file. A
    /// process substitution runs commands: skipped too.
    #[test]
    fn substitutions_are_one_dynamic_word() {
        let script =
            parse("option provider-auto-update $(echo false)\noption a `x; option b 1`\necho $((1 + (2)))\noption c ${X:-$(y)} z\ncat <(echo) >(cat)\n")
                .unwrap();
        assert_eq!(
            reasons(&script),
            [
                (1, "its value depends on a shell expansion ($ or `)"),
                (2, "its value depends on a shell expansion ($ or `)"),
                (4, "its value depends on a shell expansion ($ or `)"),
                (
                    5,
                    "a command substitution ($( ), backquotes or <( )) runs commands, which only a shell does"
                ),
            ]
        );
        assert_eq!(
            script.skipped[0].command,
            "option provider-auto-update $(echo false)"
        );
        assert_eq!(
            script.commands.iter().map(|c| c.line).collect::<Vec<_>>(),
            [3]
        );
    }

    /// Every form of code only a shell runs is skipped, turning both keys
    /// off at any time, and shown by its name alone where its words are
    /// that code; the same text quoted, commented or in a quoted
    /// here-document is data.
    #[test]
    fn code_only_a_shell_runs_is_skipped_and_turns_both_keys_off() {
        for (text, shown) in [
            ("eval \"option provider-auto-update false\"", "eval ***"),
            (
                "command eval \"provider add x --api-key K\"",
                "command *** ***",
            ),
            ("trap 'option a b' EXIT", "trap *** ***"),
            ("alias o='option provider-auto-update false'", "alias ***"),
            (". ./other", ". ./other"),
            ("source other x", "source other x"),
            ("./other", "./other"),
            ("~/bin/setup --token K", "~/bin/setup *** ***"),
            ("/opt/x", "/opt/x"),
            (": \"$(option provider-auto-update false)\"", ": ***"),
            ("x=$(option provider-auto-update false)", "x=***"),
            ("A=1 B=`x`", "A=*** B=***"),
            ("test -n \"$(option x)\"", "test *** ***"),
            ("export X=\"$(option x)\"", "export ***"),
            ("echo ${X:-$(option x)}", "echo ***"),
            ("echo \"${X:-'$(option x)'}\"", "echo ***"),
            ("echo $((1 + $(option x)))", "echo ***"),
            ("cat <(option x)", "cat ***"),
            ("echo x > \"$(option x)\"", "echo ***"),
            ("cat <<EOF\nbody\nEOF", "cat"),
            ("cat <<-EOF\n\tbody\n\tEOF", "cat"),
            ("<<EOF\n$(option x)\nEOF", "<<"),
            ("$E \"option provider-auto-update false\"", "$E ***"),
            ("if x; then eval y; fi", "eval ***"),
        ] {
            let script = parse(text).unwrap();
            assert_eq!(script.skipped.len(), 1, "{text}: {script:?}");
            let skipped = &script.skipped[0];
            assert_eq!(skipped.command, shown, "{text}");
            assert_eq!(
                skipped.turns_off,
                ["provider-auto-update", "default-providers"],
                "{text}"
            );
            assert!(skipped.any_time, "{text}");
            assert!(script.commands.is_empty(), "{text}");
        }
        for text in [
            "echo '$(option x)' '`y`' 'eval'",
            "# eval x $(y) `z`",
            "echo $((1 + 2)) ${X:-y} $X eval source . ./x",
            "cat <<'EOF'\n$(option x)\nEOF",
            "cat <<\"EOF\"\n`x`\nEOF",
            "cat <<\\EOF\n$(x)\nEOF",
            "cat <<E\"O\"F\n$(x)\nEOF",
            "cat <<<'$(x)'",
            "case $HOST in\n  $OTHER) echo x ;;\nesac",
            "exit\neval x",
        ] {
            let script = parse(text).unwrap();
            assert!(script.skipped.is_empty(), "{text}: {:?}", script.skipped);
        }
    }

    /// Bash's `function name { … }` defines a function, as `name() { … }`
    /// does; `! command` runs the command (only its status is inverted).
    #[test]
    fn function_keyword_and_negation() {
        let script = parse(
            "function f { option provider-auto-update false; }\nfunction g() (\n  option a 1\n)\nf\n! option default-providers false\n",
        )
        .unwrap();
        assert_eq!(
            reasons(&script),
            [
                (1, "inside a { } group or function opened at line 1"),
                (3, "inside a ( ) subshell or function opened at line 2"),
            ]
        );
        assert_eq!(
            commands("! option default-providers false\n"),
            [cmd(1, &["option", "default-providers", "false"])]
        );
        assert_eq!(commands("'!' x"), [cmd(1, &["!", "x"])]);
    }

    /// An `exit` in a subshell ends the subshell, never the file.
    #[test]
    fn exit_in_a_subshell_does_not_end_the_file() {
        let script = parse("(exit)\n( if x; then exit 1; fi )\noption a 1\n").unwrap();
        assert_eq!(script.exit, None);
        assert!(script.skipped.is_empty(), "{:?}", script.skipped);
        assert_eq!(
            script.commands.last().unwrap().texts(),
            ["option", "a", "1"]
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
    fn never_panics_on_odd_input() {
        for text in [
            "\\",
            "'",
            "\"\\",
            "((",
            "))",
            "case",
            "esac",
            "&&&",
            "|;|",
            "{ }",
            "\u{0}",
            "$(",
            "#",
            "<<",
            "<<-",
            "<<<",
            "2>",
            "&>",
            "&>>",
            "cat <<E\nE",
            "cat <<E",
            "<<E\n",
            "exit",
            "exit 1;",
            "A= option",
            "=x",
            "cat <<'E' <<F\nE\nF\n",
            "option x <",
            "> y",
        ] {
            let _ = parse(text);
        }
    }

    #[test]
    fn a_typo_of_a_config_command_is_found_and_a_program_is_not() {
        for (typo, meant) in [
            ("optoin", "option"),
            ("opiton", "option"),
            ("provder", "provider"),
            ("modle", "model"),
            ("mpc", "mcp"),
            ("lps", "lsp"),
            ("permisions", "permissions"),
        ] {
            assert_eq!(mistyped(typo), Some(meant), "{typo}");
        }
        for program in ["echo", "less", "scp", "look", "ls", "export", "option"] {
            assert_eq!(mistyped(program), None, "{program}");
        }
    }
}
