//! The lock that keeps refreshes of one data folder apart.

use std::fs::File;
use std::io;
use std::path::Path;
use std::time::Duration;

use super::IfBusy;
use crate::store::file;
use crate::store::lock::Lock;

/// The lock file that keeps refreshes of one folder apart.
const LOCK_FILE: &str = ".providers.refresh.lock";

/// Why the refresh lock could not be taken.
#[derive(Debug)]
pub(super) enum LockError {
    /// Something else than a regular file stands where the lock is: told
    /// (in one line naming it), never waited on.
    NotRegular(String),
    /// No lock can be made there (nor, then, a catalog saved).
    Io,
}

impl From<io::Error> for LockError {
    fn from(_: io::Error) -> Self {
        LockError::Io
    }
}

/// The lock that keeps refreshes of one folder apart: a file beside the
/// cache, locked while a refresh runs. The kernel releases it when the
/// process ends, however it ends.
pub(super) fn lock_refreshes(
    dir: &Path,
    if_busy: IfBusy,
    wait: Duration,
) -> Result<Option<Lock>, LockError> {
    let path = dir.join(LOCK_FILE);
    let not_regular = |meta: &std::fs::Metadata| {
        LockError::NotRegular(format!(
            "the refresh lock {} is {}, not a regular file; remove it",
            path.display(),
            file::kind(meta)
        ))
    };
    // Opening a FIFO to write waits for a reader: look first.
    if let Ok(meta) = std::fs::metadata(&path)
        && !meta.is_file()
    {
        return Err(not_regular(&meta));
    }
    let open = || {
        let mut options = File::options();
        options.create(true).truncate(false).write(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
        }
        options.open(&path)
    };
    let file = match open() {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir)?;
            open()?
        }
        Err(e) => return Err(e.into()),
    };
    // Made a FIFO since it was looked at: still never waited on.
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    let wait = match if_busy {
        IfBusy::Skip => Duration::ZERO,
        IfBusy::Wait => wait,
    };
    Ok(Lock::on(file, wait)?)
}
