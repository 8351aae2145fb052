//! What does not stop the settings from being read, but is worth telling:
//! [`Settings::warnings`](super::Settings::warnings), typed, each with the
//! words a person reads.

use std::path::PathBuf;

use super::{ConfigError, shown, shown_path};
use crate::trust::signature::KEYS_ENV;

/// Something about Crush's configuration files or the environment that a
/// person should know: a line or a file read differently, or not at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Warning {
    /// A crushrc command this reader does not run (it needs the shell).
    #[error(
        "{}:{line}: `{}` skipped: {reason}; this reader does not run the shell{}",
        shown_path(path),
        shown(command),
        counted(counted_off)
    )]
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
    #[error("{}:{line}: {}", shown_path(path), shown(&what.to_string()))]
    OptionLine {
        /// The crushrc.
        path: PathBuf,
        /// The line.
        line: usize,
        /// What is wrong with it.
        what: OptionLine,
    },
    /// A file that cannot be used, passed over as Crush passes it over.
    #[error("{0}; this file is not read")]
    FileNotRead(ConfigError),
    /// A file whose options cannot be merged with the others'.
    #[error("{0}; its options are not read")]
    OptionsNotRead(ConfigError),
    /// The project's folders cannot be looked at: no project file is read.
    #[error(
        "cannot look at {}: {cause}: Crush then reads no project file, and neither does this",
        shown_path(folder)
    )]
    NoProjectFiles {
        /// The folder.
        folder: PathBuf,
        /// Why, in the system's words.
        cause: String,
    },
    /// A project's file pins keys, which only the user's own do.
    #[error(
        "{}: options.provider_public_keys is ignored: keys are pinned only in your own configuration (the global crush.json) or by {KEYS_ENV}, never by a project's files",
        shown_path(path)
    )]
    ProjectKeys {
        /// The project's file.
        path: PathBuf,
    },
    /// A global file that pins keys, found where a project's `.env` moved
    /// the global folders: only the files the user's own environment
    /// finds pin keys.
    #[error(
        "{}: options.provider_public_keys is ignored: this file is found where a project's .env moved the global folders, and keys are pinned only in the files your own environment finds or by {KEYS_ENV}",
        shown_path(path)
    )]
    DotEnvKeys {
        /// The file.
        path: PathBuf,
    },
    /// A key changes type from one file to the next, which Crush's merge
    /// refuses.
    #[error(
        "{}: {} ({}) replaces {} from {}; Crush merges its files before it reads them, and one whose merge refuses a change of type (go-jsons v1.0.0-alpha.5) would not start: make them agree",
        shown_path(&after.1),
        shown(key),
        after.0,
        before.0,
        file(&before.1)
    )]
    TypeChange {
        /// The key, e.g. `options.disable_provider_auto_update`.
        key: String,
        /// The later value's kind (`a boolean`) and file.
        after: (&'static str, PathBuf),
        /// The earlier value's kind and file.
        before: (&'static str, Option<PathBuf>),
    },
    /// An environment variable that should be a boolean is not one.
    #[error(
        "{name}={} is not a boolean (1, t, T, TRUE, true, True or 0, f, F, FALSE, false, False); ignored here, the files decide (Crush v0.90 reads it as false, which turns its own requests on)",
        crate::catalog::quoted(value)
    )]
    NotBoolean {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
    },
}

/// What a skipped line that may turn keys off adds.
fn counted(keys: &[&str]) -> String {
    match keys {
        [] => String::new(),
        keys => format!(
            ", and Crush, which does, may turn {} off there: counted as off, so no start-up request is made while this line stands",
            keys.join(" and ")
        ),
    }
}

/// A file a type change names.
fn file(path: &Option<PathBuf>) -> String {
    path.as_deref()
        .map_or_else(|| "an earlier file".into(), shown_path)
}

/// What is wrong with a crushrc `option` line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionLine {
    /// Words after the value, which Crush ignores.
    #[error("`{written}`: the words after `{value}` are ignored, as Crush ignores them")]
    ExtraWords {
        /// The line's words.
        written: String,
        /// The value they follow.
        value: String,
    },
    /// No such option.
    #[error(
        "`{written}`: there is no option {key:?}, so it changes nothing, and Crush refuses to start on it{}",
        suggestion.as_ref().map(|s| format!("; did you mean `{s}`?")).unwrap_or_default()
    )]
    Unknown {
        /// The line's words.
        written: String,
        /// The key.
        key: String,
        /// The option it may mean.
        suggestion: Option<String>,
    },
    /// `exit` with a failure, which ends Crush's start.
    #[error("`exit {status}`: Crush refuses to start when its crushrc ends with a failure")]
    FailingExit {
        /// The status.
        status: String,
    },
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
                what: OptionLine::Unknown {
                    written: "option x \x1b]0;t\x07".into(),
                    key: "x".into(),
                    suggestion: None,
                },
            },
            Warning::TypeChange {
                key: "options.\x1bk".into(),
                after: ("a boolean", path.clone()),
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
