//! Reading one configuration file into its part of the merge: a JSON
//! file as it is, a crushrc as the object its `option` lines build.

use std::path::Path;

use crate::store::file;

use super::merge::{self, Node, Src};
use super::{ConfigError, Format, Origin, PinnedKeys, Warning, crushrc, shown};

/// One file's part, once read.
#[derive(Clone)]
pub(super) struct Loaded {
    /// Its index in the files read ([`Src::file`]).
    pub(super) file: usize,
    pub(super) node: Node,
    pub(super) keys: Option<PinnedKeys>,
    /// The lines of a crushrc's commands this reader cannot evaluate that
    /// may turn a key of [`crushrc::options::NETWORK_KEYS`] off, which
    /// `node` counts as turning it off.
    pub(super) counted_off: Vec<usize>,
}

/// The bytes of the regular file `path`, read as every file this program
/// finds by itself is ([`file::read_regular`]: opened without blocking,
/// never past the cap); `None` when it is missing (or a folder on its way
/// is a file, ENOTDIR). A FIFO, which would block a start for good (as it
/// blocks Crush), a device or a folder is an error naming what it is.
pub(super) fn read_regular(path: &Path) -> Result<Option<Vec<u8>>, String> {
    match file::read_regular(path, file::MAX_FILE_BYTES) {
        Ok(read) => Ok(read.map(|(bytes, _)| bytes)),
        Err(file::FileError::Io(e)) if e.kind() == std::io::ErrorKind::NotADirectory => Ok(None),
        Err(e) => Err(format!("cannot read: {e}")),
    }
}

/// Reads one configuration file as file `index`: `None` when it is missing
/// or empty; its part and its warnings otherwise.
pub(super) fn read_file(
    path: &Path,
    format: Format,
    index: usize,
) -> Result<Option<(Loaded, Vec<Warning>)>, ConfigError> {
    let error = |message: String| ConfigError {
        path: path.to_owned(),
        line: None,
        message,
    };
    let Some(bytes) = read_regular(path).map_err(error)? else {
        return Ok(None);
    };
    if bytes.is_empty() {
        return Ok(None);
    }
    // Go reads bytes: ones that are not UTF-8 are U+FFFD in a JSON string
    // (and make anything else invalid JSON, here too), and data to the
    // shell.
    let text = String::from_utf8_lossy(&bytes);
    if text
        .bytes()
        .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    {
        return match format {
            // `json.Valid` is false for blanks alone: Crush refuses it.
            Format::Json => Err(ConfigError {
                path: path.to_owned(),
                line: Some(1),
                message: "holds only blanks, which is not JSON; Crush refuses to start on it (write {} or remove the file)".into(),
            }),
            Format::Crushrc => Ok(None),
        };
    }
    match format {
        Format::Json => load_json(path, &text, index).map(|l| Some((l, Vec::new()))),
        Format::Crushrc => load_crushrc(path, &text, index).map(|l| {
            let warnings = l.warnings;
            Some((l.loaded, warnings))
        }),
    }
}

fn load_json(path: &Path, text: &str, index: usize) -> Result<Loaded, ConfigError> {
    let error = |line: Option<usize>, message: String| ConfigError {
        path: path.to_owned(),
        line,
        message,
    };
    let node = merge::parse(text, index).map_err(|(line, message)| error(line, message))?;
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| error(Some(e.line()), merge::not_json(text, &e)))?;
    Ok(Loaded {
        file: index,
        node,
        keys: pinned_keys_in(path, &value)?,
        counted_off: Vec::new(),
    })
}

/// `options.provider_public_keys` of one JSON file: a later file's list
/// replaces an earlier one's (not Crush's key: read by this tool alone).
fn pinned_keys_in(
    path: &Path,
    value: &serde_json::Value,
) -> Result<Option<PinnedKeys>, ConfigError> {
    let Some(options) = value.get("options").and_then(|o| o.as_object()) else {
        return Ok(None);
    };
    match options.get("provider_public_keys") {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::Array(keys)) if keys.iter().all(|k| k.is_string()) => {
            Ok(Some(PinnedKeys {
                entries: keys
                    .iter()
                    .filter_map(|k| k.as_str())
                    .map(str::to_owned)
                    .collect(),
                origin: Origin::Json {
                    path: path.to_owned(),
                    key: "options.provider_public_keys".into(),
                },
            }))
        }
        Some(other) => Err(ConfigError {
            path: path.to_owned(),
            line: None,
            message: format!("options.provider_public_keys must be a list of strings, not {other}"),
        }),
    }
}

/// A crushrc's part and its warnings.
pub(super) struct RcLoaded {
    pub(super) loaded: Loaded,
    pub(super) warnings: Vec<Warning>,
}

pub(super) fn load_crushrc(path: &Path, text: &str, index: usize) -> Result<RcLoaded, ConfigError> {
    let script = crushrc::parse(text).map_err(|e| ConfigError {
        path: path.to_owned(),
        line: Some(e.line),
        message: e.message,
    })?;
    let mut warnings: Vec<Warning> = script
        .skipped
        .iter()
        .map(|skipped| Warning::SkippedLine {
            path: path.to_owned(),
            line: skipped.line,
            command: skipped.command.clone(),
            reason: skipped.reason.clone(),
            counted_off: skipped.turns_off.clone(),
        })
        .collect();
    let applied = crushrc::options::apply(&script);
    if let Some((line, message)) = applied.error {
        return Err(ConfigError {
            path: path.to_owned(),
            line: Some(line),
            message: shown(&message),
        });
    }
    warnings.extend(
        applied
            .warnings
            .into_iter()
            .map(|(line, what)| Warning::OptionLine {
                path: path.to_owned(),
                line,
                what,
            }),
    );
    // A command only a shell can evaluate that may turn a key off counts
    // as turning it off where it stands, or, when it may run at any time
    // (a function's body, `eval` text, another file), after every line:
    // going out needs every reading to say on, and a shell may well run
    // it.
    let mut sets: Vec<(bool, &'static str, crushrc::options::Value, usize)> = applied
        .sets
        .into_iter()
        .map(|(field, value, line)| (false, field, value, line))
        .collect();
    let mut counted_off = Vec::new();
    for skipped in &script.skipped {
        for key in &skipped.turns_off {
            let field = crushrc::options::NETWORK_KEYS
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, field)| *field);
            if let Some(field) = field {
                let value = crushrc::options::Value::Bool(true);
                sets.push((skipped.any_time, field, value, skipped.line));
                counted_off.push(skipped.line);
            }
        }
    }
    // In the order of the lines, what may run at any time last; on one
    // line, a skipped command after the commands that run unconditionally
    // (the safe side).
    sets.sort_by_key(|(any_time, _, _, line)| (*any_time, *line));
    // The object Crush's builder makes of the lines: the last setting of a
    // field wins.
    let mut fields: Vec<(String, Node)> = Vec::new();
    for (_, field, value, line) in sets {
        let src = Src {
            file: index,
            line: Some(line),
        };
        let node = match value {
            crushrc::options::Value::Bool(b) => Node::Bool(b, src),
            crushrc::options::Value::Text(t) => Node::Str(t, src),
        };
        fields.retain(|(f, _)| f != field);
        fields.push((field.to_owned(), node));
    }
    Ok(RcLoaded {
        loaded: Loaded {
            file: index,
            // Without an option line, no `options` at all, as Crush's
            // builder leaves it out.
            node: Node::Object(if fields.is_empty() {
                Vec::new()
            } else {
                vec![("options".into(), Node::Object(fields))]
            }),
            keys: None,
            counted_off,
        },
        warnings,
    })
}
