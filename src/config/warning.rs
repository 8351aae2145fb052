//! What does not stop the settings from being read, but is worth telling:
//! [`Settings::warnings`](super::Settings::warnings), typed, each with the
//! words a person reads.

use std::fmt;
use std::path::PathBuf;

use super::{ConfigError, shown, shown_path};

/// Something about Crush's configuration files or the environment that a
/// person should know: a line or a file read differently, or not at all.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning {
    /// A crushrc command this reader does not run (it needs the shell).
    SkippedLine {
        /// The crushrc.
        path: PathBuf,
        /// The command's first line.
        line: usize,
        /// The command as written, its secrets shown as `***`.
        command: String,
        /// Why it was skipped.
        reason: String,
        /// The option keys it may turn off, which going out counts as
        /// off (`provider-auto-update`, `default-providers`).
        counted_off: Vec<&'static str>,
    },
    /// A crushrc `option` line read other than as it was written.
    OptionLine {
        /// The crushrc.
        path: PathBuf,
        /// The line.
        line: usize,
        /// What is wrong with it.
        what: OptionLine,
    },
    /// A file that cannot be used, passed over as Crush passes it over.
    FileNotRead(ConfigError),
    /// A file whose options cannot be merged with the others'.
    OptionsNotRead(ConfigError),
    /// The project's folders cannot be looked at: no project file is read.
    NoProjectFiles {
        /// The folder.
        folder: PathBuf,
        /// Why, in the system's words.
        cause: String,
    },
    /// A project's file pins keys, which only the user's own do.
    ProjectKeys {
        /// The project's file.
        path: PathBuf,
    },
    /// A global file that pins keys, found where a project's `.env` moved
    /// the global folders: only the files the user's own environment
    /// finds pin keys.
    DotEnvKeys {
        /// The file.
        path: PathBuf,
    },
    /// A key changes type from one file to the next, which Crush's merge
    /// refuses.
    TypeChange {
        /// The key, e.g. `options.disable_provider_auto_update`.
        key: String,
        /// The later value's kind (`a boolean`) and file.
        after: (&'static str, Option<PathBuf>),
        /// The earlier value's kind and file.
        before: (&'static str, Option<PathBuf>),
    },
    /// An environment variable that should be a boolean is not one.
    NotBoolean {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
    },
}

/// What is wrong with a crushrc `option` line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OptionLine {
    /// Words after the value, which Crush ignores.
    ExtraWords {
        /// The line's words.
        written: String,
        /// The value they follow.
        value: String,
    },
    /// A line Crush refuses to start on.
    Refused {
        /// The line's words.
        written: String,
        /// Why.
        why: String,
    },
    /// No such option.
    Unknown {
        /// The line's words.
        written: String,
        /// The key.
        key: String,
        /// The option it may mean.
        suggestion: Option<String>,
    },
    /// `exit` with a failure, which ends Crush's start.
    FailingExit {
        /// The status.
        status: String,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::SkippedLine {
                path,
                line,
                command,
                reason,
                counted_off,
            } => {
                write!(
                    f,
                    "{}:{line}: `{}` skipped: {reason}; this reader does not run the shell",
                    shown_path(path),
                    shown(command)
                )?;
                match counted_off.as_slice() {
                    [] => Ok(()),
                    keys => write!(
                        f,
                        ", and Crush, which does, may turn {} off there: counted as off, so no start-up request is made while this line stands",
                        keys.join(" and ")
                    ),
                }
            }
            Warning::OptionLine { path, line, what } => {
                write!(
                    f,
                    "{}:{line}: {}",
                    shown_path(path),
                    shown(&what.to_string())
                )
            }
            Warning::FileNotRead(e) => write!(f, "{e}; this file is not read"),
            Warning::OptionsNotRead(e) => write!(f, "{e}; its options are not read"),
            Warning::NoProjectFiles { folder, cause } => write!(
                f,
                "cannot look at {}: {cause}: Crush then reads no project file, and neither does this",
                shown_path(folder)
            ),
            Warning::DotEnvKeys { path } => write!(
                f,
                "{}: options.provider_public_keys is ignored: this file is found where a project's .env moved the global folders, and keys are pinned only in the files your own environment finds or by {}",
                shown_path(path),
                crate::trust::signature::KEYS_ENV
            ),
            Warning::ProjectKeys { path } => write!(
                f,
                "{}: options.provider_public_keys is ignored: keys are pinned only in your own configuration (the global crush.json) or by {}, never by a project's files",
                shown_path(path),
                crate::trust::signature::KEYS_ENV
            ),
            Warning::TypeChange { key, after, before } => {
                let file = |path: &Option<PathBuf>| {
                    path.as_deref()
                        .map_or_else(|| "an earlier file".into(), shown_path)
                };
                write!(
                    f,
                    "{}: {} ({}) replaces {} from {}; Crush merges its files before it reads them, and one whose merge refuses a change of type (go-jsons v1.0.0-alpha.5) would not start: make them agree",
                    file(&after.1),
                    shown(key),
                    after.0,
                    before.0,
                    file(&before.1),
                )
            }
            Warning::NotBoolean { name, value } => write!(
                f,
                "{name}={} is not a boolean (1, t, T, TRUE, true, True or 0, f, F, FALSE, false, False); ignored here, the files decide (Crush v0.90 reads it as false, which turns its own requests on)",
                crate::catalog::quoted(value)
            ),
        }
    }
}

impl fmt::Display for OptionLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionLine::ExtraWords { written, value } => write!(
                f,
                "`{written}`: the words after `{value}` are ignored, as Crush ignores them"
            ),
            OptionLine::Refused { written, why } => {
                write!(f, "`{written}`: {why}; Crush refuses to start on this line")
            }
            OptionLine::Unknown {
                written,
                key,
                suggestion,
            } => {
                write!(
                    f,
                    "`{written}`: there is no option {key:?}, so it changes nothing, and Crush refuses to start on it"
                )?;
                match suggestion {
                    Some(s) => write!(f, "; did you mean `{s}`?"),
                    None => Ok(()),
                }
            }
            OptionLine::FailingExit { status } => write!(
                f,
                "`exit {status}`: Crush refuses to start when its crushrc ends with a failure"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host that prints a warning's words gets no terminal control from
    /// a file's name or a crushrc's line: they are quoted.
    #[test]
    fn a_warning_shows_no_control_characters_from_a_file() {
        let path = PathBuf::from("/p/\x1b[2Jcrushrc");
        let warnings = [
            Warning::ProjectKeys { path: path.clone() },
            Warning::DotEnvKeys { path: path.clone() },
            Warning::OptionLine {
                path: path.clone(),
                line: 3,
                what: OptionLine::Refused {
                    written: "option x \x1b]0;t\x07".into(),
                    why: "no".into(),
                },
            },
            Warning::TypeChange {
                key: "options.\x1bk".into(),
                after: ("a boolean", Some(path.clone())),
                before: ("a string", None),
            },
        ];
        for warning in warnings {
            let words = warning.to_string();
            assert!(!words.contains('\x1b'), "{words:?}");
            assert!(!words.contains('\x07'), "{words:?}");
        }
    }

    /// What a host can match on: a bad boolean in the environment names
    /// the variable and its value.
    #[test]
    fn a_bad_boolean_is_told_with_its_variable_and_value() {
        let warning = Warning::NotBoolean {
            name: crate::config::DISABLE_AUTO_UPDATE_ENV,
            value: "yes".into(),
        };
        assert!(
            warning
                .to_string()
                .starts_with("CRUSH_DISABLE_PROVIDER_AUTO_UPDATE=\"yes\" is not a boolean")
        );
    }
}
