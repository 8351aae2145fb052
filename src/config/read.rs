//! Reading one configuration file into its part of the merge: a JSON
//! file as it is, a crushrc as the object its commands build.

use std::path::Path;

use crate::store::file;

use super::merge::{self, Node};
use super::{ConfigError, Format, Origin, PinnedKeys, Warning, crushrc};

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
        Format::Crushrc => {
            let (node, warnings) = crushrc::read(path, &text, index)?;
            Ok(Some((Loaded { node, keys: None }, warnings)))
        }
    }
}
