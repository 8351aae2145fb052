//! The memory of where keys went: `providers.trust.json` in the data
//! folder, beside the cache but not bound to its bytes (the state file is
//! ignored whenever another program rewrites `providers.json`, and Crush
//! itself does). It records, for each variable a catalog sends and for
//! what the user's own configuration gives each provider id, every place
//! it was ever allowed to reach (the embedded snapshot's, and those of
//! every catalog applied since), the floor below which a catalog is a
//! shrink, and the newest signing time seen. A refresh may add places
//! only for a variable never seen before ([`crate::trust::guard`]); a
//! known one reaching any other place is held, whatever happened between.
//! It holds at most [`guard::MAX_PLACES_IN_ALL`] places in all (about
//! 2.3 MB at the bound with short hosts, far below the
//! [`file::MAX_FILE_BYTES`] any file of the data folder is read and
//! written within): a catalog that would teach more is refused or held,
//! and nothing is forgotten to make room.
//!
//! Missing, it is the embedded snapshot's places and the cache's. There
//! but unreadable (not JSON, another format, not a regular file, written
//! by another user) it is an error, and the guard holds: it fails closed.
//!
//! # Format
//!
//! One JSON object, written whole (a temporary file renamed into place,
//! flushed), under the folder lock:
//!
//! | key | meaning |
//! |---|---|
//! | `version` | `1` |
//! | `places` | each variable's name (without `$`), or `providers.ID` for what the user's configuration gives provider ID ([`guard::configured`]), and the list of places it may reach: `{"to": "url", "scheme", "host", "port"}`, `{"to": "default", "type"}` (no endpoint), `{"to": "variable", "name", "type"}` (the endpoint is that variable) |
//! | `floor` | the catalog a person last applied with `--allow-shrink`: `source` and `providers`, each provider id with its model ids; absent: the embedded snapshot |
//! | `signed_at` | the newest signing time seen of the catalog (seconds since the Unix epoch), when a pinned key verified one |
//! | `hyper_signed_at` | the same of Hyper's provider: here, not only in `hyper.state.json`, which is dropped whenever Crush rewrites `hyper.json` |

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use compact_str::CompactString;
use serde::{Deserialize, Serialize};

use crate::catalog::{Catalog, Target, embedded};
use crate::store::atomic::{self, WriteError};
use crate::store::cache::CacheFiles;
use crate::store::file::{self, FileError};

use super::guard::{self, Unreviewable};
use super::place::Place;

/// The format this version writes and reads.
const VERSION: u32 = 1;

/// Every variable and the places it may reach.
pub(crate) type Places = BTreeMap<String, BTreeSet<Place>>;

/// The ids of a catalog: each provider id and its model ids.
pub(crate) type Ids = BTreeMap<String, BTreeSet<CompactString>>;

/// The ids of `catalog`.
pub fn ids(catalog: &Catalog) -> Ids {
    let models = |p: &crate::catalog::Provider| p.models.iter().map(|m| m.id.clone()).collect();
    catalog
        .providers
        .iter()
        .map(|p| (p.id.clone(), models(p)))
        .collect()
}

/// A catalog a person applied with `--allow-shrink`: what later catalogs
/// must keep half of.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Floor {
    /// Where it came from, for messages.
    pub source: String,
    /// Its ids.
    pub providers: Ids,
}

/// What the memory file holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Memory {
    /// The format, `VERSION`.
    pub version: u32,
    /// Every variable and the places it was ever allowed to reach.
    #[serde(default)]
    pub places: Places,
    /// The catalog a person last applied with `--allow-shrink`; `None`:
    /// the embedded snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<Floor>,
    /// The newest signing time seen of the catalog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed_at: Option<u64>,
    /// The newest signing time seen of Hyper's provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hyper_signed_at: Option<u64>,
}

impl Memory {
    /// What a data folder without a memory file remembers: the embedded
    /// snapshot's places, and those of `cache` (a valid cache, which some
    /// build of this program or Crush wrote), unless it teaches more than
    /// one catalog may ([`guard::MAX_PLACES`]: Crush writes what it
    /// fetches unreviewed), which is then known to send keys nowhere:
    /// what it sends is held, or needs a person.
    pub fn rebuilt(cache: Option<&Catalog>) -> Result<Memory, Unreviewable> {
        let mut memory = Memory {
            version: VERSION,
            ..Memory::default()
        };
        memory.learn(embedded::outline())?;
        match cache.map(guard::places) {
            None | Some(Err(Unreviewable::TooManyVariables | Unreviewable::TooManyPlaces)) => {}
            Some(places) => memory.add(&places?),
        }
        Ok(memory)
    }

    /// Adds every place a variable of `catalog` reaches; why not, for a
    /// catalog whose places are not known ([`guard::places`]).
    pub fn learn(&mut self, catalog: &Catalog) -> Result<(), Unreviewable> {
        self.add(&guard::places(catalog)?);
        Ok(())
    }

    /// Adds `places`, what a catalog teaches ([`guard::places`]).
    pub(crate) fn add(&mut self, places: &Places) {
        for (variable, places) in places {
            let known = match self.places.get_mut(variable) {
                Some(known) => known,
                None => self.places.entry(variable.clone()).or_default(),
            };
            for place in places {
                if !known.contains(place) {
                    known.insert(place.clone());
                }
            }
        }
    }

    /// The newest signing time seen of `target`'s document.
    pub fn signed(&self, target: Target) -> Option<u64> {
        match target {
            Target::Catalog => self.signed_at,
            Target::Hyper => self.hyper_signed_at,
        }
    }

    /// Records a signing time seen of `target`'s document: the newest, or,
    /// when a person applied an older one (`--allow-downgrade`), that one.
    pub fn saw_signature(&mut self, target: Target, signed_at: u64, downgrade_allowed: bool) {
        let newest = match target {
            Target::Catalog => &mut self.signed_at,
            Target::Hyper => &mut self.hyper_signed_at,
        };
        *newest = Some(match *newest {
            Some(newest) if !downgrade_allowed => newest.max(signed_at),
            _ => signed_at,
        });
    }
}

/// Why the memory file cannot be used: then no catalog is applied without
/// a person.
#[derive(Debug, thiserror::Error)]
#[error(
    "the memory of where API keys went, {}, cannot be used ({why}), so no catalog is applied without a person; {}remove it to rebuild it from the embedded snapshot and the cache, which forgets every other place a person approved (--allow-key-move), the floor and the newest signing time",
    path.display(),
    why.keep()
)]
pub struct Unusable {
    path: PathBuf,
    why: Why,
}

/// What is wrong with the memory file.
#[derive(Debug, thiserror::Error)]
enum Why {
    #[error(transparent)]
    Read(#[from] FileError),
    #[error("{0}")]
    Untrusted(String),
    #[error("not the JSON it should be: {0}")]
    NotJson(serde_json::Error),
    #[error("format {0}, not {VERSION}: written by another version")]
    Version(u32),
}

impl Why {
    /// How to keep what it knows, when there is a way.
    fn keep(&self) -> &'static str {
        match self {
            Why::Untrusted(_) => {
                "to keep what it knows, if you trust what it holds, make it yours and writable by you alone (chown, chmod go-w); or "
            }
            Why::Version(_) => {
                "to keep what it knows, use the version of this tool that wrote it; or "
            }
            Why::Read(_) | Why::NotJson(_) => "",
        }
    }
}

/// The memory file of `files`: `Ok(None)` when there is none; why it
/// cannot be used (naming it) when it is there but cannot be read, is not
/// one, or may have been written by another user.
pub(crate) fn read(files: &CacheFiles) -> Result<Option<Memory>, Unusable> {
    let fail = |why| Unusable {
        path: files.memory.clone(),
        why,
    };
    let (bytes, meta) = match file::read_regular(&files.memory, file::MAX_FILE_BYTES) {
        Ok(Some(read)) => read,
        Ok(None) => return Ok(None),
        // A data folder that is a file holds no memory (nor a cache).
        Err(FileError::Io(e)) if e.kind() == std::io::ErrorKind::NotADirectory => return Ok(None),
        Err(e) => return Err(fail(Why::Read(e))),
    };
    if let Some(why) = file::untrusted(&meta) {
        return Err(fail(Why::Untrusted(why)));
    }
    let memory: Memory = serde_json::from_slice(&bytes).map_err(|e| fail(Why::NotJson(e)))?;
    match memory.version {
        VERSION => Ok(Some(memory)),
        other => Err(fail(Why::Version(other))),
    }
}

/// Whether a data folder has a memory file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum FileState {
    /// It has one.
    Recorded,
    /// It has none: what is known is the embedded snapshot's and the
    /// cache's places.
    Missing,
    /// It has one that cannot be used.
    Unusable,
}

/// What `providers --status` says of the memory of a data folder.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Summary {
    /// The file.
    pub path: String,
    /// Whether there is one.
    pub state: FileState,
    /// Why it cannot be used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// The variables followed, and the providers whose configured key is
    /// (what the guard knows: the file's with the embedded snapshot's).
    pub variables: usize,
    /// See `variables`.
    pub providers: usize,
    /// The floor: the embedded snapshot's, when `None`.
    pub floor: Option<FloorSummary>,
    /// The newest signing time seen.
    pub signed_at: Option<String>,
}

/// A floor a person chose.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FloorSummary {
    /// Where it came from.
    pub source: String,
    /// How many providers and models it has.
    pub providers: usize,
    /// See `providers`.
    pub models: usize,
}

/// The memory of `files` as the guard would use it against `cache` (the
/// valid cache), summed up.
pub(crate) fn summary(files: &CacheFiles, cache: Option<&Catalog>) -> Summary {
    let read = read(files);
    let state = match &read {
        Ok(Some(_)) => FileState::Recorded,
        Ok(None) => FileState::Missing,
        Err(_) => FileState::Unusable,
    };
    let problem = read.as_ref().err().map(ToString::to_string);
    let memory = read
        .ok()
        .and_then(|file| super::hyper::effective(files, file, cache).ok());
    let places = memory.as_ref().map(|m| &m.places);
    let configured = places.map_or(0, |p| p.keys().filter(|h| guard::is_configured(h)).count());
    let floor = memory.as_ref().and_then(|m| m.floor.as_ref());
    Summary {
        path: files.memory.display().to_string(),
        state,
        problem,
        variables: places.map_or(0, BTreeMap::len) - configured,
        providers: configured,
        floor: floor.map(|floor| FloorSummary {
            source: floor.source.clone(),
            providers: floor.providers.len(),
            models: floor.providers.values().map(BTreeSet::len).sum(),
        }),
        signed_at: memory
            .and_then(|m| m.signed_at)
            .map(crate::store::state::rfc3339),
    }
}

/// Changes the memory file of `files`: `change` gets the one there now
/// (`now`, as the caller read it under the same lock; `None`: read here),
/// or, without one, `start`; the result is written (atomically, flushed)
/// when it differs or there was none. The caller holds the folder lock, so
/// that no other writer's change is lost. A memory file that cannot be
/// read is replaced by `start` when `replace_unreadable`: for
/// `update-providers embedded`, the way back a person takes.
pub fn write(
    files: &CacheFiles,
    now: Option<Option<Memory>>,
    start: impl FnOnce() -> Result<Memory, Unreviewable>,
    change: impl FnOnce(&mut Memory) -> Result<(), Unreviewable>,
    replace_unreadable: bool,
) -> Result<(), WriteError> {
    let failed = WriteError::at("record where API keys go in", &files.memory);
    let changed = || -> Result<Option<Memory>, Unreviewable> {
        let now = match now.map_or_else(|| read(files), Ok) {
            Err(_) if replace_unreadable => None,
            other => other?,
        };
        let existed = now.is_some();
        let mut memory = now.map_or_else(start, Ok)?;
        let before = memory.clone();
        change(&mut memory)?;
        Ok((!existed || memory != before).then_some(memory))
    };
    let memory = match changed() {
        Ok(Some(memory)) => memory,
        Ok(None) => return Ok(()),
        Err(e) => return Err(failed(std::io::Error::other(e))),
    };
    let json = bytes_of(&memory, file::MAX_FILE_BYTES).map_err(failed)?;
    atomic::write_atomically(&files.memory, &json, true)
}

/// The memory file's bytes; never more than `limit`, what its reader
/// accepts: a memory written larger would make every later update fail.
/// Such a write is an error of kind `FileTooLarge`, and nothing is
/// written (neither the memory nor the document that taught it).
fn bytes_of(memory: &Memory, limit: usize) -> Result<Vec<u8>, std::io::Error> {
    let json = serde_json::to_vec_pretty(memory)?;
    if json.len() > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!(
                "it would be {} bytes, more than the {} MiB its reader accepts; what would have taught it this is not applied, and the memory stays as it was",
                json.len(),
                limit / (1024 * 1024)
            ),
        ));
    }
    Ok(json)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::validate;
    use crate::store::cache;
    use std::time::Duration;

    const CATALOG: &str = r#"[{"id":"x","name":"X","api_key":"$X_KEY","api_endpoint":"https://x.example/v1","models":[{"id":"m"}]}]"#;

    #[test]
    fn without_a_file_it_is_the_snapshot_and_the_cache() {
        let cache = validate(CATALOG.as_bytes()).unwrap();
        let memory = Memory::rebuilt(Some(&cache)).unwrap();
        assert!(memory.places.contains_key("ANTHROPIC_API_KEY"));
        assert_eq!(
            memory.places["X_KEY"]
                .iter()
                .map(Place::to_string)
                .collect::<Vec<_>>(),
            ["https://x.example:443"]
        );
        // A file's memory always has the snapshot's too.
        let file = Memory {
            version: VERSION,
            places: Places::new(),
            floor: None,
            signed_at: Some(5),
            hyper_signed_at: None,
        };
        let files = CacheFiles::in_dir("/nonexistent");
        let memory = super::super::hyper::effective(&files, Some(file), Some(&cache)).unwrap();
        assert!(memory.places.contains_key("ANTHROPIC_API_KEY"));
        assert!(
            !memory.places.contains_key("X_KEY"),
            "the cache is not the file's"
        );
        assert_eq!(memory.signed_at, Some(5));
    }

    /// A cache that teaches more than one catalog may (Crush writes what
    /// it fetches unreviewed) teaches a rebuilt memory nothing: the
    /// snapshot's places alone are known.
    #[test]
    fn a_cache_teaching_too_much_teaches_a_rebuilt_memory_nothing() {
        let key: String = (0..=guard::MAX_VARIABLES)
            .map(|i| format!("$V{i}"))
            .collect();
        let text =
            format!(r#"[{{"id":"x","name":"X","api_key":"{key}","models":[{{"id":"m"}}]}}]"#);
        let cache = validate(text.as_bytes()).unwrap();
        let memory = Memory::rebuilt(Some(&cache)).unwrap();
        assert_eq!(memory, Memory::rebuilt(None).unwrap());
    }

    #[test]
    fn the_newest_signing_time_is_kept_unless_a_person_went_back() {
        let mut memory = Memory::rebuilt(None).unwrap();
        memory.saw_signature(Target::Catalog, 10, false);
        memory.saw_signature(Target::Catalog, 5, false);
        assert_eq!(memory.signed_at, Some(10));
        memory.saw_signature(Target::Catalog, 5, true);
        assert_eq!(memory.signed_at, Some(5));
        // Each document has its own.
        memory.saw_signature(Target::Hyper, 7, false);
        assert_eq!(memory.signed(Target::Hyper), Some(7));
        assert_eq!(memory.signed(Target::Catalog), Some(5));
    }

    /// Written once, read back the same; unreadable, of another format or
    /// another user's, it is an error naming it.
    #[test]
    fn it_is_written_whole_and_refused_when_unreadable() {
        let tmp = tempfile::tempdir().unwrap();
        let files = CacheFiles::in_dir(tmp.path());
        assert!(read(&files).unwrap().is_none());
        let catalog = validate(CATALOG.as_bytes()).unwrap();
        let _locked = cache::lock(&files, None, Duration::from_secs(5)).unwrap();
        let learn = |m: &mut Memory| m.learn(&catalog);
        write(&files, None, || Memory::rebuilt(None), learn, false).unwrap();
        let memory = read(&files).unwrap().unwrap();
        assert!(memory.places.contains_key("X_KEY"));
        for bad in [
            &b"{garbage"[..],
            br#"{"version":2}"#,
            br#"{"version":1,"places":{"K":[{"to":"moon"}]}}"#,
        ] {
            std::fs::write(&files.memory, bad).unwrap();
            let e = read(&files).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!(
                    "the memory of where API keys went, {}, cannot be used (",
                    files.memory.display()
                )) && e.ends_with(
                    "remove it to rebuild it from the embedded snapshot and the cache, which forgets every other place a person approved (--allow-key-move), the floor and the newest signing time"
                ),
                "{e}"
            );
            assert!(write(&files, None, || Memory::rebuilt(None), |_| Ok(()), false).is_err());
        }
        // Of another version, the way to keep it comes first.
        std::fs::write(&files.memory, br#"{"version":2}"#).unwrap();
        assert!(read(&files).unwrap_err().to_string().contains(
            "to keep what it knows, use the version of this tool that wrote it; or remove it"
        ));
    }

    /// A memory larger than its reader accepts is never written: the
    /// write is refused as too large, and the file stays as it was.
    #[test]
    fn a_memory_too_large_to_read_back_is_not_written() {
        let memory = Memory::rebuilt(None).unwrap();
        let size = bytes_of(&memory, file::MAX_FILE_BYTES).unwrap().len();
        let e = bytes_of(&memory, size - 1).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::FileTooLarge);
        assert!(
            e.to_string()
                .contains("more than the 0 MiB its reader accepts")
        );
        assert!(bytes_of(&memory, size).is_ok());
    }
}
