//! Reading the files this program finds by itself (the cache, its state,
//! the memory of where keys went, the refresh lock, configuration files, a
//! signature beside a file) as a careful tool reads them: only regular
//! files, opened without blocking (a FIFO there would otherwise hang the
//! program until someone writes to it), never past a cap (a link to
//! `/dev/zero` would otherwise grow without bound); and, as ssh does with
//! its keys, not trusting one that another user owns or may write, which
//! could send a key anywhere.
//!
//! A source a person names (`update-providers FILE`) is not read here: it
//! may be a pipe (`<(curl …)`), and is read with its own cap.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::path::Path;

/// The largest file read: as large as a downloaded catalog may be.
pub(crate) const MAX_FILE_BYTES: usize = 64 * 1024 * 1024;

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FileError {
    /// The system's reason.
    #[error("{}", io_words(.0))]
    Io(#[from] io::Error),
    /// Something else than a regular file stands there (what: `a FIFO`).
    #[error("it is {0}, not a regular file")]
    NotRegular(&'static str),
    /// Larger than the cap.
    #[error("it is larger than the limit of {} MiB", .0 / (1024 * 1024))]
    TooLarge(usize),
}

/// What a file's metadata says it is: `a regular file`, `a folder`,
/// `a FIFO`, `a device`, `a socket`.
pub(crate) fn kind(meta: &Metadata) -> &'static str {
    let file_type = meta.file_type();
    if file_type.is_file() {
        return "a regular file";
    }
    if file_type.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_block_device() || file_type.is_char_device() {
            return "a device";
        }
    }
    "not a file"
}

/// Opens `path` for reading, without blocking, when it is a regular file
/// (following links, so that a link to a device is refused by what it
/// leads to); `Ok(None)` when there is nothing there.
pub(crate) fn open_regular(path: &Path) -> Result<Option<(File, Metadata)>, FileError> {
    let mut options = File::options();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // A FIFO opens at once, rather than when a writer comes; reads of
        // a regular file do not notice the flag.
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(FileError::NotRegular(kind(&meta)));
    }
    Ok(Some((file, meta)))
}

/// The bytes of the regular file at `path`, at most `cap` of them, and its
/// metadata as it was opened; `Ok(None)` when there is nothing there.
pub(crate) fn read_regular(
    path: &Path,
    cap: usize,
) -> Result<Option<(Vec<u8>, Metadata)>, FileError> {
    let Some((file, meta)) = open_regular(path)? else {
        return Ok(None);
    };
    if meta.len() > cap as u64 {
        return Err(FileError::TooLarge(cap));
    }
    // The size is a hint: the file may grow while it is read.
    let mut bytes = Vec::with_capacity(meta.len() as usize + 1);
    file.take(cap as u64 + 1).read_to_end(&mut bytes)?;
    if bytes.len() > cap {
        return Err(FileError::TooLarge(cap));
    }
    Ok(Some((bytes, meta)))
}

/// Why a file or folder, by its metadata, may have been written by
/// another user than the one this program runs as, as ssh's StrictModes
/// tells it: owned by another user than this one or root, writable by
/// every user, or writable by a group other than this user's own (so that
/// a `umask 002` system, where each user has a group of their own, keeps
/// working). `None` when only this user (or root) can have written it.
/// Windows has no such modes: there it is always `None`.
#[cfg(unix)]
pub(crate) fn untrusted(meta: &Metadata) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let me = rustix::process::geteuid().as_raw();
    let owner = meta.uid();
    let mode = meta.mode() & 0o7777;
    if owner != me && owner != 0 {
        return Some(format!("it is owned by another user (uid {owner})"));
    }
    if mode & 0o002 != 0 {
        return Some(format!("every user may write it (mode {mode:04o})"));
    }
    let group = meta.gid();
    if mode & 0o020 != 0 && group != rustix::process::getegid().as_raw() {
        return Some(format!(
            "the users of group {group} may write it (mode {mode:04o})"
        ));
    }
    None
}

#[cfg(not(unix))]
pub(crate) fn untrusted(_: &Metadata) -> Option<String> {
    None
}

/// What the system said of a file, in plain words, without the `(os
/// error N)` it appends. The kind wins over any words the error carries
/// (tempfile's, for one, add the random name of a temporary file to a
/// message that names its folder already); `AlreadyExists` is what
/// creating a folder meets where a file has its name, the only place this
/// program meets it.
pub(crate) fn io_words(e: &io::Error) -> String {
    match (e.kind(), e.get_ref()) {
        (io::ErrorKind::NotFound, _) => "there is no such file".into(),
        (io::ErrorKind::PermissionDenied, _) => "permission denied".into(),
        (io::ErrorKind::IsADirectory, _) => "it is a folder, not a file".into(),
        (io::ErrorKind::NotADirectory, _) => "a part of its path is not a folder".into(),
        // What creating a folder meets where a file has its name.
        (io::ErrorKind::AlreadyExists, _) => "a file, not a folder, has that name".into(),
        (_, Some(inner)) => without_os_error(&inner.to_string()),
        _ => without_os_error(&e.to_string()),
    }
}

/// `text` without the ` (os error N)` the system appends to its messages.
pub(crate) fn without_os_error(text: &str) -> String {
    let mut out = text.to_owned();
    while let Some(at) = out.find(" (os error ") {
        let Some(end) = out[at..].find(')') else {
            break;
        };
        out.replace_range(at..at + end + 1, "");
    }
    out
}

#[cfg(unix)]
#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, chown};

    fn fifo(path: &Path) {
        let made = std::process::Command::new("mkfifo").arg(path).status();
        assert!(made.unwrap().success(), "mkfifo");
    }

    /// A FIFO, a folder, a device and a link to one are refused at once;
    /// a missing file is none; a file over the cap is refused.
    #[test]
    fn only_regular_files_are_read_and_never_past_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let pipe = dir.path().join("pipe");
        fifo(&pipe);
        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        for (path, what) in [
            (pipe.as_path(), "it is a FIFO, not a regular file"),
            (dir.path(), "it is a folder, not a regular file"),
            (zero.as_path(), "it is a device, not a regular file"),
        ] {
            let e = read_regular(path, 10).unwrap_err();
            assert_eq!(e.to_string(), what);
        }
        assert!(
            read_regular(&dir.path().join("none"), 10)
                .unwrap()
                .is_none()
        );
        let file = dir.path().join("file");
        std::fs::write(&file, b"0123456789a").unwrap();
        assert!(matches!(
            read_regular(&file, 10),
            Err(FileError::TooLarge(10))
        ));
        assert_eq!(read_regular(&file, 11).unwrap().unwrap().0, b"0123456789a");
    }

    /// Owned by another user, or writable by all, or by another group:
    /// not trusted; this user's own, group-writable by their own group, or
    /// root's: trusted.
    #[test]
    fn files_another_user_may_have_written_are_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        let meta = || std::fs::metadata(&file).unwrap();
        let mode = |m: u32| std::fs::set_permissions(&file, PermissionsExt::from_mode(m)).unwrap();
        mode(0o644);
        assert_eq!(untrusted(&meta()), None);
        mode(0o664);
        assert_eq!(untrusted(&meta()), None, "this user's own group");
        mode(0o646);
        assert_eq!(
            untrusted(&meta()).unwrap(),
            "every user may write it (mode 0646)"
        );
        mode(0o664);
        if chown(&file, None, Some(54_321)).is_ok() {
            assert_eq!(
                untrusted(&meta()).unwrap(),
                "the users of group 54321 may write it (mode 0664)"
            );
            mode(0o644);
            assert_eq!(untrusted(&meta()), None);
        } else {
            eprintln!("skipped the group case: cannot give a file to another group here");
        }
        if chown(&file, Some(54_321), None).is_ok() {
            assert_eq!(
                untrusted(&meta()).unwrap(),
                "it is owned by another user (uid 54321)"
            );
        } else {
            eprintln!("skipped the owner case: cannot give a file to another user here (not root)");
        }
    }
}
