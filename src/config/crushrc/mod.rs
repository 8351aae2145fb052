//! Reading a crushrc without evaluating the shell.
//!
//! A crushrc is a shell script of configuration commands, which Crush runs
//! (mvdan.cc/sh's interpreter, `internal/shellconfig/load.go`). This reader
//! splits it into simple commands the way the shell does (quotes,
//! backslashes, comments, `;`, line continuations, redirections and
//! here-documents, [`lex`]) and applies the ones that run
//! unconditionally, up to an `exit`, after which Crush runs nothing, by
//! Crush's rules: `option` (`internal/shellconfig/options.go`) for the
//! keys read here, and `provider add|remove hyper` for the Hyper key.
//!
//! Commands whose effect depends on evaluating the shell — inside `if`,
//! `for`, `while`, `case`, `{ }`, `( )` or a function, joined by `&&`, `||`
//! or `|`, `source`/`.`, run through another command (`command option …`)
//! or after a variable assignment (`VAR=x option …`), or with `$`
//! expansions in their words — are never guessed at: they are told as
//! skipped, with their line. So is every command that makes the shell run
//! code this reader never sees ([`shell_only`]: `eval`, another file, a
//! command or process substitution, an unquoted here-document), which
//! may set anything. What a skipped command may turn off counts as off
//! (the safe side: going out needs every reading to say on).

mod lex;
mod redact;

use std::ops::Range;
use std::path::{Path, PathBuf};

use super::merge::{Node, Src};
use super::{ConfigError, OptionLine, Warning};
use lex::{SyntaxError, Token, Word};

/// Commands that configure Crush: skipping one of them is worth a warning;
/// skipping `echo` inside an `if` is not (`internal/shellconfig/register.go`).
const CONFIG_COMMANDS: [&str; 7] = [
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
const RUNNERS: [&str; 10] = [
    "command", "builtin", "exec", "eval", "env", "time", "nice", "nohup", "xargs", "sudo",
];

/// Commands that run text as commands: `eval` its words, `trap` its first
/// at the script's end, `alias` a name's (with `shopt -s expand_aliases`);
/// mvdan.cc/sh parses each again, as Crush's config builtins run there.
const EVALUATORS: [&str; 3] = ["eval", "trap", "alias"];

/// Whether `key` is one of Crush v0.90's option keys (`optionSpecs`, by
/// kind, and `ui`, `reset`, `attribution-…`, handled apart): any other
/// makes Crush refuse to start.
// A match rather than `matches!`: one arm a kind, as rustfmt keeps them.
#[allow(clippy::match_like_matches_macro)]
fn is_option_key(key: &str) -> bool {
    match key {
        "debug" | "debug-lsp" | "auto-lsp" | "progress" => true,
        "metrics" | "auto-summarize" | "provider-auto-update" | "default-providers" => true,
        "notifications" | "data-directory" | "initialize-as" => true,
        "context-path" | "global-context-path" | "skill-path" | "disable-skill" => true,
        "ui" | "reset" | "attribution-trailer-style" | "attribution-generated-with" => true,
        _ => false,
    }
}

/// The keys whose `false` keeps a start from going out, and the field of
/// `options` each is stored in, negated.
const NETWORK_KEYS: [(&str, &str); 2] = [
    ("provider-auto-update", "disable_provider_auto_update"),
    ("default-providers", "disable_default_providers"),
];

/// Where the Hyper key Crush sends is set.
const HYPER_KEY: [&str; 3] = ["providers", "hyper", "api_key"];

/// A block the shell would have to evaluate.
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

/// One change a command makes to the object Crush's builder makes of the
/// file: whether it may take effect at any time up to the file's end,
/// where it came from, the path of object keys it sets, and the value
/// (`None` removes the key).
type Set = (bool, Src, Vec<&'static str>, Option<Node>);

/// Where reading is.
#[derive(Default)]
struct Reader {
    path: PathBuf,
    file: usize,
    blocks: Vec<(Block, usize)>,
    /// The words of the command being read, each with its line.
    words: Vec<(Word, usize)>,
    after_join: bool,
    /// The next word is a redirection's target, opened at this line.
    target_next: Option<usize>,
    /// The next word names a function (`function NAME`), not a command.
    function_name_next: bool,
    /// A redirection of the command being read runs code (`cat <<EOF`,
    /// `> "$(x)"`), at this line.
    redirect_runs: Option<usize>,
    /// An `exit` that runs unconditionally has ended the file.
    exited: bool,
    /// An `exit` that only the shell can tell runs, at this line.
    maybe_exited: Option<usize>,
    sets: Vec<Set>,
    warnings: Vec<Warning>,
    /// The first line that sets a key read here to a value Crush refuses.
    refused: Option<(usize, String)>,
}

/// A crushrc's part of the merge, as file `file`: the object Crush's
/// builder makes of its commands, and its warnings. Without a command
/// that sets something, no `options` at all, as Crush's builder leaves it
/// out.
pub fn read(path: &Path, text: &str, file: usize) -> Result<(Node, Vec<Warning>), ConfigError> {
    let error = |(line, message): SyntaxError| ConfigError {
        path: path.to_owned(),
        line: Some(line),
        message,
    };
    let mut reader = Reader {
        path: path.to_owned(),
        file,
        ..Reader::default()
    };
    for token in lex::tokenize(text).map_err(error)? {
        reader.token(token).map_err(error)?;
    }
    if let Some((block, line)) = reader.blocks.last() {
        return Err(error((*line, format!("{} is never closed", block.name()))));
    }
    if let Some(refused) = reader.refused {
        return Err(error(refused));
    }
    // What may take effect at any time, after every line; on one line,
    // what a shell may do after what runs unconditionally.
    reader
        .sets
        .sort_by_key(|(any_time, src, ..)| (*any_time, src.line, src.unevaluated));
    let mut node = Node::Object(Vec::new());
    for (_, _, key, value) in reader.sets {
        put(&mut node, &key, value);
    }
    Ok((node, reader.warnings))
}

impl Reader {
    fn token(&mut self, token: Token) -> Result<(), SyntaxError> {
        if let Some(line) = self.target_next.take() {
            let Token::Word(word, _) = token else {
                return Err((line, "a redirection without a target".into()));
            };
            if word.runs {
                self.redirect_runs.get_or_insert(line);
            }
            return Ok(());
        }
        match token {
            Token::Word(word, line) => self.word(word, line)?,
            Token::Redirect(line) => self.target_next = Some(line),
            Token::Open(line) => {
                if !self.in_case() {
                    self.blocks.push((Block::Subshell, line));
                }
                // `name()` defines a function: the name is not a command.
                self.words.clear();
            }
            Token::Close(line) => {
                if !self.words.is_empty() {
                    self.command(self.after_join);
                }
                if !self.in_case() {
                    self.close(Block::Subshell, ")", line)?;
                }
            }
            Token::Join | Token::End => {
                let join = token == Token::Join;
                if let (true, Some(line)) = (self.words.is_empty(), self.redirect_runs) {
                    // A command of redirections alone (`<<EOF`): the shell
                    // still performs them.
                    let mut word = Word::default();
                    word.text.push_str("<<");
                    self.words.push((word, line));
                }
                if self.words.is_empty() {
                    // `a &&` may continue on the next line: the join holds.
                    self.after_join |= join;
                } else {
                    self.command(join || self.after_join);
                    self.after_join = join;
                }
            }
        }
        Ok(())
    }

    fn in_case(&self) -> bool {
        self.blocks.last().is_some_and(|(b, _)| *b == Block::Case)
    }

    fn close(&mut self, kind: Block, keyword: &str, line: usize) -> Result<(), SyntaxError> {
        match self.blocks.pop() {
            Some((open, _)) if open == kind => Ok(()),
            _ => Err((line, format!("`{keyword}` without a matching opening"))),
        }
    }

    fn word(&mut self, word: Word, line: usize) -> Result<(), SyntaxError> {
        if std::mem::take(&mut self.function_name_next) {
            return Ok(());
        }
        // Reserved words count only at the start of a command and
        // unquoted, as in sh; in a case block, only its end.
        let reserved = match self.words.is_empty() && !word.quoted {
            true => word.text.as_str(),
            false => "",
        };
        match reserved {
            "esac" => self.close(Block::Case, "esac", line)?,
            _ if self.in_case() => self.words.push((word, line)),
            "if" => self.blocks.push((Block::If, line)),
            "while" | "until" | "for" | "select" => self.blocks.push((Block::Loop, line)),
            "case" => self.blocks.push((Block::Case, line)),
            "{" => self.blocks.push((Block::Group, line)),
            // `! command` runs the command; only its status is inverted.
            "then" | "else" | "elif" | "do" | "!" => {}
            "fi" => self.close(Block::If, "fi", line)?,
            "done" => self.close(Block::Loop, "done", line)?,
            "}" => self.close(Block::Group, "}", line)?,
            // Bash's `function NAME`: its body, the block that follows,
            // runs only when it is called.
            "function" => self.function_name_next = true,
            _ => self.words.push((word, line)),
        }
        Ok(())
    }

    /// Sorts the words gathered so far out as one command (`joined` to
    /// another by `&&`, `||` or `|`): applied when it runs
    /// unconditionally, the file's end, or skipped and told, counted as
    /// setting what a shell running it may set.
    fn command(&mut self, joined: bool) {
        let line = self.words[0].1;
        let words: Vec<Word> = self.words.drain(..).map(|(w, _)| w).collect();
        let redirect_runs = self.redirect_runs.take().is_some();
        let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        let in_subshell = self.blocks.iter().any(|(b, _)| *b == Block::Subshell);
        // Crush never runs what follows an `exit`; one in a subshell ends
        // the subshell, never the file.
        if self.exited || (in_subshell && texts[0] == "exit") {
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
        if texts[0] == "exit" {
            if reason.is_some() {
                self.maybe_exited.get_or_insert(line);
            } else if let Some(status) = texts.get(1).filter(|s| **s != "0") {
                let status = status.to_string();
                self.tell(line, OptionLine::FailingExit { status });
            }
            self.exited |= reason.is_none();
            return;
        }
        // The command's name is the first word that is no assignment; a
        // command that runs the words after it makes any of them one.
        let first = words.iter().position(|w| !w.assignment);
        let first = first.unwrap_or(words.len());
        let runner =
            (words.get(first)).is_some_and(|w| !w.dynamic && RUNNERS.contains(&texts[first]));
        let names = match runner {
            true => first..words.len(),
            false => first..(first + 1).min(words.len()),
        };
        let configures = texts[names.clone()]
            .iter()
            .any(|t| CONFIG_COMMANDS.contains(t) || *t == "source" || *t == ".");
        let code = shell_only(&words, names.clone(), redirect_runs, self.in_case());
        let plain_off = may_turn_off(&words, names);
        // Code this reader never sees may set anything.
        let off = match code {
            Some(_) => NETWORK_KEYS.map(|(key, _)| key).to_vec(),
            None => plain_off.clone(),
        };
        let reason = match reason {
            Some(_) if !configures && off.is_empty() => return,
            Some(reason) => reason,
            None if first > 0 && configures => {
                "a variable assignment before it is applied only by a shell".into()
            }
            None if runner && configures => {
                format!("`{}` runs it, which only a shell does", texts[first])
            }
            None if (configures || !plain_off.is_empty()) && words.iter().any(|w| w.dynamic) => {
                "its value depends on a shell expansion ($ or `)".into()
            }
            None => match (&code, mistyped(texts[0])) {
                (Some(why), _) => why.clone(),
                (None, Some(meant)) => format!(
                    "`{}` is none of the commands Crush's crushrc knows; did you mean `{meant}`?",
                    texts[0]
                ),
                (None, None) => return self.apply(line, &texts),
            },
        };
        // A command told only because it runs code shows its assignments'
        // names and its name alone: its arguments are that code, which
        // may hold anything (`eval "provider add x --api-key …"`).
        let command = match (&code, configures) {
            (Some(_), false) => (words.iter().enumerate())
                .map(|(i, w)| match w.text.split_once('=') {
                    Some((name, _)) if i < first => format!("{name}=***"),
                    _ if i == first && !w.runs => redact::positional(&w.text),
                    _ => "***".into(),
                })
                .collect::<Vec<_>>()
                .join(" "),
            _ => redact::shown_without_secrets(&texts),
        };
        // A group or subshell may be a function's body, which runs when
        // it is called, after any line; so may code this reader never sees.
        let in_body =
            (self.blocks.iter()).any(|(b, _)| matches!(b, Block::Group | Block::Subshell));
        let any_time = code.is_some() || in_body;
        let src = Src::new(self.file, Some(line), true);
        for &(_, field) in NETWORK_KEYS.iter().filter(|(key, _)| off.contains(key)) {
            let off = Some(Node::Bool(true, src));
            self.sets.push((any_time, src, vec!["options", field], off));
        }
        // A Hyper key a shell may set is set, to a value only it knows.
        let adds = texts
            .windows(3)
            .position(|w| w == ["provider", "add", "hyper"]);
        if adds.is_some_and(|at| texts[at..].iter().any(|t| t.starts_with("--api-key"))) {
            let unknown = Some(Node::Str(String::new(), src));
            self.sets.push((any_time, src, HYPER_KEY.to_vec(), unknown));
        }
        self.warnings.push(Warning::SkippedLine {
            path: self.path.clone(),
            line,
            command,
            reason,
            counted_off: off,
        });
    }

    /// Tells what is wrong with the line `line`.
    fn tell(&mut self, line: usize, what: OptionLine) {
        let path = self.path.clone();
        self.warnings.push(Warning::OptionLine { path, line, what });
    }

    /// Applies a command that runs unconditionally, by Crush's rules:
    /// `option`, and `provider add hyper --api-key KEY` / `provider
    /// remove hyper`, which set the Hyper key Crush sends.
    fn apply(&mut self, line: usize, texts: &[&str]) {
        let src = Src::new(self.file, Some(line), false);
        let (key, value) = match texts {
            ["option", ..] => return self.option(line, texts, src),
            ["provider", "remove" | "rm", "hyper", ..] => (HYPER_KEY[..2].to_vec(), None),
            ["provider", "add", "hyper", flags @ ..] => match api_key_flag(flags) {
                Some(key) => (HYPER_KEY.to_vec(), Some(Node::Str(key.to_owned(), src))),
                None => return,
            },
            _ => return,
        };
        self.sets.push((false, src, key, value));
    }

    /// What `option <key> [value]` sets of what this tool reads, by
    /// Crush's `handleOption`: the value is the third word (an empty one
    /// is a bare flag, words after it are ignored); booleans `true false
    /// 1 0 yes no` in any case, `provider-auto-update` and
    /// `default-providers` stored as their negation. A key Crush does not
    /// know, or a value it refuses, makes its builtin fail, which halts
    /// the script (mvdan.cc/sh's `interp`), so Crush refuses to start:
    /// told, or, for a value of a key read here, an error.
    fn option(&mut self, line: usize, texts: &[&str], src: Src) {
        let key = texts.get(1).copied().unwrap_or_default();
        let value = texts.get(2).copied().unwrap_or_default();
        let field = match NETWORK_KEYS.iter().find(|(k, _)| *k == key) {
            Some((_, field)) => field,
            None if key == "data-directory" => "data_directory",
            None if is_option_key(key) => return,
            None => {
                let what = OptionLine::Unknown {
                    written: texts.join(" "),
                    key: key.to_owned(),
                    suggestion: suggestion(key),
                };
                return self.tell(line, what);
            }
        };
        let set = match (key, parse_bool(value)) {
            ("data-directory", _) if value.is_empty() => Err("needs a value".to_string()),
            ("data-directory", _) => Ok(Node::Str(value.into(), src)),
            _ if value.is_empty() => Ok(Node::Bool(false, src)),
            (_, Some(on)) => Ok(Node::Bool(!on, src)),
            (_, None) => Err(format!(
                "{value:?} is not a boolean (true, false, 1, 0, yes, no)"
            )),
        };
        match set {
            Ok(node) => self
                .sets
                .push((false, src, vec!["options", field], Some(node))),
            Err(why) => drop(
                self.refused
                    .get_or_insert((line, format!("option {key}: {why}"))),
            ),
        }
        if texts.len() > 3 {
            let (written, value) = (texts.join(" "), value.to_owned());
            self.tell(line, OptionLine::ExtraWords { written, value });
        }
    }
}

/// Crush's `parseBool`.
fn parse_bool(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" => Some(true),
        "false" | "0" | "no" => Some(false),
        _ => None,
    }
}

/// A known key close to an unknown one: `key=value` written as one word,
/// or `_` for `-`.
fn suggestion(key: &str) -> Option<String> {
    if let Some((left, right)) = key.split_once('=')
        && is_option_key(left)
    {
        return Some(format!("option {left} {right}"));
    }
    let dashed = key.replace('_', "-").to_ascii_lowercase();
    is_option_key(&dashed).then(|| format!("option {dashed} …"))
}

/// The value of the last `--api-key` among the flags of `provider add ID`
/// (`flags`), read as Crush's `applyFlags` reads them: in order, each
/// flag taking its values (so a value that reads `--api-key` is a value),
/// the last one winning. `None` when none is given, or when a flag Crush
/// does not know or a missing value makes the command fail (Crush then
/// refuses to start, whatever the key).
fn api_key_flag<'a>(flags: &[&'a str]) -> Option<&'a str> {
    let (mut key, mut i) = (None, 0);
    while i < flags.len() {
        let values = redact::values_taken(flags[i])?;
        if i + values >= flags.len() {
            return None;
        }
        if flags[i] == "--api-key" {
            key = Some(flags[i + 1]);
        }
        i += 1 + values;
    }
    key
}

/// Sets `key` (a path of object keys) of `node` to `value`, last in its
/// object, or removes it when `value` is `None`.
fn put(node: &mut Node, key: &[&str], value: Option<Node>) {
    let (Node::Object(entries), [first, rest @ ..]) = (node, key) else {
        return;
    };
    if rest.is_empty() {
        entries.retain(|(k, _)| k != first);
        entries.extend(value.map(|v| (first.to_string(), v)));
        return;
    }
    let at = match entries.iter().position(|(k, _)| k == first) {
        Some(at) => at,
        None if value.is_none() => return,
        None => {
            entries.push((first.to_string(), Node::Object(Vec::new())));
            entries.len() - 1
        }
    };
    put(&mut entries[at].1, rest, value);
}

/// The command of Crush's crushrc that `name`, none of them, is a typo of:
/// two letters swapped, or, for a name of six letters or more, one or two
/// letters wrong, left out or added (one for five). A program a script
/// runs (`echo`, `less`, `scp`) is far from all of them.
fn mistyped(name: &str) -> Option<&'static str> {
    CONFIG_COMMANDS.into_iter().find(|meant| {
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

/// The keys of [`NETWORK_KEYS`] that `words`, a command a shell would
/// run, may turn off: `option <key> <value>` where the value is not a
/// literal `true` (a bare flag, an empty value and `true` can only turn
/// it on), the `option` word being at one of `names`, where the command's
/// name may be; a key only a shell knows (`option $K false`) may be
/// either, and so may a command name only a shell knows (`$OPT
/// provider-auto-update false`).
fn may_turn_off(words: &[Word], names: Range<usize>) -> Vec<&'static str> {
    let mut keys = Vec::new();
    for at in names {
        let (name, Some(key)) = (&words[at], words.get(at + 1)) else {
            continue;
        };
        let is_option = name.text == "option" && !name.dynamic;
        let on_only = words
            .get(at + 2)
            .is_none_or(|v| !v.dynamic && (v.text.is_empty() || parse_bool(&v.text) == Some(true)));
        if (!is_option && !name.dynamic) || on_only {
            continue;
        }
        for (option, _) in &NETWORK_KEYS {
            let named = if key.dynamic {
                is_option
            } else {
                key.text == *option
            };
            if named && !keys.contains(option) {
                keys.push(*option);
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
/// redirection, an unquoted here-document, or a command name only a
/// shell knows (`$E`, which may be `eval`), but in a `case` block, where
/// the words gathered may be its subject or a pattern (`$HOST)`).
fn shell_only(
    words: &[Word],
    names: Range<usize>,
    redirect_runs: bool,
    in_case: bool,
) -> Option<String> {
    for word in &words[names.clone()] {
        let (name, bytes) = (word.text.as_str(), word.text.as_bytes());
        let drive = bytes.len() >= 3
            && bytes[0].is_ascii_alphabetic()
            && bytes[1] == b':'
            && matches!(bytes[2], b'\\' | b'/');
        if EVALUATORS.contains(&name) {
            return Some(format!(
                "`{name}` runs text as commands, which only a shell does"
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
    if redirect_runs || words.iter().any(|w| w.runs) {
        return Some(
            "it runs commands only a shell sees: a command substitution ($( ), backquotes or <( )), or an unquoted here-document's body, which a shell expands"
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

    fn read_rc(text: &str) -> Result<(Node, Vec<Warning>), ConfigError> {
        read(Path::new("rc"), text, 0)
    }

    /// Each skipped command: its line, as shown, and why.
    fn skipped(text: &str) -> Vec<(usize, String, String)> {
        let (_, warnings) = read_rc(text).unwrap();
        let skipped = warnings.into_iter().filter_map(|w| match w {
            Warning::SkippedLine {
                line,
                command,
                reason,
                ..
            } => Some((line, command, reason)),
            _ => None,
        });
        skipped.collect()
    }

    /// Each skipped command's line and reason.
    fn reasons(text: &str) -> Vec<(usize, String)> {
        let skipped = skipped(text).into_iter();
        skipped.map(|(line, _, reason)| (line, reason)).collect()
    }

    /// The lines of the `option` commands that ran, each one told for its
    /// key, which Crush does not know.
    fn ran(text: &str) -> Vec<(usize, String)> {
        let (_, warnings) = read_rc(text).unwrap();
        let ran = warnings.into_iter().filter_map(|w| match w {
            Warning::OptionLine {
                line,
                what: OptionLine::Unknown { written, .. },
                ..
            } => Some((line, written)),
            _ => None,
        });
        ran.collect()
    }

    fn at(line: usize, written: &str) -> (usize, String) {
        (line, written.to_string())
    }

    /// `options.disable_provider_auto_update` and
    /// `options.disable_default_providers` as the file sets them, each
    /// with the line that set it and whether only a shell runs it.
    fn network(text: &str) -> [Option<(bool, usize, bool)>; 2] {
        let (node, _) = read_rc(text).unwrap();
        NETWORK_KEYS.map(
            |(_, field)| match node.get("options").and_then(|o| o.get(field)) {
                Some(Node::Bool(b, src)) => Some((*b, src.line.unwrap(), src.unevaluated)),
                _ => None,
            },
        )
    }

    /// F3: every form a secret takes on a skipped line is hidden, and the
    /// line still shows its command word.
    #[test]
    fn a_skipped_lines_secrets_are_hidden_in_every_form() {
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
                "K=*** provider add x --api-key *** --name Mine --disable *** --api-key=***",
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
            let skipped = skipped(line);
            assert_eq!(skipped.len(), 1, "{line}");
            assert_eq!(skipped[0].1, expected, "{line}");
            assert!(!skipped[0].1.contains("RK"), "{line}: {skipped:?}");
        }
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
        assert_eq!(
            ran(text),
            [at(1, "option keep 1"), at(15, "option after 1")]
        );
        assert_eq!(
            reasons(text),
            [
                at(3, "inside an if block opened at line 2"),
                at(4, "inside an if block opened at line 2"),
                at(6, "inside a loop opened at line 6"),
                at(8, "inside a case block opened at line 7"),
                at(10, "inside a { } group or function opened at line 10"),
                at(12, "inside a { } group or function opened at line 11"),
                at(14, "inside a ( ) subshell or function opened at line 14"),
            ]
        );
    }

    #[test]
    fn source_joins_and_expansions_are_skipped() {
        let text = "source ~/.crushrc.local\n. ./other\ntest -n x && option a 1\noption b $B\noption c \"$C\"\noption d '$literal'\necho hi | cat\n";
        let skipped = skipped(text)
            .into_iter()
            .map(|(line, shown, _)| (line, shown));
        assert_eq!(
            skipped.collect::<Vec<_>>(),
            [
                at(1, "source ~/.crushrc.local"),
                at(2, ". ./other"),
                at(3, "option a 1"),
                at(4, "option b $B"),
                at(5, "option c $C")
            ]
        );
        assert_eq!(ran(text), [at(6, "option d $literal")]);
    }

    #[test]
    fn quoted_reserved_words_are_plain_words() {
        assert_eq!(ran("'if' x\noption fi"), [at(2, "option fi")]);
        assert!(skipped("'if' x\noption fi").is_empty());
    }

    #[test]
    fn syntax_errors_name_the_line() {
        let error = |text: &str| read_rc(text).unwrap_err().to_string();
        assert_eq!(
            error("option a\noption 'b\n"),
            "rc:2: unterminated single quote"
        );
        assert_eq!(
            error("if true; then\noption a\n"),
            "rc:1: an if block is never closed"
        );
        assert_eq!(
            error("option a\nfi\n"),
            "rc:2: `fi` without a matching opening"
        );
        assert_eq!(error("option a >"), "rc:1: a redirection without a target");
        assert!(read_rc("done").is_err());
        assert!(read_rc(")").is_err());
    }

    /// A quoted here-document's body is data; an unquoted one's is
    /// expanded, and may run commands: the command is skipped, never its
    /// body read as commands.
    #[test]
    fn here_document_bodies_are_data() {
        let text = "cat <<EOF\noption provider-auto-update false\nEOF\ncat <<-'END' >/dev/null\n\toption a 1\n\tEND\noption after 1\n";
        assert_eq!(ran(text), [at(7, "option after 1")]);
        let skipped = skipped(text);
        assert_eq!(skipped.len(), 1, "{skipped:?}");
        assert_eq!((skipped[0].0, skipped[0].1.as_str()), (1, "cat"));
        assert!(skipped[0].2.contains("here-document"), "{skipped:?}");
    }

    #[test]
    fn exit_ends_the_file() {
        let text = "option a 1\nexit\noption provider-auto-update false\n";
        assert_eq!(ran(text), [at(1, "option a 1")]);
        assert_eq!(network(text), [None, None]);
        let (_, warnings) = read_rc("exit 3").unwrap();
        assert_eq!(
            warnings,
            [Warning::OptionLine {
                path: "rc".into(),
                line: 1,
                what: OptionLine::FailingExit { status: "3".into() }
            }]
        );
        // A syntax error after it is still one: the file is parsed whole.
        assert!(read_rc("exit\nif true; then\n").is_err());
        // An exit only a shell can tell runs: what follows is not guessed.
        let text = "[ -n \"$CI\" ] && exit\noption provider-auto-update false\n";
        assert_eq!(
            reasons(text),
            [at(
                2,
                "after the `exit` at line 1, which only a shell can tell runs"
            )]
        );
        assert_eq!(network(text), [Some((true, 2, true)), None]);
    }

    #[test]
    fn assignments_and_runners_before_a_config_command_are_skipped() {
        let text = "VAR=x option provider-auto-update false\ncommand option default-providers false\nenv A=1 option x\nX=1\nA=\"b c\" echo hi\n\"X\"=1 option y\n";
        assert_eq!(
            reasons(text),
            [
                at(
                    1,
                    "a variable assignment before it is applied only by a shell"
                ),
                at(2, "`command` runs it, which only a shell does"),
                at(3, "`env` runs it, which only a shell does"),
            ]
        );
        assert_eq!(
            network(text),
            [Some((true, 1, true)), Some((true, 2, true))]
        );
        // A quoted name is no assignment: `"X"=1` is a command, and no
        // typo of one of Crush's.
        assert_eq!(skipped("\"X\"=1 option y\n"), []);
    }

    /// Every form of code only a shell runs is skipped, turning both keys
    /// off at any time (after a later line that turns them on), and
    /// shown by its name alone where its words are that code; the same
    /// text quoted, commented or in a quoted here-document is data.
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
            let skipped = skipped(text);
            assert_eq!(skipped.len(), 1, "{text}: {skipped:?}");
            assert_eq!(skipped[0].1, shown, "{text}");
            let later = format!("{text}\noption provider-auto-update\noption default-providers\n");
            assert_eq!(
                network(&later),
                [Some((true, 1, true)), Some((true, 1, true))],
                "{text}"
            );
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
            assert_eq!(skipped(text), [], "{text}");
            assert_eq!(network(text), [None, None], "{text}");
        }
    }

    /// A line that may turn a key off counts as off where it stands; one
    /// that can only turn it on changes nothing; a function's body counts
    /// after every line, as it runs when it is called.
    #[test]
    fn what_a_skipped_line_may_turn_off() {
        for (text, expected) in [
            (
                "if x; then option provider-auto-update false; fi",
                [Some((true, 1, true)), None],
            ),
            (
                "option default-providers \"$V\"",
                [None, Some((true, 1, true))],
            ),
            (
                "option $KEY false",
                [Some((true, 1, true)), Some((true, 1, true))],
            ),
            ("if x; then option provider-auto-update; fi", [None, None]),
            ("if x; then option default-providers true; fi", [None, None]),
            (
                "option provider-auto-update $V\noption provider-auto-update true",
                [Some((false, 2, false)), None],
            ),
            (
                "f() { option provider-auto-update 0; }\noption provider-auto-update true\nf",
                [Some((true, 1, true)), None],
            ),
            (
                "if x; then option provider-auto-update false; fi; option provider-auto-update true",
                [Some((true, 1, true)), None],
            ),
        ] {
            assert_eq!(network(text), expected, "{text}");
        }
    }

    /// Bash's `function name { … }` defines a function, as `name() { … }`
    /// does; `! command` runs the command (only its status is inverted).
    #[test]
    fn function_keyword_and_negation() {
        let text = "function f { option provider-auto-update false; }\nfunction g() (\n  option a 1\n)\nf\n! option default-providers false\n";
        assert_eq!(
            reasons(text),
            [
                at(1, "inside a { } group or function opened at line 1"),
                at(3, "inside a ( ) subshell or function opened at line 2"),
            ]
        );
        assert_eq!(network(text)[1], Some((true, 6, false)));
        assert_eq!(ran("'!' x\noption y"), [at(2, "option y")]);
    }

    /// An `exit` in a subshell ends the subshell, never the file.
    #[test]
    fn exit_in_a_subshell_does_not_end_the_file() {
        let text = "(exit)\n( if x; then exit 1; fi )\noption a 1\n";
        assert_eq!(skipped(text), []);
        assert_eq!(ran(text), [at(3, "option a 1")]);
    }

    #[test]
    fn options_as_crush_reads_them() {
        let auto = |text: &str| network(text)[0].map(|(off, ..)| off);
        assert_eq!(auto("option provider-auto-update false"), Some(true));
        assert_eq!(auto("option provider-auto-update NO"), Some(true));
        assert_eq!(auto("option provider-auto-update"), Some(false));
        assert_eq!(auto("option provider-auto-update \"\""), Some(false));
        assert_eq!(auto("option provider-auto-update false true"), Some(true));
        assert!(network("option default-providers 0")[1].unwrap().0);
        let (node, _) = read_rc("option data-directory .state").unwrap();
        let dir = node.get("options").and_then(|o| o.get("data_directory"));
        assert_eq!(dir.and_then(Node::text).as_deref(), Some(".state"));
        for (text, error) in [
            (
                "option provider-auto-update maybe",
                "rc:1: option provider-auto-update: \"maybe\" is not a boolean (true, false, 1, 0, yes, no)",
            ),
            (
                "option data-directory ''",
                "rc:1: option data-directory: needs a value",
            ),
        ] {
            assert_eq!(read_rc(text).unwrap_err().to_string(), error);
        }
        // Valid keys this tool does not read, whatever their value.
        for text in [
            "option debug",
            "option ui diff split",
            "option reset context-path",
        ] {
            assert_eq!(read_rc(text).unwrap(), (Node::Object(vec![]), vec![]));
        }
        assert_eq!(
            ran("option provider-auto-update=false"),
            [at(1, "option provider-auto-update=false")]
        );
    }

    #[test]
    fn suggestions() {
        assert_eq!(
            suggestion("provider-auto-update=false").as_deref(),
            Some("option provider-auto-update false")
        );
        assert_eq!(
            suggestion("provider_auto_update").as_deref(),
            Some("option provider-auto-update …")
        );
        assert_eq!(suggestion("nothing-like-it"), None);
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
            "option",
            "provider add hyper --api-key",
            "function",
        ] {
            let _ = read_rc(text);
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
