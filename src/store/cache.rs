//! The on-disk cache: `providers.json` (a plain catalog any Crush build can
//! read) and, beside it, a small state file bound to those bytes by their
//! SHA-256 (see [`crate::store::state`]). Replacing the cache is atomic and durable: a reader sees the old
//! file or the new one, never a mix; the new file is flushed to disk before
//! it is renamed into place and the folder after, so that a power cut after
//! a reported success cannot bring the old catalog back; and a failure
//! leaves the old one as it was.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::catalog::Target;
use crate::store::atomic::{Staged, WriteError, stage, write_atomically};
use crate::store::digest::{self, hex};
use crate::store::file::{self, FileError};
use crate::store::lock::Lock;
use crate::store::state::{self, CacheState};
use crate::store::validators::Validators;

/// File name of the cached catalog.
pub(crate) const CATALOG_FILE: &str = "providers.json";
/// File name of the state file beside it.
pub(crate) const STATE_FILE: &str = "providers.state.json";
/// File name of the memory of where keys went beside it
/// ([`crate::trust::memory`]).
pub(crate) const MEMORY_FILE: &str = "providers.trust.json";
/// File name of Hyper's provider, beside the catalog (Crush's `hyper.json`).
pub(crate) const HYPER_FILE: &str = "hyper.json";
/// File name of its state file.
pub(crate) const HYPER_STATE_FILE: &str = "hyper.state.json";
/// What the copy of the last document this program reviewed is named
/// after (`providers.reviewed.json`): what a start puts back when another
/// program wrote one that moves a key ([`crate::trust::foreign`]).
const REVIEWED: &str = "reviewed";
/// What a document another program wrote is named after once it was
/// held and put aside (`providers.foreign.json`), for a person to review.
const FOREIGN: &str = "foreign";
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
    /// beside it: `providers.reviewed.json`, or `hyper.reviewed.json`.
    pub(crate) reviewed: PathBuf,
    /// Where a document another program wrote is kept once it was held:
    /// `providers.foreign.json`, or `hyper.foreign.json`.
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
        let (document, state) = match target {
            Target::Catalog => (CATALOG_FILE, STATE_FILE),
            Target::Hyper => (HYPER_FILE, HYPER_STATE_FILE),
        };
        let beside = |kind: &str| dir.join(document.replace(".json", &format!(".{kind}.json")));
        CacheFiles {
            catalog: dir.join(document),
            state: dir.join(state),
            memory: dir.join(MEMORY_FILE),
            reviewed: beside(REVIEWED),
            foreign: beside(FOREIGN),
            dir,
            target,
        }
    }

    /// The files of `target`'s document in the same folder.
    pub fn with_target(&self, target: Target) -> Self {
        Self::of(self.dir.clone(), target)
    }
}

/// The cache as found on disk.
#[derive(Debug)]
pub(crate) struct Cached {
    /// The bytes of `providers.json`.
    pub bytes: Vec<u8>,
    /// Their SHA-256.
    pub sha256: [u8; 32],
    /// The state file, only when it describes exactly these bytes.
    pub state: Option<CacheState>,
    /// Modification time of `providers.json`.
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

/// Why the cache cannot be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CacheError {
    /// It cannot be read: something else than a regular file stands there,
    /// it is too large, or the system refused.
    #[error("cannot read the cached catalog {}: {source}", path.display())]
    Read {
        /// `providers.json`.
        path: PathBuf,
        /// Why.
        source: FileError,
    },
    /// Another user may have written it: why, in one line naming it.
    #[error("{0}")]
    Untrusted(String),
    /// Another user may write into its folder.
    #[error("the data folder {0}")]
    Folder(UntrustedFolder),
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
    /// What makes it usable.
    pub fix: String,
}

/// Whether the data folder is trusted ([`file::untrusted`]). A missing
/// folder is: it is made by this user.
pub(crate) fn check_folder(files: &CacheFiles) -> Result<(), UntrustedFolder> {
    let dir = files.dir.display();
    let meta = match fs::metadata(&files.dir) {
        Ok(meta) => meta,
        Err(_) => return Ok(()),
    };
    // Something else than a folder there is what making the folder, or
    // reading in it, reports.
    if !meta.is_dir() {
        return Ok(());
    }
    let Some(why) = file::untrusted(&meta) else {
        return Ok(());
    };
    let why =
        format!("{why}, so another user could put a catalog there that sends an API key anywhere");
    let fix = format!(
        "make it yours alone (`chmod go-w {dir}`), or move it away if another user owns it"
    );
    Err(UntrustedFolder {
        dir: files.dir.clone(),
        why,
        fix,
    })
}

/// Reads the cache; `Ok(None)` when there is no `providers.json`. Only a
/// regular file is read (opened without blocking, at most
/// [`file::MAX_FILE_BYTES`]), and only when neither it nor its folder may
/// have been written by another user ([`file::untrusted`]).
///
/// The state file is trusted when it records the file's current
/// [`identity`]: then its SHA-256 is taken as is. Otherwise the bytes are
/// hashed, and the state is trusted only if the SHA-256 matches. Hashing is
/// what start-up would otherwise pay on every run (0.4 ms for the real
/// 0.7 MB catalog, 30 ms for 50 MB).
pub(crate) fn read(files: &CacheFiles) -> Result<Option<Cached>, CacheError> {
    check_folder(files).map_err(CacheError::Folder)?;
    let failed = |source| CacheError::Read {
        path: files.catalog.clone(),
        source,
    };
    let Some((opened, meta)) = file::open_regular(&files.catalog).map_err(failed)? else {
        return Ok(None);
    };
    if let Some(why) = file::untrusted(&meta) {
        return Err(CacheError::Untrusted(format!(
            "the cached catalog {} is not trusted: {why}, so it may send an API key anywhere (the next update replaces it with a file of your own)",
            files.catalog.display()
        )));
    }
    let bytes = file::read_all(opened, &meta, file::MAX_FILE_BYTES).map_err(failed)?;
    let identity = identity(&meta);
    let (state, state_problem) = match state::read(&files.state) {
        Ok(state) => (state, None),
        Err(problem) => (None, Some(problem.to_string())),
    };
    let recorded = state
        .as_ref()
        .filter(|s| s.vouches_for(&identity))
        .and_then(|s| unhex32(&s.sha256));
    let sha256 = recorded.unwrap_or_else(|| digest::sha256(&bytes));
    Ok(Some(Cached {
        bytes,
        sha256,
        state: state.filter(|s| s.sha256 == hex(&sha256)),
        modified: meta.modified().ok(),
        identity,
        state_problem,
    }))
}

/// The state file, when it vouches for the `providers.json` there now (by
/// its identity; never on systems without one), without reading the
/// catalog.
///
/// Kept by measurement (issue 26): the front decides with it whether a
/// refresh is due at every start of Crush. The rows of `BENCH_ONLY=front
/// scripts/bench` (a cache confirmed, 30 rounds, two passes, 2026-12-01,
/// load 14 from other builds): through the front with it, 1.38 and 1.32 ms
/// added to the stand-in's median (2.18 vs 0.80, 2.16 vs 0.84 ms; 2.0 ms
/// of CPU, 5.1 MB); without it (the catalog read and hashed, as
/// [`read_valid`] does, to find its state), 5.94 and 2.19 ms (6.87 vs
/// 0.93, 3.01 vs 0.82 ms; 2.9–3.2 ms of CPU, 6.2 MB): 60 % or more of what
/// the front adds, and past its 2 ms target.
pub(crate) fn vouched_state(files: &CacheFiles) -> Option<CacheState> {
    let current = identity(&fs::metadata(&files.catalog).ok()?);
    state::read(&files.state)
        .ok()
        .flatten()
        .filter(|s| s.vouches_for(&current))
}

/// The cache, when it holds a valid catalog; `Ok(None)` when there is no
/// cache, and why it cannot be used, in one line naming the file, when it
/// cannot be read or is not valid. A state file that describes the bytes
/// proves they were validated when written, which spares parsing them.
pub(crate) fn read_valid(files: &CacheFiles) -> Result<Option<Cached>, String> {
    let path = files.catalog.display();
    let cached = match read(files) {
        Ok(Some(cached)) => cached,
        Ok(None) => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    if cached.state.is_some() {
        return Ok(Some(cached));
    }
    match files.target.validate(&cached.bytes) {
        Ok(_) => Ok(Some(cached)),
        Err(e) => Err(format!(
            "the cached {} {path} is not valid ({e})",
            what(files)
        )),
    }
}

/// [`read_valid`] for a caller that needs no bytes (the front, whose Crush
/// reads the file itself): the file is not read when its state vouches for
/// it, and `bytes` is then empty.
pub(crate) fn peek_valid(files: &CacheFiles) -> Result<Option<Cached>, String> {
    let Ok(meta) = fs::metadata(&files.catalog) else {
        return read_valid(files);
    };
    let identity = identity(&meta);
    let state = state::read(&files.state).ok().flatten();
    let vouched = state.filter(|s| s.vouches_for(&identity) && file::untrusted(&meta).is_none());
    match vouched.as_ref().and_then(|s| unhex32(&s.sha256)) {
        Some(sha256) => Ok(Some(Cached {
            bytes: Vec::new(),
            sha256,
            state: vouched,
            modified: meta.modified().ok(),
            identity,
            state_problem: None,
        })),
        None => read_valid(files),
    }
}

/// `catalog`, `Hyper provider`: what the cached document is, for messages.
fn what(files: &CacheFiles) -> &'static str {
    match files.target {
        Target::Catalog => "catalog",
        Target::Hyper => "Hyper provider",
    }
}

/// The state recorded for a document that is not in the cache: what a
/// first fetch that failed or was held records when no snapshot can stand
/// in for the document (Hyper's provider; the catalog has the embedded
/// one), so that the next start tells it. Its `sha256` is empty. `None`
/// when the document is there, or the state file describes one.
pub(crate) fn absent_state(files: &CacheFiles) -> Option<CacheState> {
    if fs::symlink_metadata(&files.catalog).is_ok() {
        return None;
    }
    state::read(&files.state)
        .ok()
        .flatten()
        .filter(|s| s.sha256.is_empty())
}

/// Changes the state of a document that is not in the cache
/// ([`absent_state`]), under the folder lock; nothing when the document is
/// there by then (`Ok(false)`).
pub(crate) fn update_absent_state(
    files: &CacheFiles,
    wait: Duration,
    change: impl FnOnce(&mut CacheState),
) -> Result<bool, WriteError> {
    fs::create_dir_all(&files.dir).map_err(WriteError::at("create the data folder", &files.dir))?;
    let _lock = Lock::folder(&files.dir, wait)
        .map_err(WriteError::at("lock the data folder", &files.dir))?;
    if fs::symlink_metadata(&files.catalog).is_ok() {
        return Ok(false);
    }
    let mut state = absent_state(files).unwrap_or_default();
    change(&mut state);
    write_state(&files.state, &state)?;
    Ok(true)
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
pub(crate) fn identity(meta: &fs::Metadata) -> Option<String> {
    #[cfg(unix)]
    {
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
    {
        let _ = meta;
        None
    }
}

fn unhex32(text: &str) -> Option<[u8; 32]> {
    digest::unhex(text)?.try_into().ok()
}

/// Replaces the cache with `bytes` and records `state` beside it, waiting
/// at most `wait` for another writer to finish.
pub fn write(
    files: &CacheFiles,
    bytes: &[u8],
    state: &CacheState,
    wait: Duration,
) -> Result<(), WriteError> {
    stage_cache(files, bytes, wait)?.commit(state)
}

/// Writes `bytes` as the cache, with `state`, only if there is no cache
/// file: decided under the folder lock, so that no writer's catalog is
/// replaced. `Ok(false)` when there was one.
pub(crate) fn install_if_absent(
    files: &CacheFiles,
    bytes: &[u8],
    state: &CacheState,
    wait: Duration,
) -> Result<bool, WriteError> {
    let staged = stage_cache(files, bytes, wait)?;
    if files.catalog.exists() {
        return Ok(false);
    }
    staged.commit(state).map(|()| true)
}

/// A new cache staged under the folder lock, which it holds until committed
/// or dropped.
#[derive(Debug)]
pub(crate) struct StagedCache {
    catalog: Staged,
    files: CacheFiles,
    _lock: Lock,
}

impl StagedCache {
    /// Renames the new catalog over the cache and records `state`, with the
    /// new file's identity, beside it.
    pub(crate) fn commit(self, state: &CacheState) -> Result<(), WriteError> {
        self.commit_then_record(|| state.clone())
    }

    /// Like [`StagedCache::commit`], with the state made only once the new
    /// catalog is in place: what goes into it (its digest) can be worked
    /// out while the disk is busy.
    pub(crate) fn commit_then_record(
        self,
        state: impl FnOnce() -> CacheState,
    ) -> Result<(), WriteError> {
        install(&self.files, self.catalog, state)
    }
}

/// Renames `staged` over the cached document of `files`, keeps it as the
/// last reviewed one too, and records `state`, with the new file's
/// identity, beside it. The caller holds the folder lock.
pub(crate) fn install(
    files: &CacheFiles,
    staged: Staged,
    state: impl FnOnce() -> CacheState,
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
        ..state()
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

/// Changes the state file, the catalog staying as it is, under the folder
/// lock like every writer (another writer's clean-up of leftovers would
/// otherwise remove this temporary file before its rename). `change` gets
/// the state as it is now, read again under the lock so that no other
/// writer's change is lost, when it still describes the cache `cached`
/// read; or a new state for those bytes when there is none. Nothing is
/// written when the cache was replaced since (then `Ok(false)`).
pub(crate) fn update_state(
    files: &CacheFiles,
    cached: &Cached,
    wait: Duration,
    change: impl FnOnce(&mut CacheState),
) -> Result<bool, WriteError> {
    let _lock = Lock::folder(&files.dir, wait)
        .map_err(WriteError::at("lock the data folder", &files.dir))?;
    let current = fs::metadata(&files.catalog)
        .ok()
        .as_ref()
        .and_then(identity);
    if current != cached.identity {
        return Ok(false);
    }
    let sha256 = hex(&cached.sha256);
    let mut state = state::read(&files.state)
        .ok()
        .flatten()
        .filter(|s| s.sha256 == sha256)
        .unwrap_or_else(|| CacheState {
            sha256,
            fetched_at: cached.written_at().unwrap_or_default(),
            ..CacheState::default()
        });
    state.file = current;
    change(&mut state);
    write_state(&files.state, &state)?;
    Ok(true)
}

/// Runs `f` under the folder lock, waiting at most `wait` for it: for a
/// change of a file beside the cache that other writers must not
/// interleave with.
pub fn locked<T>(
    files: &CacheFiles,
    wait: Duration,
    f: impl FnOnce() -> Result<T, WriteError>,
) -> Result<T, WriteError> {
    fs::create_dir_all(&files.dir).map_err(WriteError::at("create the data folder", &files.dir))?;
    let _lock = Lock::folder(&files.dir, wait)
        .map_err(WriteError::at("lock the data folder", &files.dir))?;
    f()
}

/// Writes the state file; the caller holds the folder lock. It is bound to
/// the catalog by its SHA-256, so a stale or missing one is harmless: it
/// needs no fsync.
pub(crate) fn write_state(path: &Path, state: &CacheState) -> Result<(), WriteError> {
    let json = serde_json::to_vec_pretty(state).unwrap_or_default();
    write_atomically(path, &json, false)
}

/// Stages `bytes` as the new cache. Writers take a lock on the folder, so
/// that they never remove each other's temporary files; leftovers of killed
/// runs are removed under that lock. A writer waits at most `wait` for the
/// lock: a stopped process holding it must not hang everyone else.
pub(crate) fn stage_cache(
    files: &CacheFiles,
    bytes: &[u8],
    wait: Duration,
) -> Result<StagedCache, WriteError> {
    fs::create_dir_all(&files.dir).map_err(WriteError::at("create the data folder", &files.dir))?;
    check_folder(files).map_err(|e| {
        WriteError::at("use the data folder", &files.dir)(io::Error::other(format!(
            "{}; {}",
            e.why, e.fix
        )))
    })?;
    let lock = Lock::folder(&files.dir, wait)
        .map_err(WriteError::at("lock the data folder", &files.dir))?;
    Ok(StagedCache {
        catalog: stage(&files.catalog, bytes, true)?,
        files: files.clone(),
        _lock: lock,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::atomic::DIR_SYNCS;
    use crate::store::validators::Validators;
    use std::cell::Cell;
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
        stage(&target, b"[1]", true).unwrap().commit().unwrap();
        assert_eq!(dir_syncs(), before + 1);
        let before = dir_syncs();
        let files = CacheFiles::in_dir(tmp.path().join("crush"));
        let staged = stage_cache(&files, b"[2]", WAIT).unwrap();
        staged.commit(&state_for(b"[2]")).unwrap();
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
        assert!(read(&files).unwrap().is_none());
        drop(holder);
        put(&files, b"[1]");
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
        let cached = read(&files).unwrap().unwrap();
        assert_eq!(cached.bytes, b"[1]");
        assert_eq!(cached.validators().etag.as_deref(), Some("\"abc\""));
        // The copy of the last document reviewed, kept beside it.
        assert_eq!(
            names(&files.dir),
            [CATALOG_FILE, "providers.reviewed.json", STATE_FILE]
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
        let cached = read(&files).unwrap().unwrap();
        assert!(cached.state.is_none());
        assert_eq!(
            cached.validators().etag.unwrap(),
            digest::catwalk_etag(&digest::sha256(b"[22]"))
        );
        fs::write(&files.state, b"{garbage").unwrap();
        assert!(read(&files).unwrap().unwrap().state.is_none());
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
        let cached = read(&files).unwrap().unwrap();
        assert_eq!(cached.sha256, digest::sha256(b"other"));
        assert!(cached.state.is_some());

        // The same bytes in a new file (a copy, a restore): a new identity,
        // so the bytes are hashed, and the state holds if they match.
        put(&files, b"[1]");
        let copy = tmp.path().join("copy");
        fs::copy(&files.catalog, &copy).unwrap();
        fs::rename(&copy, &files.catalog).unwrap();
        let cached = read(&files).unwrap().unwrap();
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
        assert!(read(&files).unwrap().unwrap().state.is_none());
    }

    /// The state is changed as it is under the lock, only while it
    /// describes the cache that was read; a cache without a state gets one.
    #[cfg(unix)]
    #[test]
    fn state_changes_apply_to_the_cache_that_was_read() {
        let tmp = tempfile::tempdir().unwrap();
        let files = CacheFiles::in_dir(tmp.path());
        put(&files, b"[1]");
        let cached = read(&files).unwrap().unwrap();
        let changed = update_state(&files, &cached, WAIT, |s| s.confirmed_at = Some(9)).unwrap();
        assert!(changed);
        let state = state::read(&files.state).unwrap().unwrap();
        assert_eq!(state.confirmed_at, Some(9));
        assert_eq!(state.validators.etag.as_deref(), Some("\"abc\""), "kept");

        fs::remove_file(&files.state).unwrap();
        let cached = read(&files).unwrap().unwrap();
        update_state(&files, &cached, WAIT, |s| s.confirmed_at = Some(10)).unwrap();
        let state = state::read(&files.state).unwrap().unwrap();
        assert_eq!(state.sha256, hex(&digest::sha256(b"[1]")));
        assert_eq!(state.confirmed_at, Some(10));
        assert!(read(&files).unwrap().unwrap().state.is_some());

        // Replaced since it was read: nothing is written.
        put(&files, b"[2]");
        assert!(!update_state(&files, &cached, WAIT, |s| s.confirmed_at = Some(11)).unwrap());
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
        assert!(read(&CacheFiles::in_dir(tmp.path())).unwrap().is_none());
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
                CATALOG_FILE,
                "providers.reviewed.json",
                STATE_FILE,
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
        assert_eq!(read_valid(&hyper).unwrap().unwrap().bytes, doc);
        assert!(read(&catalog).unwrap().is_none());
    }

    /// A record for a document that is not there is kept, told, and
    /// ignored once the document is written.
    #[test]
    fn an_absent_document_keeps_a_state_of_its_own() {
        let tmp = tempfile::tempdir().unwrap();
        let hyper = CacheFiles::of(tmp.path(), Target::Hyper);
        assert_eq!(absent_state(&hyper), None);
        let recorded = update_absent_state(&hyper, WAIT, |s| s.source = "x".into()).unwrap();
        assert!(recorded);
        let state = absent_state(&hyper).unwrap();
        assert_eq!((state.sha256.as_str(), state.source.as_str()), ("", "x"));
        fs::write(&hyper.catalog, b"{}").unwrap();
        assert_eq!(absent_state(&hyper), None);
        assert!(!update_absent_state(&hyper, WAIT, |_| {}).unwrap());
        assert!(read(&hyper).unwrap().unwrap().state.is_none());
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
