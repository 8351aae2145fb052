//! Atomic, durable writes: new contents are written to a temporary file
//! beside their target (flushed first when they must survive a power cut)
//! and renamed over it, the folder flushed after; a failure leaves the
//! target as it was and no temporary file behind.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A failure to write a file of the cache, naming the step and the path.
#[derive(Debug, thiserror::Error)]
#[error("cannot {step} {}: {source}", path.display())]
pub struct WriteError {
    /// What was being done.
    pub step: &'static str,
    /// On which path.
    pub path: PathBuf,
    /// The system's reason.
    pub source: io::Error,
}

impl WriteError {
    pub(crate) fn at(
        step: &'static str,
        path: &Path,
    ) -> impl FnOnce(io::Error) -> WriteError + use<> {
        let path = path.to_owned();
        move |source| WriteError { step, path, source }
    }
}

/// Writes `bytes` to `path` atomically: a temporary file in the same folder,
/// renamed over `path`; when `durable`, the file is flushed to disk before
/// the rename and the folder after it. On any failure `path` is untouched
/// and the temporary file is removed.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8], durable: bool) -> Result<(), WriteError> {
    stage(path, bytes, durable)?.commit_file().map(drop)
}

/// New contents written beside their target but not yet visible. Dropping
/// it removes the temporary file.
#[derive(Debug)]
pub(crate) struct Staged {
    temp: tempfile::NamedTempFile,
    target: PathBuf,
    /// Whether the contents must survive a power cut once committed: their
    /// data was flushed when staged, and the rename itself is flushed (the
    /// folder) after it. Two separate facts: flushing the data does not
    /// make the rename durable.
    durable: bool,
}

impl Staged {
    /// Where the new bytes are until they are committed.
    pub(crate) fn path(&self) -> &Path {
        self.temp.path()
    }

    /// Makes the new contents visible: one rename over the target; the
    /// file now at the target.
    pub(crate) fn commit_file(self) -> Result<File, WriteError> {
        let file = persist(self.temp, &self.target)?;
        if self.durable {
            sync_dir(parent(&self.target));
        }
        Ok(file)
    }
}

/// Temporary files are named `.providers.*.tmp` (the catalog's, its state's,
/// the memory's) and `.hyper.*.tmp` (Hyper's), so that leftovers of a killed
/// run can be recognised and removed. Every writer of either holds the
/// folder lock from its first byte to its rename, and only the holder
/// removes leftovers: no writer removes another's file in flight. Crush's
/// own (`hyper.json.*.tmp`, without the dot) are never touched.
const TEMP_PREFIXES: [&str; 2] = [".providers.", ".hyper."];
const TEMP_SUFFIX: &str = ".tmp";

fn parent(path: &Path) -> &Path {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    parent.unwrap_or(Path::new("."))
}

/// Writes `bytes` to a temporary file beside `path`; when `durable`,
/// flushed to disk before this returns, so that it is whole on disk before
/// any rename can make it visible.
pub(crate) fn stage(path: &Path, bytes: &[u8], durable: bool) -> Result<Staged, WriteError> {
    let dir = parent(path);
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    // `.providers.json.XXXX.tmp` for the cache files: see TEMP_PREFIXES.
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(TEMP_SUFFIX);
    // tempfile creates private files; a catalog is public data that other
    // Crush builds and users' tools read.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
    let mut temp = builder
        .tempfile_in(dir)
        .map_err(WriteError::at("create a temporary file in", dir))?;
    temp.write_all(bytes)
        .map_err(WriteError::at("write", temp.path()))?;
    if durable {
        temp.as_file()
            .sync_all()
            .map_err(WriteError::at("flush to disk", temp.path()))?;
    }
    Ok(Staged {
        temp,
        target: path.to_owned(),
        durable,
    })
}

/// Renames `temp` over `path`. On Windows a rename over a file that another
/// process holds open without sharing delete access is refused for a
/// moment: it is tried again, 8 times at most, as git and cargo do; other
/// systems do not refuse so, and are not retried.
fn persist(mut temp: tempfile::NamedTempFile, path: &Path) -> Result<File, WriteError> {
    let mut delay = std::time::Duration::from_millis(10);
    let mut retries = if cfg!(windows) { 8 } else { 0 };
    loop {
        match temp.persist(path) {
            Ok(file) => return Ok(file),
            Err(e) if retries > 0 && e.error.kind() == io::ErrorKind::PermissionDenied => {
                temp = e.file;
                std::thread::sleep(delay);
                delay *= 2;
                retries -= 1;
            }
            Err(e) => return Err(WriteError::at("replace", path)(e.error)),
        }
    }
}

/// Makes a rename durable. Best effort: some file systems refuse to sync a
/// folder, and the data itself is already synced. Windows has no such
/// call; NTFS journals the rename.
fn sync_dir(dir: &Path) {
    #[cfg(test)]
    DIR_SYNCS.with(|n| n.set(n.get() + 1));
    if cfg!(unix)
        && let Ok(d) = File::open(dir)
    {
        let _ = d.sync_all();
    }
}

/// Removes the temporary files writers killed mid-write left in `dir`;
/// only the holder of the folder lock may ([`TEMP_PREFIXES`]).
pub(crate) fn remove_leftovers(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if TEMP_PREFIXES.iter().any(|p| name.starts_with(p)) && name.ends_with(TEMP_SUFFIX) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
thread_local! {
    /// Folder flushes made on this thread (see `sync_dir`).
    pub(crate) static DIR_SYNCS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}
