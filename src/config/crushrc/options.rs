//! What a crushrc's `option` lines set, by Crush's rules
//! (`internal/shellconfig/options.go`: `handleOption`, `optionSpecs`,
//! `optionUI`, `parseBool`): `option <key> [value]`, the value the third
//! word (an empty one is a bare flag, words after it are ignored);
//! booleans `true false 1 0 yes no` in any case; `provider-auto-update`
//! and `default-providers` stored as their negation. Any key Crush does
//! not know, and any value it refuses, makes its builtin fail, which
//! halts the script (mvdan.cc/sh's `interp`: a handler error that is not
//! an exit status), so Crush refuses to start.

use super::Script;
use crate::config::warning::OptionLine;

/// The kind of an option's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bool { inverted: bool },
    Text,
    List,
}

/// The kind of value Crush v0.90's option `key` takes (`optionSpecs`);
/// `ui`, `reset` and the `attribution-` keys are handled apart.
fn kind(key: &str) -> Option<Kind> {
    Some(match key {
        "debug" | "debug-lsp" | "auto-lsp" | "progress" => Kind::Bool { inverted: false },
        "metrics" | "auto-summarize" | "provider-auto-update" | "default-providers" => {
            Kind::Bool { inverted: true }
        }
        "notifications" | "data-directory" | "initialize-as" => Kind::Text,
        "context-path" | "global-context-path" | "skill-path" | "disable-skill" => Kind::List,
        _ => return None,
    })
}

/// The keys this tool reads, and their JSON field (the booleans stored
/// negated).
const READ_HERE: [(&str, &str); 3] = [
    ("provider-auto-update", "disable_provider_auto_update"),
    ("default-providers", "disable_default_providers"),
    ("data-directory", "data_directory"),
];

/// The keys whose `false` keeps a start from going out, and their JSON
/// field.
pub(crate) const NETWORK_KEYS: [(&str, &str); 2] = [READ_HERE[0], READ_HERE[1]];

/// A value an `option` line sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    /// A boolean, as stored (already negated for an inverted key).
    Bool(bool),
    /// A string.
    Text(String),
}

/// What one `option` line does, by Crush's rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// It sets this JSON field of `options`, which this tool reads.
    Sets(&'static str, Value),
    /// A valid option this tool does not read.
    Other,
    /// Crush refuses to start on it, for this reason.
    Refused(String),
    /// No such option key.
    Unknown,
}

/// Crush's `parseBool`.
pub(crate) fn parse_bool(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" => Some(true),
        "false" | "0" | "no" => Some(false),
        _ => None,
    }
}

/// Decides what `option` with these words (the command's name first)
/// does.
pub(crate) fn verdict(words: &[&str]) -> Verdict {
    let Some(&key) = words.get(1) else {
        return Verdict::Refused("`option` needs a key".into());
    };
    let value = words.get(2).copied().unwrap_or("");
    match key {
        "ui" => return ui_verdict(words),
        "reset" => {
            return match words.get(2).and_then(|k| kind(k)) {
                Some(Kind::List) => Verdict::Other,
                Some(_) => Verdict::Refused(format!(
                    "`option reset` takes a list option, and {value:?} is not one"
                )),
                None => Verdict::Refused("`option reset` takes a list option".into()),
            };
        }
        "attribution-trailer-style" => {
            return match value {
                "none" | "co-authored-by" | "assisted-by" => Verdict::Other,
                _ => Verdict::Refused(format!(
                    "{key} takes none, co-authored-by or assisted-by, not {value:?}"
                )),
            };
        }
        "attribution-generated-with" => {
            return match value.is_empty() || parse_bool(value).is_some() {
                true => Verdict::Other,
                false => Verdict::Refused(format!("{key} takes true or false, not {value:?}")),
            };
        }
        _ => {}
    }
    let Some(kind) = kind(key) else {
        return Verdict::Unknown;
    };
    let set = match kind {
        Kind::Bool { inverted } if value.is_empty() => Value::Bool(!inverted),
        Kind::Bool { inverted } => match parse_bool(value) {
            Some(b) => Value::Bool(b != inverted),
            None => {
                return Verdict::Refused(format!(
                    "{value:?} is not a boolean (true, false, 1, 0, yes, no)"
                ));
            }
        },
        Kind::Text | Kind::List if value.is_empty() => {
            return Verdict::Refused(format!("option {key} needs a value"));
        }
        Kind::Text | Kind::List => Value::Text(value.to_owned()),
    };
    match READ_HERE.iter().find(|(k, _)| *k == key) {
        Some((_, field)) => Verdict::Sets(field, set),
        None => Verdict::Other,
    }
}

/// `option ui <key> <value>`, exactly four words (`optionUI`).
fn ui_verdict(words: &[&str]) -> Verdict {
    let [_, _, key, value] = words else {
        return Verdict::Refused("`option ui` takes a key and a value".into());
    };
    let valid = match *key {
        "compact" | "transparent" => parse_bool(value).is_some(),
        "diff" => matches!(*value, "unified" | "split"),
        "scrollbar" => matches!(*value, "default" | "always" | "never"),
        "completions-max-depth" | "completions-max-items" => value.parse::<u64>().is_ok(),
        _ => return Verdict::Refused(format!("no ui option is called {key:?}")),
    };
    if valid {
        Verdict::Other
    } else {
        Verdict::Refused(format!("{value:?} is not a value of ui {key}"))
    }
}

/// A known key close to an unknown one: `key=value` written as one word,
/// or `_` for `-`.
pub(crate) fn suggestion(key: &str) -> Option<String> {
    if let Some((left, right)) = key.split_once('=')
        && kind(left).is_some()
    {
        return Some(format!("option {left} {right}"));
    }
    let dashed = key.replace('_', "-").to_ascii_lowercase();
    kind(&dashed).map(|_| format!("option {dashed} …"))
}

/// One change a crushrc makes to the object Crush's builder makes of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Set {
    /// The line of its command.
    pub line: usize,
    /// Only a shell can evaluate its command: counted as setting `value`.
    pub unevaluated: bool,
    /// The path of object keys it sets, e.g. `options`,
    /// `disable_provider_auto_update`.
    pub key: Vec<&'static str>,
    /// The value; `None` removes the key.
    pub value: Option<Value>,
}

/// What a crushrc's commands set for this tool, in the order they take
/// effect, and what is worth a word.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Applied {
    /// What is set, the last setting of a key winning.
    pub sets: Vec<Set>,
    /// Warnings, each with its line.
    pub warnings: Vec<(usize, OptionLine)>,
    /// A line setting a key this tool reads to a value Crush refuses: the
    /// first one.
    pub error: Option<(usize, String)>,
}

const HYPER_KEY: [&str; 3] = ["providers", "hyper", "api_key"];

/// Applies the commands of `script` by Crush's rules: its `option` lines,
/// and `provider add hyper --api-key KEY` / `provider remove hyper` (the
/// Hyper key Crush sends). A skipped command that may turn a key of
/// [`NETWORK_KEYS`] off counts as turning it off, and one that may set
/// the Hyper key as setting it (to a value only a shell knows): where it
/// stands, or, when it may run at any time (a function's body, `eval`
/// text, another file), after every line; on one line, after the
/// commands that run unconditionally (the safe side: going out needs
/// every reading to say on).
pub(crate) fn apply(script: &Script) -> Applied {
    let mut applied = Applied::default();
    let mut sets = Vec::new();
    for command in &script.commands {
        let words = command.texts();
        let (key, value) = match words.as_slice() {
            ["option", ..] => match apply_option(command.line, &words, &mut applied) {
                Some((field, value)) => (vec!["options", field], Some(value)),
                None => continue,
            },
            ["provider", "remove" | "rm", "hyper", ..] => (HYPER_KEY[..2].to_vec(), None),
            ["provider", "add", "hyper", flags @ ..] => match api_key_flag(flags) {
                Some(key) => (HYPER_KEY.to_vec(), Some(Value::Text(key.to_owned()))),
                None => continue,
            },
            _ => continue,
        };
        let (line, unevaluated) = (command.line, false);
        sets.push((
            false,
            Set {
                line,
                unevaluated,
                key,
                value,
            },
        ));
    }
    for skipped in &script.skipped {
        let network = NETWORK_KEYS
            .iter()
            .filter(|(key, _)| skipped.turns_off.contains(key))
            .map(|(_, field)| (vec!["options", *field], Value::Bool(true)));
        // The command as shown: its secrets hidden, its words kept.
        let words: Vec<&str> = skipped.command.split_whitespace().collect();
        let adds = words
            .windows(3)
            .position(|w| w == ["provider", "add", "hyper"]);
        let hyper = adds
            .is_some_and(|at| words[at..].contains(&"--api-key"))
            .then(|| (HYPER_KEY.to_vec(), Value::Text(String::new())));
        for (key, value) in network.chain(hyper) {
            let (line, unevaluated, value) = (skipped.line, true, Some(value));
            sets.push((
                skipped.any_time,
                Set {
                    line,
                    unevaluated,
                    key,
                    value,
                },
            ));
        }
    }
    sets.sort_by_key(|(any_time, set)| (*any_time, set.line));
    applied.sets = sets.into_iter().map(|(_, set)| set).collect();
    if let Some(exit) = &script.exit
        && let Some(status) = exit.status.as_deref().filter(|s| *s != "0")
    {
        applied.warnings.push((
            exit.line,
            OptionLine::FailingExit {
                status: status.to_owned(),
            },
        ));
    }
    applied
}

/// What one `option` line sets, its warnings and error told in `applied`.
fn apply_option(
    line: usize,
    words: &[&str],
    applied: &mut Applied,
) -> Option<(&'static str, Value)> {
    let written = words.join(" ");
    match verdict(words) {
        Verdict::Sets(field, value) => {
            if words.len() > 3 {
                let value = words[2].to_owned();
                let what = OptionLine::ExtraWords { written, value };
                applied.warnings.push((line, what));
            }
            return Some((field, value));
        }
        Verdict::Other => {}
        Verdict::Refused(why) if READ_HERE.iter().any(|(k, _)| words.get(1) == Some(k)) => {
            applied
                .error
                .get_or_insert((line, format!("option {}: {why}", words[1])));
        }
        Verdict::Refused(why) => applied
            .warnings
            .push((line, OptionLine::Refused { written, why })),
        Verdict::Unknown => applied.warnings.push((
            line,
            OptionLine::Unknown {
                written,
                key: words[1].to_owned(),
                suggestion: suggestion(words[1]),
            },
        )),
    }
    None
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
        let values = super::redact::values_taken(flags[i])?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_as_crush_reads_them() {
        let v = |w: &str| verdict(&w.split(' ').collect::<Vec<_>>());
        let off = Verdict::Sets("disable_provider_auto_update", Value::Bool(true));
        let on = Verdict::Sets("disable_provider_auto_update", Value::Bool(false));
        assert_eq!(v("option provider-auto-update false"), off);
        assert_eq!(v("option provider-auto-update NO"), off);
        assert_eq!(v("option provider-auto-update"), on);
        assert_eq!(
            verdict(&["option", "provider-auto-update", ""]),
            on,
            "a bare flag"
        );
        assert_eq!(
            v("option provider-auto-update false true"),
            off,
            "extra words"
        );
        assert!(matches!(
            v("option provider-auto-update maybe"),
            Verdict::Refused(_)
        ));
        assert_eq!(
            v("option default-providers 0"),
            Verdict::Sets("disable_default_providers", Value::Bool(true))
        );
        assert_eq!(
            v("option data-directory .state"),
            Verdict::Sets("data_directory", Value::Text(".state".into()))
        );
        assert!(matches!(
            verdict(&["option", "data-directory", ""]),
            Verdict::Refused(_)
        ));
        assert_eq!(v("option debug"), Verdict::Other);
        assert!(matches!(v("option debug maybe"), Verdict::Refused(_)));
        assert_eq!(v("option provider-auto-update=false"), Verdict::Unknown);
        assert_eq!(v("option ui diff split"), Verdict::Other);
        assert!(matches!(v("option ui diff"), Verdict::Refused(_)));
        assert_eq!(v("option reset context-path"), Verdict::Other);
        assert!(matches!(v("option reset debug"), Verdict::Refused(_)));
        assert!(matches!(v("option"), Verdict::Refused(_)));
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
}
