//! The on-disk cache: `providers.json` (a plain catalog any Crush build can
//! read) and, beside it, a small state file bound to those bytes by their
//! SHA-256 (see [`crate::store::state`]). What is there is read one way
//! ([`read`] into [`Found`]). Replacing the cache is atomic and durable: a
//! reader sees the old file or the new one, never a mix; the new file is
//! flushed to disk before it is renamed into place and the folder after,
//! so that a power cut after a reported success cannot bring the old
//! catalog back; and a failure leaves the old one as it was.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::catalog::{Target, ValidationError};
use crate::store::atomic::{Staged, WriteError, stage, write_atomically};
use crate::store::digest::{self, hex};
use crate::store::file::{self, FileError};
use crate::store::lock::Lock;
use crate::store::state::{self, CacheState};
use crate::store::validators::Validators;

/// The cache's files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheFiles {
    /// The folder holding both files.
    pub dir: PathBuf,
    /// The cached document: `providers.json`, or `hyper.json`.
    pub catalog: PathBuf,
    /// Its state file: `providers.state.json`, or `hyper.state.json`.
    pub state: PathBuf,
    /// `providers.trust.json`: one memory of where keys went for both
    /// documents, since a key is the same key whichever sends it.
    pub memory: PathBuf,
    /// A copy of the last document this program reviewed and wrote, kept
    /// beside it (`providers.reviewed.json`, `hyper.reviewed.json`): what a
    /// start puts back when another program wrote one that moves a key
    /// ([`crate::trust::foreign`]).
    pub(crate) reviewed: PathBuf,
    /// Where a document another program wrote is kept once it was held
    /// (`providers.foreign.json`, `hyper.foreign.json`), for a person.
    pub(crate) foreign: PathBuf,
    /// Which document is cached.
    pub target: Target,
}

impl CacheFiles {
    /// The cache files inside `dir`.
    pub fn in_dir(dir: impl Into<PathBuf>) -> Self {
        Self::of(dir, Target::Catalog)
    }

    /// The files of `target`'s document inside `dir`.
    pub fn of(dir: impl Into<PathBuf>, target: Target) -> Self {
        let dir = dir.into();
        // Hyper's provider is Crush's `hyper.json`, beside the catalog; each
        // document's own files are named after it.
        let document = match target {
            Target::Catalog => "providers",
            Target::Hyper => "hyper",
        };
        let named = |kind: &str| dir.join(format!("{document}{kind}.json"));
        CacheFiles {
            catalog: named(""),
            state: named(".state"),
            memory: dir.join("providers.trust.json"),
            reviewed: named(".reviewed"),
            foreign: named(".foreign"),
            dir,
            target,
        }
    }

    /// The files of `target`'s document in the same folder.
    pub fn with_target(&self, target: Target) -> Self {
        Self::of(self.dir.clone(), target)
    }
}

/// What the cache holds of one document ([`read`]).
#[derive(Debug)]
pub(crate) enum Found {
    /// No document; the state recorded for none, when a first fetch that
    /// failed or was held had no snapshot to stand in (Hyper's provider).
    Missing(Option<CacheState>),
    /// A document this program wrote: its state vouches for it.
    Vouched(Cached),
    /// A document no state vouches for: another program wrote it, or it
    /// changed since (not validated).
    Foreign(Cached),
    /// One that cannot be used, and why.
    Unusable(CacheError),
}

/// Whether a reader of the cache needs its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bytes {
    /// Read them.
    Read,
    /// Not when the state vouches for the file by its identity (the front,
    /// whose Crush reads the file itself): then they are left empty.
    Peek,
}

impl Found {
    /// The state recorded: of the document this program wrote, or for none.
    pub(crate) fn state(&self) -> Option<&CacheState> {
        match self {
            Found::Vouched(cached) => cached.state.as_ref(),
            Found::Missing(state) => state.as_ref(),
            Found::Foreign(_) | Found::Unusable(_) => None,
        }
    }

    /// The document, when this program wrote it.
    pub(crate) fn vouched(self) -> Option<Cached> {
        match self {
            Found::Vouched(cached) => Some(cached),
            _ => None,
        }
    }

    /// The document of `files`, when it is a valid one: `Ok(None)` when
    /// there is none. A state that vouches for it proves it was validated
    /// when written, which spares parsing it.
    pub(crate) fn valid(self, files: &CacheFiles) -> Result<Option<Cached>, CacheError> {
        match self {
            Found::Missing(_) => Ok(None),
            Found::Vouched(cached) => Ok(Some(cached)),
            Found::Foreign(cached) => match files.target.validate(&cached.bytes) {
                Ok(_) => Ok(Some(cached)),
                Err(source) => Err(CacheError::Invalid {
                    target: files.target,
                    path: files.catalog.clone(),
                    source,
                }),
            },
            Found::Unusable(e) => Err(e),
        }
    }
}

/// A cached document as found on disk.
#[derive(Debug)]
pub(crate) struct Cached {
    /// Its bytes (empty when peeked: [`Bytes::Peek`]).
    pub bytes: Vec<u8>,
    /// Their SHA-256.
    pub sha256: [u8; 32],
    /// The state file, only when it describes exactly these bytes.
    pub state: Option<CacheState>,
    /// Its modification time.
    pub modified: Option<SystemTime>,
    /// Its [`identity`] as read.
    pub identity: Option<String>,
    /// Why the state file beside it could not be read, when it could not
    /// (something else than a regular file stands there).
    pub state_problem: Option<String>,
}

impl Cached {
    /// The validators to send for a conditional request: the ones the server
    /// sent, or the Catwalk SHA form of the bytes when the state is unknown
    /// (another program may have written the file).
    pub(crate) fn validators(&self) -> Validators {
        match &self.state {
            Some(state) if !state.validators.is_empty() => state.validators.clone(),
            _ => Validators {
                etag: Some(digest::catwalk_etag(&self.sha256)),
                last_modified: None,
            },
        }
    }

    /// Whether the cache only stands in for none: the embedded snapshot,
    /// written by a first start whose fetch failed or was held so that its
    /// record has a home, and confirmed by nobody since. A new catalog is
    /// reviewed against it as against no cache: nobody chose it.
    pub(crate) fn is_stand_in(&self) -> bool {
        self.state
            .as_ref()
            .is_some_and(|s| s.confirmed_at.is_none())
            && self.bytes == crate::catalog::embedded::catalog_bytes()
    }

    /// Seconds since the Unix epoch when these bytes were written.
    pub(crate) fn written_at(&self) -> Option<u64> {
        self.state.as_ref().map(|s| s.fetched_at).or_else(|| {
            self.modified
                .and_then(|m| m.duration_since(UNIX_EPOCH).ok())
                .map(|d| d.as_secs())
        })
    }
}

/// What stood at the cache's path: its [`identity`], or where files have
/// none the SHA-256 of its bytes; nothing when there was no file. A change
/// is written only over what its writer read, checked under the folder
/// lock, so that a newer document written meanwhile is never replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Seen(Option<String>);

impl Seen {
    /// What stands at the cache's path of `files` now.
    pub(crate) fn now(files: &CacheFiles) -> Seen {
        let Ok(meta) = fs::metadata(&files.catalog) else {
            return Seen(None);
        };
        Seen(identity(&meta).or_else(|| {
            let bytes = fs::read(&files.catalog).ok()?;
            Some(hex(&digest::sha256(&bytes)))
        }))
    }

    /// What stood there when `cached` was read (`None`: nothing), in the
    /// terms of [`Seen::now`]: its identity, else its SHA-256.
    pub(crate) fn of(cached: Option<&Cached>) -> Seen {
        Seen(cached.map(|c| c.identity.clone().unwrap_or_else(|| hex(&c.sha256))))
    }
}

/// Why the cache cannot be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CacheError {
    /// It cannot be read: something else than a regular file stands there,
    /// it is too large, or the system refused.
    #[error("cannot read the cache {}: {source}", path.display())]
    Read {
        /// Its path.
        path: PathBuf,
        /// Why.
        source: FileError,
    },
    /// Another user may have written it.
    #[error("the cache {} is not trusted: {why}, so it may send an API key anywhere (the next update replaces it with a file of your own)", path.display())]
    Untrusted {
        /// Its path.
        path: PathBuf,
        /// Who else may write it.
        why: String,
    },
    /// Another user may write into its folder.
    #[error("the data folder {0}")]
    Folder(UntrustedFolder),
    /// Another program wrote it, and it is not a valid document.
    #[error("the cached {} {} is not valid ({source})", match target { Target::Catalog => "catalog", Target::Hyper => "Hyper provider" }, path.display())]
    Invalid {
        /// Which document.
        target: Target,
        /// Its path.
        path: PathBuf,
        /// Why.
        source: ValidationError,
    },
}

/// A data folder this program does not use: another user may write into
/// it, and could then put a catalog there that sends a key anywhere.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} is not used: {why}", dir.display())]
pub struct UntrustedFolder {
    /// The folder.
    pub dir: PathBuf,
    /// Why, in words.
    pub why: String,
}

impl UntrustedFolder {
    /// What makes it usable.
    pub fn fix(&self) -> String {
        format!(
            "make it yours alone (`chmod go-w {}`), or move it away if another user owns it",
            self.dir.display()
        )
    }
}

/// Whether the data folder is trusted ([`file::untrusted`]). A missing
/// folder is: it is made by this user. Something else than a folder there
/// is what making the folder, or reading in it, reports.
pub(crate) fn check_folder(files: &CacheFiles) -> Result<(), UntrustedFolder> {
    let meta = fs::metadata(&files.dir).ok().filter(fs::Metadata::is_dir);
    match meta.and_then(|meta| file::untrusted(&meta)) {
        Some(why) => Err(UntrustedFolder {
            dir: files.dir.clone(),
            why: format!(
                "{why}, so another user could put a catalog there that sends an API key anywhere"
            ),
        }),
        None => Ok(()),
    }
}

/// What the cache holds of `files`' document. Only a regular file is read
/// (opened without blocking, at most [`file::MAX_FILE_BYTES`]), and only
/// when neither it nor its folder may have been written by another user
/// ([`file::untrusted`]).
///
/// The state file vouches for the file when it records the file's current
/// [`identity`]: then its SHA-256 is taken as is, and with [`Bytes::Peek`]
/// the file is not even read (the front decides at every start of Crush
/// whether a refresh is due: reading and hashing the 0.7 MB catalog was
/// most of what it added, see docs/BENCHMARKS.md). Otherwise the bytes are
/// hashed, and the state vouches only if the SHA-256 matches.
pub(crate) fn read(files: &CacheFiles, bytes: Bytes) -> Found {
    if let Err(e) = check_folder(files) {
        return Found::Unusable(CacheError::Folder(e));
    }
    let state = state::read(&files.state);
    let state_problem = state.as_ref().err().map(ToString::to_string);
    let state = state.ok().flatten();
    // The SHA-256 the state records, when it vouches for the file by its
    // identity (never without one).
    let vouched = |meta: &fs::Metadata| {
        let state = state
            .as_ref()
            .filter(|s| s.file.is_some() && s.file == identity(meta))?;
        unhex32(&state.sha256)
    };
    let (bytes, meta) = match fs::metadata(&files.catalog) {
        Ok(meta) if bytes == Bytes::Peek && vouched(&meta).is_some() => (Vec::new(), meta),
        _ => match file::read_regular(&files.catalog, file::MAX_FILE_BYTES) {
            Ok(Some(read)) => read,
            Ok(None) => return Found::Missing(state.filter(|s| s.sha256.is_empty())),
            Err(source) => {
                let path = files.catalog.clone();
                return Found::Unusable(CacheError::Read { path, source });
            }
        },
    };
    if let Some(why) = file::untrusted(&meta) {
        let path = files.catalog.clone();
        return Found::Unusable(CacheError::Untrusted { path, why });
    }
    let sha256 = vouched(&meta).unwrap_or_else(|| digest::sha256(&bytes));
    let cached = Cached {
        bytes,
        sha256,
        state: state.filter(|s| s.sha256 == hex(&sha256)),
        modified: meta.modified().ok(),
        identity: identity(&meta),
        state_problem,
    };
    match cached.state {
        Some(_) => Found::Vouched(cached),
        None => Found::Foreign(cached),
    }
}

/// What tells one version of a file from another without reading it: its
/// device, inode, size, and modification and change times to the
/// nanosecond. Rewriting the file changes its times, replacing it changes
/// its inode, and the change time cannot be set back by any tool. Unix only;
/// elsewhere there is none, and the cache is hashed on every read.
///
/// The one blind spot is the file system's clock tick: a rewrite in place,
/// to the same size, within the tick in which the identity was recorded.
/// Linux 6.13 and later (ext4, xfs, btrfs, tmpfs) give such a change a
/// distinct change time once the old one has been read, which recording it
/// does.
#[cfg(unix)]
pub(crate) fn identity(meta: &fs::Metadata) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    Some(format!(
        "{}:{}:{}:{}.{:09}:{}.{:09}",
        meta.dev(),
        meta.ino(),
        meta.size(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec()
    ))
}

#[cfg(not(unix))]
pub(crate) fn identity(_: &fs::Metadata) -> Option<String> {
    None
}

fn unhex32(text: &str) -> Option<[u8; 32]> {
    digest::unhex(text)?.try_into().ok()
}

/// The folder lock of the cache held (waiting at most `wait` for another
/// writer: a stopped process holding it must not hang everyone else), and
/// the new document staged beside it when there is one. Writers take it so
/// that they never remove each other's temporary files; leftovers of
/// killed runs are removed under it.
#[derive(Debug)]
pub(crate) struct Locked {
    files: CacheFiles,
    staged: Option<Staged>,
    _lock: Lock,
}

/// Takes the folder lock of `files`, and stages `bytes` as the new
/// document when given (in a folder no other user may write).
pub(crate) fn lock(
    files: &CacheFiles,
    bytes: Option<&[u8]>,
    wait: Duration,
) -> Result<Locked, WriteError> {
    fs::create_dir_all(&files.dir).map_err(WriteError::at("create the data folder", &files.dir))?;
    if bytes.is_some()
        && let Err(e) = check_folder(files)
    {
        let why = io::Error::other(format!("{}; {}", e.why, e.fix()));
        return Err(WriteError::at("use the data folder", &files.dir)(why));
    }
    let lock = Lock::folder(&files.dir, wait)
        .map_err(WriteError::at("lock the data folder", &files.dir))?;
    let staged = bytes.map(|bytes| stage(&files.catalog, bytes, true));
    Ok(Locked {
        staged: staged.transpose()?,
        files: files.clone(),
        _lock: lock,
    })
}

impl Locked {
    /// Renames the staged document over the cache and records `state`,
    /// with the new file's identity, beside it.
    pub(crate) fn commit(self, state: CacheState) -> Result<(), WriteError> {
        match self.staged {
            Some(staged) => install(&self.files, staged, state),
            None => Ok(()),
        }
    }

    /// Changes the state file, the document staying as it is: `change`
    /// gets the state as it is now (read under the lock, so that no other
    /// writer's change is lost) when it still describes `was`, the document
    /// read (a new state for those bytes when there is none); for `None`,
    /// the state recorded for no document. Nothing is written when the
    /// document was replaced since (then `Ok(false)`).
    pub(crate) fn change_state(
        &self,
        was: Option<&Cached>,
        change: impl FnOnce(&mut CacheState),
    ) -> Result<bool, WriteError> {
        let files = &self.files;
        if Seen::now(files) != Seen::of(was) {
            return Ok(false);
        }
        let sha256 = was.map_or(String::new(), |was| hex(&was.sha256));
        let recorded = state::read(&files.state).ok().flatten();
        let mut state = recorded
            .filter(|s| s.sha256 == sha256)
            .unwrap_or(CacheState {
                fetched_at: was.and_then(Cached::written_at).unwrap_or_default(),
                sha256,
                ..CacheState::default()
            });
        state.file = was.and_then(|was| was.identity.clone());
        change(&mut state);
        write_state(&files.state, &state)?;
        Ok(true)
    }
}

/// Replaces the cache with `bytes` and records `state` beside it, waiting
/// at most `wait` for another writer to finish.
pub fn write(
    files: &CacheFiles,
    bytes: &[u8],
    state: &CacheState,
    wait: Duration,
) -> Result<(), WriteError> {
    lock(files, Some(bytes), wait)?.commit(state.clone())
}

/// [`Locked::change_state`] under a lock of its own.
pub(crate) fn update_state(
    files: &CacheFiles,
    was: Option<&Cached>,
    wait: Duration,
    change: impl FnOnce(&mut CacheState),
) -> Result<bool, WriteError> {
    lock(files, None, wait)?.change_state(was, change)
}

/// Runs `f` under the folder lock, waiting at most `wait` for it: for a
/// change of a file beside the cache that other writers must not
/// interleave with.
pub fn locked<T>(
    files: &CacheFiles,
    wait: Duration,
    f: impl FnOnce() -> Result<T, WriteError>,
) -> Result<T, WriteError> {
    let _locked = lock(files, None, wait)?;
    f()
}

/// Renames `staged` over the cached document of `files`, keeps it as the
/// last reviewed one too, and records `state`, with the new file's
/// identity, beside it. The caller holds the folder lock.
pub(crate) fn install(
    files: &CacheFiles,
    staged: Staged,
    state: CacheState,
) -> Result<(), WriteError> {
    // Copied before the rename, so that the copy is of these bytes, not of
    // whatever another program puts in place after it; put in place after
    // it, so that a failed update leaves none. A copy that could not be
    // kept is harmless: it no longer matches the state's digest, and the
    // embedded snapshot stands in for it.
    let copy = copied(staged.path(), &files.reviewed);
    let file = staged.commit_file()?;
    if let Ok(copy) = copy {
        let _ = copy.persist(&files.reviewed);
    }
    let state = CacheState {
        file: file.metadata().ok().as_ref().and_then(identity),
        ..state
    };
    // Bound to the catalog by its SHA-256: a failure to record it, or a
    // stale one, does not undo the update, and it needs no flush.
    let _ = write_state(&files.state, &state);
    Ok(())
}

/// A copy of the file `from` under a temporary name beside `to`, to be
/// persisted over it (removed if it is not). A copy, not a hard link: a
/// program that rewrites the cache in place (`cp`, an editor, Crush before
/// v0.26) would rewrite a link too, and every link made or removed would
/// change the cache's [`identity`]. Not flushed: a copy a power cut
/// truncated no longer matches the state's digest, and is not used.
fn copied(from: &Path, to: &Path) -> io::Result<tempfile::NamedTempFile<()>> {
    let dir = to.parent().unwrap_or(Path::new("."));
    let name = to.file_name().unwrap_or_default().to_string_lossy();
    tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .make_in(dir, |path| fs::copy(from, path).map(drop))
}

/// Writes the state file; the caller holds the folder lock. It is bound to
/// the catalog by its SHA-256, so a stale or missing one is harmless: it
/// needs no fsync.
pub(crate) fn write_state(path: &Path, state: &CacheState) -> Result<(), WriteError> {
    let json = serde_json::to_vec_pretty(state).unwrap_or_default();
    write_atomically(path, &json, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::atomic::DIR_SYNCS;
    use crate::store::validators::Validators;
    use std::cell::Cell;
    #[cfg(unix)]
    use std::fs::File;

    const WAIT: Duration = Duration::from_secs(5);

    fn dir_syncs() -> usize {
        DIR_SYNCS.with(Cell::get)
    }

    /// Every durable rename is followed by a flush of its folder: flushing
    /// the data when it was staged does not make the rename durable.
    #[test]
    fn every_durable_rename_flushes_its_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("out.json");
        let before = dir_syncs();
        stage(&target, b"[1]", true).unwrap().commit_file().unwrap();
        assert_eq!(dir_syncs(), before + 1);
        let before = dir_syncs();
        let files = CacheFiles::in_dir(tmp.path().join("crush"));
        let staged = lock(&files, Some(b"[2]"), WAIT).unwrap();
        staged.commit(state_for(b"[2]")).unwrap();
        // The cache's rename; the state file beside it needs none.
        assert_eq!(dir_syncs(), before + 1);
        let before = dir_syncs();
        write_atomically(&target, b"[3]", false).unwrap();
        assert_eq!(dir_syncs(), before, "not durable, not flushed");
        assert_eq!(fs::read(&target).unwrap(), b"[3]");
    }

    #[cfg(unix)]
    #[test]
    fn a_held_lock_is_waited_for_then_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let files = CacheFiles::in_dir(tmp.path());
        let holder = File::open(tmp.path()).unwrap();
        holder.lock().unwrap();
        let start = std::time::Instant::now();
        let err = write(
            &files,
            b"[1]",
            &state_for(b"[1]"),
            Duration::from_millis(200),
        )
        .unwrap_err();
        assert!(start.elapsed() >= Duration::from_millis(200));
        assert!(
            err.to_string().starts_with("cannot lock the data folder"),
            "{err}"
        );
        assert!(
            err.to_string()
                .contains("another process has been writing it for over 0.2 s"),
            "{err}"
        );
        assert!(matches!(read(&files, Bytes::Read), Found::Missing(None)));
        drop(holder);
        put(&files, b"[1]");
    }

    /// The document there, vouched for or not.
    fn doc(files: &CacheFiles) -> Cached {
        match read(files, Bytes::Read) {
            Found::Vouched(cached) | Found::Foreign(cached) => cached,
            other => panic!("{other:?}"),
        }
    }

    fn put(files: &CacheFiles, bytes: &[u8]) {
        write(files, bytes, &state_for(bytes), WAIT).unwrap();
    }

    fn state_for(bytes: &[u8]) -> CacheState {
        CacheState {
            sha256: hex(&digest::sha256(bytes)),
            file: None,
            validators: Validators {
                etag: Some("\"abc\"".into()),
                last_modified: Some("Mon, 01 Jan 2024 00:00:00 GMT".into()),
            },
            source: "test".into(),
            fetched_at: 1,
            ..CacheState::default()
        }
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn write_then_read_round_trips_with_state() {
        let tmp = tempfile::tempdir().unwrap();
        let files = CacheFiles::in_dir(tmp.path().join("crush"));
        put(&files, b"[1]");
        let cached = doc(&files);
        assert_eq!(cached.bytes, b"[1]");
        assert_eq!(cached.validators().etag.as_deref(), Some("\"abc\""));
        // The copy of the last document reviewed, kept beside it.
        assert_eq!(
            names(&files.dir),
            [
                "providers.json",
                "providers.reviewed.json",
                "providers.state.json"
            ]
        );
        assert_eq!(fs::read(&files.reviewed).unwrap(), b"[1]");
    }

    #[test]
    fn state_for_other_bytes_is_ignored() {
        let tmp = tempfile::tempdir().unwrap();
        let files = CacheFiles::in_dir(tmp.path());
        put(&files, b"[1]");
        // Rewritten in place: a new size and new times, the same inode.
        fs::write(&files.catalog, b"[22]").unwrap();
        let cached = doc(&files);
        assert!(cached.state.is_none());
        assert_eq!(
            cached.validators().etag.unwrap(),
            digest::catwalk_etag(&digest::sha256(b"[22]"))
        );
        fs::write(&files.state, b"{garbage").unwrap();
        assert!(doc(&files).state.is_none());
    }

    /// The state records the file's identity; while the file keeps it, the
    /// recorded SHA-256 is taken as is (here a false one, to tell).
    #[cfg(unix)]
    #[test]
    fn a_state_recording_the_files_identity_spares_hashing() {
        let tmp = tempfile::tempdir().unwrap();
        let files = CacheFiles::in_dir(tmp.path());
        put(&files, b"[1]");
        let mut state = state::read(&files.state).unwrap().unwrap();
        let meta = fs::metadata(&files.catalog).unwrap();
        assert_eq!(state.file, identity(&meta));
        state.sha256 = hex(&digest::sha256(b"other"));
        write_state(&files.state, &state).unwrap();
        let cached = doc(&files);
        assert_eq!(cached.sha256, digest::sha256(b"other"));
        assert!(cached.state.is_some());

        // The same bytes in a new file (a copy, a restore): a new identity,
        // so the bytes are hashed, and the state holds if they match.
        put(&files, b"[1]");
        let copy = tmp.path().join("copy");
        fs::copy(&files.catalog, &copy).unwrap();
        fs::rename(&copy, &files.catalog).unwrap();
        let cached = doc(&files);
        assert_ne!(
            cached.identity,
            state::read(&files.state).unwrap().unwrap().file
        );
        assert_eq!(cached.sha256, digest::sha256(b"[1]"));
        assert!(cached.state.is_some());
        // A state with a false SHA-256 and a stale identity is dropped.
        let mut state = state::read(&files.state).unwrap().unwrap();
        state.sha256 = hex(&digest::sha256(b"other"));
        write_state(&files.state, &state).unwrap();
        assert!(doc(&files).state.is_none());
    }

    /// The state is changed as it is under the lock, only while it
    /// describes the cache that was read; a cache without a state gets one.
    #[cfg(unix)]
    #[test]
    fn state_changes_apply_to_the_cache_that_was_read() {
        let tmp = tempfile::tempdir().unwrap();
        let files = CacheFiles::in_dir(tmp.path());
        put(&files, b"[1]");
        let cached = doc(&files);
        let changed =
            update_state(&files, Some(&cached), WAIT, |s| s.confirmed_at = Some(9)).unwrap();
        assert!(changed);
        let state = state::read(&files.state).unwrap().unwrap();
        assert_eq!(state.confirmed_at, Some(9));
        assert_eq!(state.validators.etag.as_deref(), Some("\"abc\""), "kept");

        fs::remove_file(&files.state).unwrap();
        let cached = doc(&files);
        update_state(&files, Some(&cached), WAIT, |s| s.confirmed_at = Some(10)).unwrap();
        let state = state::read(&files.state).unwrap().unwrap();
        assert_eq!(state.sha256, hex(&digest::sha256(b"[1]")));
        assert_eq!(state.confirmed_at, Some(10));
        assert!(doc(&files).state.is_some());

        // Replaced since it was read: nothing is written.
        put(&files, b"[2]");
        assert!(!update_state(&files, Some(&cached), WAIT, |s| s.confirmed_at = Some(11)).unwrap());
        assert_eq!(
            state::read(&files.state).unwrap().unwrap().confirmed_at,
            None
        );
    }

    #[test]
    fn sha256_hex_round_trips_and_refuses_garbage() {
        let digest = digest::sha256(b"x");
        assert_eq!(unhex32(&hex(&digest)), Some(digest));
        assert_eq!(unhex32(&hex(&digest).to_uppercase()), Some(digest));
        for bad in ["", "ab", &"g".repeat(64), &"a".repeat(63), &"é".repeat(32)] {
            assert_eq!(unhex32(bad), None, "{bad}");
        }
    }

    #[test]
    fn missing_cache_reads_as_none() {
        let tmp = tempfile::tempdir().unwrap();
        let files = CacheFiles::in_dir(tmp.path());
        assert!(matches!(read(&files, Bytes::Read), Found::Missing(None)));
    }

    #[test]
    fn leftovers_of_killed_runs_are_removed_on_next_write() {
        let tmp = tempfile::tempdir().unwrap();
        let files = CacheFiles::in_dir(tmp.path());
        fs::write(tmp.path().join(".providers.json.abc123.tmp"), b"half").unwrap();
        fs::write(tmp.path().join("unrelated.tmp"), b"keep").unwrap();
        put(&files, b"[1]");
        assert_eq!(
            names(tmp.path()),
            [
                "providers.json",
                "providers.reviewed.json",
                "providers.state.json",
                "unrelated.tmp"
            ]
        );
    }

    /// Hyper's document lives beside the catalog under names of its own,
    /// shares the memory, and its writer and the catalog's each remove
    /// both kinds of leftovers (they hold the same lock), never Crush's
    /// temporary files.
    #[test]
    fn hyper_has_files_of_its_own_beside_the_catalog() {
        let tmp = tempfile::tempdir().unwrap();
        let catalog = CacheFiles::in_dir(tmp.path());
        let hyper = catalog.with_target(Target::Hyper);
        assert_eq!(hyper.catalog, tmp.path().join("hyper.json"));
        assert_eq!(hyper.state, tmp.path().join("hyper.state.json"));
        assert_eq!(hyper.memory, catalog.memory);
        for leftover in [".providers.json.a1.tmp", ".hyper.json.b2.tmp"] {
            fs::write(tmp.path().join(leftover), b"half").unwrap();
        }
        // Crush's own temporary file, mid-write.
        fs::write(tmp.path().join("hyper.json.123.tmp"), b"crush").unwrap();
        let doc = br#"{"id":"hyper","name":"H","models":[{"id":"m"}]}"#;
        write(&hyper, doc, &CacheState::default(), WAIT).unwrap();
        assert_eq!(
            names(tmp.path()),
            [
                "hyper.json",
                "hyper.json.123.tmp",
                "hyper.reviewed.json",
                "hyper.state.json"
            ]
        );
        assert_eq!(
            read(&hyper, Bytes::Read)
                .valid(&hyper)
                .unwrap()
                .unwrap()
                .bytes,
            doc
        );
        assert!(matches!(read(&catalog, Bytes::Read), Found::Missing(None)));
    }

    /// A record for a document that is not there is kept, told, and
    /// ignored once the document is written.
    #[test]
    fn an_absent_document_keeps_a_state_of_its_own() {
        let tmp = tempfile::tempdir().unwrap();
        let hyper = CacheFiles::of(tmp.path(), Target::Hyper);
        assert_eq!(read(&hyper, Bytes::Peek).state().cloned(), None);
        let recorded = update_state(&hyper, None, WAIT, |s| s.source = "x".into()).unwrap();
        assert!(recorded);
        let state = read(&hyper, Bytes::Peek).state().cloned().unwrap();
        assert_eq!((state.sha256.as_str(), state.source.as_str()), ("", "x"));
        fs::write(&hyper.catalog, b"{}").unwrap();
        assert_eq!(read(&hyper, Bytes::Peek).state().cloned(), None);
        assert!(!update_state(&hyper, None, WAIT, |_| {}).unwrap());
        assert!(doc(&hyper).state.is_none());
    }

    #[cfg(unix)]
    #[test]
    fn failed_write_leaves_target_untouched_and_no_temp_file() {
        use std::os::unix::fs::PermissionsExt;
        if is_root() {
            eprintln!("skipped: root ignores folder permissions");
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("providers.json");
        fs::write(&target, b"old").unwrap();
        fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o555)).unwrap();
        let result = write_atomically(&target, b"new", true);
        fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o755)).unwrap();
        assert!(
            result
                .unwrap_err()
                .to_string()
                .starts_with("cannot create a temporary file in")
        );
        assert_eq!(fs::read(&target).unwrap(), b"old");
        assert_eq!(names(tmp.path()), ["providers.json"]);
    }

    #[cfg(unix)]
    fn is_root() -> bool {
        fs::metadata("/proc/self")
            .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
            .unwrap_or(false)
    }
}
