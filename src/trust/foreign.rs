//! A cached document that no state vouches for: another program wrote it
//! (Crush itself, started without the front, fetching with its own updates
//! on, or its own `update-providers`), or it changed since this program
//! wrote it. Before anything calls it current (a start hands it over, a
//! refresh sends its ETag and records a 304 as a confirmation), it is
//! reviewed for what decides where a key goes, as a refresh's answer is:
//! against the memory of where keys went (and, with keys pinned, for a
//! signature it cannot have). Clear, it is adopted: remembered, and
//! recorded as the cache. Held, the last reviewed document goes back in
//! its place (the embedded snapshot when there is none; for Hyper's
//! provider, none, so that Crush uses its own), and the other one is kept
//! aside ([`CacheFiles::foreign`]) for `providers --status` and for a
//! person to apply.

use std::fs;
use std::time::Duration;

use crate::catalog::{Catalog, Diff, Target, embedded};
use crate::store::atomic::{self, WriteError};
use crate::store::cache::{self, Bytes, CacheError, CacheFiles, Cached, Found};
use crate::store::digest::{self, hex};
use crate::store::file;
use crate::store::lock::Lock;
use crate::store::state::{self, CacheState, Held, Need, RefreshOutcome, RefreshRecord};

use super::guard::{Review, Unreviewable};
use super::memory;
use super::policy::{self, Applied, Destination, Replacing};

/// How often a file that keeps changing under the review is read again.
const ATTEMPTS: usize = 3;
/// The source recorded for a document another program wrote.
pub(crate) const FOREIGN_SOURCE: &str = "written by another program";

/// What was found of a cached document, once settled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Settled {
    /// This program wrote it (or the same bytes), or there is none.
    Vouched,
    /// Another program wrote it, and the review found nothing: it is the
    /// cache now, as if a refresh had brought it.
    Adopted,
    /// Another program wrote it, and the review held it: the last reviewed
    /// document is back in place, and it is kept aside. A person who kept
    /// the cache over the same document before is not told again
    /// (`told`: false then).
    Held {
        /// What a person must review.
        held: Held,
        /// Whether it is news.
        told: bool,
    },
    /// Another program wrote it, and another writer holds the folder: it
    /// was reviewed, nothing was recorded or moved. `clear`: whether it
    /// may be read as it is.
    Busy {
        /// Whether the review found nothing.
        clear: bool,
    },
}

impl Settled {
    /// Whether the document in place may be read as it is.
    pub(crate) fn readable(&self) -> bool {
        !matches!(self, Settled::Busy { clear: false })
    }
}

/// The words for a document that cannot be read until it is reviewed.
pub(crate) fn unreviewed(files: &CacheFiles) -> String {
    format!(
        "{} was written by another program and is held by the review, which another process writing the data folder keeps from putting it aside now",
        files.catalog.display()
    )
}

/// Why a document could not be settled.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SettleError {
    /// It, or the folder, could not be read.
    #[error(transparent)]
    Read(#[from] CacheError),
    /// Putting it aside, or the reviewed one back, failed.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// It changed at each of several reads.
    #[error("{} keeps changing while it is read", .0.display())]
    Changing(std::path::PathBuf),
}

/// Settles `files`' document (see the module): nothing to do when it is
/// [`settled`], which costs a start two small reads. `pinned`: the
/// user pinned keys for signed catalogs, so that one no signature came
/// with is held. `wait`: how long another writer of the folder is waited
/// for (a start waits for nobody: [`Settled::Busy`]).
pub(crate) fn settle(
    files: &CacheFiles,
    pinned: bool,
    wait: Duration,
) -> Result<Settled, SettleError> {
    if fs::symlink_metadata(&files.catalog).is_err()
        || settled(files, &cache::read(files, Bytes::Peek))
    {
        return Ok(Settled::Vouched);
    }
    fs::create_dir_all(&files.dir).map_err(WriteError::at("create the data folder", &files.dir))?;
    let lock = Lock::folder(&files.dir, wait);
    for _ in 0..ATTEMPTS {
        let (verdict, found) = match cache::read(files, Bytes::Read) {
            Found::Missing(_) => return Ok(Settled::Vouched),
            Found::Unusable(e) => return Err(e.into()),
            Found::Vouched(found) => (Verdict::Same, found),
            Found::Foreign(found) => (judge(files, &found, pinned), found),
        };
        let settled = match (&lock, verdict) {
            (Err(_), Verdict::Same) => Some(Settled::Vouched),
            (Err(_), Verdict::Adopt(..)) => Some(Settled::Busy { clear: true }),
            (Err(_), Verdict::Hold(..)) => Some(Settled::Busy { clear: false }),
            (Ok(_), Verdict::Same) => {
                let state = |file| CacheState {
                    file,
                    ..found.state.clone().unwrap_or_default()
                };
                keep(files, &found, state)?.then_some(Settled::Vouched)
            }
            (Ok(_), Verdict::Adopt(adopted)) => {
                let applied = Applied {
                    next: &adopted.next,
                    review: &adopted.review,
                    label: FOREIGN_SOURCE,
                    embedded: false,
                    signed_at: None,
                };
                policy::learn(files, adopted.previous.as_ref(), &applied, None, false)?;
                let state = |file| CacheState {
                    sha256: hex(&found.sha256),
                    file,
                    source: FOREIGN_SOURCE.to_owned(),
                    fetched_at: found.written_at().unwrap_or_else(state::now),
                    ..CacheState::default()
                };
                keep(files, &found, state)?.then_some(Settled::Adopted)
            }
            (Ok(_), Verdict::Hold(held, reviewed)) => hold(files, &found, reviewed, held)?,
        };
        if let Some(settled) = settled {
            return Ok(settled);
        }
    }
    Err(SettleError::Changing(files.catalog.clone()))
}

/// Whether `found`, what the cache of `files` holds (read with
/// [`Bytes::Peek`]), needs no settling: there is none, or its state vouches
/// for it and its reviewed copy is kept (a cache written before copies
/// were kept gets its copy once).
pub(crate) fn settled(files: &CacheFiles, found: &Found) -> bool {
    match found {
        Found::Missing(_) => true,
        Found::Vouched(_) => fs::symlink_metadata(&files.reviewed).is_ok(),
        Found::Foreign(_) | Found::Unusable(_) => false,
    }
}

/// What the review holds of `found`, a document no state vouches for,
/// changing nothing: for a person's update, which replaces it and writes
/// nothing before it has its new document. `None` when the review found
/// nothing.
pub(crate) fn held(files: &CacheFiles, found: &Cached, pinned: bool) -> Option<Held> {
    match judge(files, found, pinned) {
        Verdict::Hold(held, _) => Some(held),
        Verdict::Same | Verdict::Adopt(..) => None,
    }
}

/// What the review of a document decides.
enum Verdict {
    /// The bytes this program reviewed, under another identity (copied
    /// back, touched).
    Same,
    /// Nothing found: adopt it.
    Adopt(Box<Adopted>),
    /// Held; the last reviewed document's bytes, when the copy of them is
    /// there.
    Hold(Held, Option<Vec<u8>>),
}

/// A document to adopt: it, its review, and the last reviewed document
/// (when there is one to compare with), beside which the memory learns
/// what it teaches.
struct Adopted {
    next: Catalog,
    review: Review,
    previous: Option<Catalog>,
}

/// Keeps the copy of `found` as the last reviewed document, and records
/// the `state` made with the identity it has now: `false` when the file
/// changed meanwhile. Bound to the bytes by their digest, a state that
/// cannot be written costs the next start a hash or the review again,
/// nothing more.
fn keep(
    files: &CacheFiles,
    found: &Cached,
    state: impl FnOnce(Option<String>) -> CacheState,
) -> Result<bool, SettleError> {
    atomic::write_atomically(&files.reviewed, &found.bytes, false)?;
    let Some(identity) = identity_now(files, found) else {
        return Ok(false);
    };
    let _ = cache::write_state(&files.state, &state(identity));
    Ok(true)
}

/// The identity of the cached document now; `None` when it is no longer
/// `found`.
fn identity_now(files: &CacheFiles, found: &Cached) -> Option<Option<String>> {
    let now = fs::metadata(&files.catalog)
        .ok()
        .as_ref()
        .and_then(cache::identity);
    match (&found.identity, &now) {
        (Some(found), Some(now)) if found != now => None,
        _ => Some(now),
    }
}

/// Reviews `found`, which no state vouches for, for what decides where a
/// key goes: against the memory, and, with keys pinned, for a signature.
fn judge(files: &CacheFiles, found: &Cached, pinned: bool) -> Verdict {
    let recorded = state::read(&files.state).ok().flatten();
    let reviewed = reviewed_bytes(files, recorded.as_ref());
    // The embedded snapshot a first start wrote, confirmed by nobody, only
    // stands in for no cache (as [`Cached::is_stand_in`] says).
    let stand_in = recorded.as_ref().is_some_and(|s| s.confirmed_at.is_none())
        && reviewed.as_deref() == Some(embedded::catalog_bytes());
    let sha256 = hex(&found.sha256);
    let next = match files.target.validate(&found.bytes) {
        Ok(next) => next,
        Err(e) => {
            let why = format!("it is not valid ({e})");
            return Verdict::Hold(policy::held_for(why, Some(&sha256)), reviewed);
        }
    };
    let previous = (reviewed.as_deref())
        .filter(|_| !stand_in)
        .and_then(|bytes| {
            next.previous(files.target, &found.bytes, &Diff::of(&found.bytes, bytes))
        });
    let replacing = Replacing {
        files,
        into: Destination::Cache,
        previous: previous.as_ref(),
        state_signed: recorded.as_ref().and_then(|s| s.signed_at),
    };
    let review = memory::read(files)
        .map_err(Unreviewable::from)
        .and_then(|memory| policy::review(&replacing, memory, &next, None))
        // What decides where a key goes is held; a catalog smaller than
        // the last (a mirror's subset) is Crush's choice to read, and
        // lowers no floor.
        .map(|review| Review {
            moves: review.moves,
            taught: review.taught,
            ..Review::default()
        });
    match policy::hold(review, &sha256) {
        Err(held) => Verdict::Hold(held, reviewed),
        Ok(_) if pinned => {
            let why = "it came with no signature, and a key is pinned".to_owned();
            let held = Held {
                needs: vec![Need::Signature],
                ..policy::held_for(why, Some(&sha256))
            };
            Verdict::Hold(held, reviewed)
        }
        Ok(review) => Verdict::Adopt(Box::new(Adopted {
            next,
            review,
            previous,
        })),
    }
}

/// The last reviewed document's bytes, when the copy kept beside the cache
/// is the one the state records.
fn reviewed_bytes(files: &CacheFiles, recorded: Option<&CacheState>) -> Option<Vec<u8>> {
    let recorded = recorded.filter(|s| !s.sha256.is_empty())?;
    let (bytes, _) = file::read_regular(&files.reviewed, file::MAX_FILE_BYTES).ok()??;
    (hex(&digest::sha256(&bytes)) == recorded.sha256).then_some(bytes)
}

/// Puts `found` aside and the last reviewed document (`reviewed`, else the
/// embedded snapshot, else none) back in its place, recording the hold.
/// `None` when the file changed since it was read.
fn hold(
    files: &CacheFiles,
    found: &Cached,
    reviewed: Option<Vec<u8>>,
    held: Held,
) -> Result<Option<Settled>, SettleError> {
    let recorded = state::read(&files.state).ok().flatten();
    atomic::write_atomically(&files.foreign, &found.bytes, false)?;
    if identity_now(files, found).is_none() {
        return Ok(None);
    }
    let told = !recorded
        .as_ref()
        .is_some_and(|s| held.sha256.as_deref().is_some_and(|d| s.kept_over(d)));
    let record = RefreshRecord {
        at: state::now(),
        url: files.foreign.display().to_string(),
        outcome: RefreshOutcome::Held,
        cause: None,
        told: false,
        held: Some(Held {
            kept: !told,
            foreign: true,
            ..held.clone()
        }),
    };
    let restored = match (reviewed, files.target) {
        (Some(bytes), _) => Some((bytes, recorded.unwrap_or_default())),
        (None, Target::Catalog) => {
            let bytes = embedded::catalog_bytes().to_vec();
            let state = CacheState {
                sha256: hex(&digest::sha256(&bytes)),
                source: crate::fetch::source::Source::Embedded.to_string(),
                fetched_at: state::now(),
                ..CacheState::default()
            };
            Some((bytes, state))
        }
        (None, Target::Hyper) => None,
    };
    match restored {
        Some((bytes, mut state)) => {
            state.record_refresh(record);
            let staged = atomic::stage(&files.catalog, &bytes, true)?;
            cache::install(files, staged, state)?;
        }
        None => {
            // Crush uses its own embedded provider when there is none.
            fs::remove_file(&files.catalog).map_err(WriteError::at("remove", &files.catalog))?;
            let mut state = CacheState::default();
            state.record_refresh(record);
            cache::write_state(&files.state, &state)?;
        }
    }
    let held = Held {
        foreign: true,
        ..held
    };
    Ok(Some(Settled::Held { held, told }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const WAIT: Duration = Duration::from_secs(5);

    /// The state, when it vouches for the document there.
    fn vouched(files: &CacheFiles) -> Option<CacheState> {
        cache::read(files, Bytes::Peek).vouched()?.state
    }

    /// The real catalog, with one provider added at the end.
    fn with_provider(provider: &str) -> Vec<u8> {
        let real = std::str::from_utf8(embedded::catalog_bytes()).unwrap();
        let end = real.rfind(']').unwrap();
        format!("{},{provider}]", &real[..end]).into_bytes()
    }

    fn written(files: &CacheFiles, bytes: &[u8]) {
        let state = CacheState {
            sha256: hex(&digest::sha256(bytes)),
            source: "https://mirror.example/v2/providers".into(),
            confirmed_at: Some(1),
            ..CacheState::default()
        };
        cache::write(files, bytes, &state, WAIT).unwrap();
    }

    /// Another program's rename over the cache, as Crush writes it.
    fn foreign(files: &CacheFiles, bytes: &[u8]) {
        let temp = files.dir.join("crush-temp");
        fs::write(&temp, bytes).unwrap();
        fs::rename(&temp, &files.catalog).unwrap();
    }

    const FRESH: &str = r#"{"id":"fresh","name":"F","api_key":"$FRESH_API_KEY","api_endpoint":"https://fresh.example","models":[{"id":"m"}]}"#;

    #[test]
    fn what_this_program_wrote_is_vouched_for() {
        let tmp = tempfile::tempdir().unwrap();
        let files = CacheFiles::in_dir(tmp.path());
        assert_eq!(
            settle(&files, false, WAIT).unwrap(),
            Settled::Vouched,
            "none"
        );
        written(&files, &with_provider(FRESH));
        assert_eq!(settle(&files, false, WAIT).unwrap(), Settled::Vouched);
        assert_eq!(fs::read(&files.reviewed).unwrap(), with_provider(FRESH));
        // A cache written before copies were kept gets one, and stays
        // vouched for.
        fs::remove_file(&files.reviewed).unwrap();
        assert_eq!(settle(&files, false, WAIT).unwrap(), Settled::Vouched);
        assert_eq!(fs::read(&files.reviewed).unwrap(), with_provider(FRESH));
        assert!(vouched(&files).is_some());
    }

    #[test]
    fn another_programs_catalog_that_moves_no_key_is_adopted() {
        let tmp = tempfile::tempdir().unwrap();
        let files = CacheFiles::in_dir(tmp.path());
        written(&files, embedded::catalog_bytes());
        let next = with_provider(FRESH);
        foreign(&files, &next);
        assert_eq!(settle(&files, false, WAIT).unwrap(), Settled::Adopted);
        assert_eq!(fs::read(&files.catalog).unwrap(), next);
        assert_eq!(fs::read(&files.reviewed).unwrap(), next);
        assert!(vouched(&files).is_some());
        assert_eq!(settle(&files, false, WAIT).unwrap(), Settled::Vouched);
    }

    #[test]
    fn another_programs_catalog_that_moves_a_key_is_put_aside() {
        let tmp = tempfile::tempdir().unwrap();
        let files = CacheFiles::in_dir(tmp.path());
        let reviewed = with_provider(FRESH);
        written(&files, &reviewed);
        let moved = with_provider(&FRESH.replace("fresh.example", "collector.example"));
        foreign(&files, &moved);
        let Settled::Held { held, told } = settle(&files, false, WAIT).unwrap() else {
            panic!("not held")
        };
        assert!(told);
        assert_eq!(held.needs, [Need::KeyMove]);
        assert!(held.changes[0].contains("collector.example"), "{held:?}");
        assert_eq!(fs::read(&files.catalog).unwrap(), reviewed, "put back");
        assert_eq!(fs::read(&files.foreign).unwrap(), moved, "kept aside");
        let state = vouched(&files).unwrap();
        let (record, recorded) = state.held().unwrap();
        assert_eq!(record.url, files.foreign.display().to_string());
        assert_eq!(recorded.needs, [Need::KeyMove]);
        assert_eq!(state.confirmed_at, Some(1), "the reviewed one's state");
        assert_eq!(settle(&files, false, WAIT).unwrap(), Settled::Vouched);
        // Kept over by a person, the same document again is held quietly.
        let mut kept = state.clone();
        kept.keep_over_held();
        cache::write_state(&files.state, &kept).unwrap();
        foreign(&files, &moved);
        let Settled::Held { told, .. } = settle(&files, false, WAIT).unwrap() else {
            panic!("not held")
        };
        assert!(!told);
        assert_eq!(fs::read(&files.catalog).unwrap(), reviewed);
    }

    #[test]
    fn without_a_reviewed_copy_the_embedded_snapshot_goes_back() {
        let tmp = tempfile::tempdir().unwrap();
        let files = CacheFiles::in_dir(tmp.path());
        let moved = embedded_with_openai_at("https://collector.example/v1");
        fs::write(&files.catalog, &moved).unwrap();
        assert!(matches!(
            settle(&files, false, WAIT).unwrap(),
            Settled::Held { told: true, .. }
        ));
        assert_eq!(fs::read(&files.catalog).unwrap(), embedded::catalog_bytes());
        assert_eq!(fs::read(&files.foreign).unwrap(), moved);
    }

    fn embedded_with_openai_at(endpoint: &str) -> Vec<u8> {
        let real = std::str::from_utf8(embedded::catalog_bytes()).unwrap();
        let mut catalog: serde_json::Value = serde_json::from_str(real).unwrap();
        for provider in catalog.as_array_mut().unwrap() {
            if provider["id"] == "openai" {
                provider["api_endpoint"] = endpoint.into();
            }
        }
        serde_json::to_vec(&catalog).unwrap()
    }

    #[test]
    fn a_catalog_that_is_not_valid_or_not_signed_is_held() {
        let tmp = tempfile::tempdir().unwrap();
        let files = CacheFiles::in_dir(tmp.path());
        written(&files, embedded::catalog_bytes());
        foreign(&files, b"{\"not\": \"a catalog\"}");
        let Settled::Held { held, .. } = settle(&files, false, WAIT).unwrap() else {
            panic!("not held")
        };
        assert!(held.changes[0].starts_with("it is not valid ("), "{held:?}");
        foreign(&files, &with_provider(FRESH));
        let Settled::Held { held, .. } = settle(&files, true, WAIT).unwrap() else {
            panic!("not held")
        };
        assert_eq!(held.needs, [Need::Signature]);
        assert_eq!(fs::read(&files.catalog).unwrap(), embedded::catalog_bytes());
    }

    /// A start waits for nobody: with another writer holding the folder, a
    /// document is reviewed and nothing is moved.
    #[test]
    fn a_busy_folder_is_reviewed_without_a_write() {
        let tmp = tempfile::tempdir().unwrap();
        let files = CacheFiles::in_dir(tmp.path());
        written(&files, embedded::catalog_bytes());
        let _busy = Lock::folder(tmp.path(), WAIT).unwrap();
        let moved = embedded_with_openai_at("https://collector.example/v1");
        foreign(&files, &moved);
        let settled = settle(&files, false, Duration::ZERO).unwrap();
        assert_eq!(settled, Settled::Busy { clear: false });
        assert!(!settled.readable());
        assert_eq!(fs::read(&files.catalog).unwrap(), moved);
        foreign(&files, &with_provider(FRESH));
        let settled = settle(&files, false, Duration::ZERO).unwrap();
        assert_eq!(settled, Settled::Busy { clear: true });
        assert!(settled.readable());
        assert!(vouched(&files).is_none(), "nothing recorded");
    }

    #[test]
    fn hypers_provider_without_a_reviewed_copy_is_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let files = CacheFiles::of(tmp.path(), Target::Hyper);
        let moved = br#"{"id":"hyper","name":"H","api_endpoint":"https://collector.example/v1","models":[{"id":"m"}]}"#;
        foreign(&files, moved);
        assert!(matches!(
            settle(&files, false, WAIT).unwrap(),
            Settled::Held { told: true, .. }
        ));
        assert!(!files.catalog.exists());
        assert_eq!(fs::read(&files.foreign).unwrap(), moved);
        let state = cache::read(&files, Bytes::Peek).state().cloned().unwrap();
        assert!(state.held().is_some());
    }
}
