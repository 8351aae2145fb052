//! Reading one configuration file into its part of the merge: a JSON
//! file as it is, a crushrc as the object its commands build.

use std::path::Path;

use crate::store::file;

use super::crushrc::options::{self, Value};
use super::merge::{self, Node, Src};
use super::{ConfigError, Format, Origin, PinnedKeys, Warning, crushrc, shown};

/// One file's part, once read.
#[derive(Clone)]
pub(super) struct Loaded {
    pub(super) node: Node,
    /// `options.provider_public_keys`, which only some files may pin
    /// (not Crush's key: read by this tool alone).
    pub(super) keys: Option<PinnedKeys>,
}

/// Reads one configuration file as file `index`: `None` when it is missing
/// (or a folder on its way is a file) or empty; its part and its warnings
/// otherwise. It is read as every file this program finds by itself is
/// ([`file::read_regular`]): a FIFO, which would block a start for good
/// (as it blocks Crush), a device or a folder is an error naming what it
/// is.
pub(super) fn read_file(
    path: &Path,
    format: Format,
    index: usize,
) -> Result<Option<(Loaded, Vec<Warning>)>, ConfigError> {
    let error = |line, message| ConfigError {
        path: path.to_owned(),
        line,
        message,
    };
    let bytes = match file::read_regular(path, file::MAX_FILE_BYTES) {
        Ok(Some((bytes, _))) if !bytes.is_empty() => bytes,
        Ok(_) => return Ok(None),
        Err(file::FileError::Io(e)) if e.kind() == std::io::ErrorKind::NotADirectory => {
            return Ok(None);
        }
        Err(e) => return Err(error(None, format!("cannot read: {e}"))),
    };
    // Go reads bytes: ones that are not UTF-8 are U+FFFD in a JSON string
    // (and make anything else invalid JSON, here too), and data to the
    // shell.
    let text = String::from_utf8_lossy(&bytes);
    let blank = text.bytes().all(|b| b" \t\n\r".contains(&b));
    match format {
        // `json.Valid` is false for blanks alone: Crush refuses it.
        Format::Json if blank => Err(error(
            Some(1),
            "holds only blanks, which is not JSON; Crush refuses to start on it (write {} or remove the file)".into(),
        )),
        Format::Crushrc if blank => Ok(None),
        Format::Json => {
            let node = merge::parse(&text, index).map_err(|(line, m)| error(line, m))?;
            let keys = match node.get("options").and_then(|o| o.get("provider_public_keys")) {
                None | Some(Node::Null) => None,
                Some(keys) => {
                    let strings: Option<Vec<String>> = match keys {
                        Node::Array(items, _) => items.iter().map(Node::text).collect(),
                        _ => None,
                    };
                    let Some(entries) = strings else {
                        let message = format!(
                            "options.provider_public_keys must be a list of strings, not {}",
                            keys.kind()
                        );
                        return Err(error(None, message));
                    };
                    let key = "options.provider_public_keys".into();
                    let origin = Origin::Json { path: path.to_owned(), key };
                    Some(PinnedKeys { entries, origin })
                }
            };
            Ok(Some((Loaded { node, keys }, Vec::new())))
        }
        Format::Crushrc => crushrc(path, &text, index).map(Some),
    }
}

/// A crushrc's part, the object Crush's builder makes of its commands
/// ([`options::apply`]), and its warnings.
pub(super) fn crushrc(
    path: &Path,
    text: &str,
    index: usize,
) -> Result<(Loaded, Vec<Warning>), ConfigError> {
    let error = |line, message| ConfigError {
        path: path.to_owned(),
        line: Some(line),
        message,
    };
    let script = crushrc::parse(text).map_err(|e| error(e.line, e.message))?;
    let applied = options::apply(&script);
    if let Some((line, message)) = applied.error {
        return Err(error(line, shown(&message)));
    }
    let skipped = script
        .skipped
        .into_iter()
        .map(|skipped| Warning::SkippedLine {
            path: path.to_owned(),
            line: skipped.line,
            command: skipped.command,
            reason: skipped.reason,
            counted_off: skipped.turns_off,
        });
    let option_lines = applied
        .warnings
        .into_iter()
        .map(|(line, what)| Warning::OptionLine {
            path: path.to_owned(),
            line,
            what,
        });
    // Without a command that sets something, no `options` at all, as
    // Crush's builder leaves it out.
    let mut node = Node::Object(Vec::new());
    for set in applied.sets {
        let src = Src {
            file: index,
            line: Some(set.line),
            unevaluated: set.unevaluated,
        };
        let value = set.value.map(|value| match value {
            Value::Bool(b) => Node::Bool(b, src),
            Value::Text(t) => Node::Str(t, src),
        });
        put(&mut node, &set.key, value);
    }
    let loaded = Loaded { node, keys: None };
    Ok((loaded, skipped.chain(option_lines).collect()))
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
