//! Waiting for a file lock, bounded: the one loop behind the folder lock
//! of every writer of the cache and the lock that keeps refreshes apart.

use std::fs::{File, TryLockError};
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::store::atomic;

/// How often a held lock is tried again.
const POLL: Duration = Duration::from_millis(10);

/// A lock held on a file, released when dropped (by the kernel when the
/// process dies): the folder lock of every writer of the cache
/// ([`Lock::folder`]), and the lock that keeps refreshes apart.
#[derive(Debug)]
pub(crate) struct Lock(#[allow(dead_code)] File);

impl Lock {
    /// Locks `file` exclusively, trying again for at most `wait` while
    /// another holds it; `None` when another still holds it then. The
    /// lock is released when the file is closed, which the kernel does if
    /// the process dies.
    pub(crate) fn on(file: File, wait: Duration) -> io::Result<Option<Lock>> {
        let start = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Some(Lock(file))),
                Err(TryLockError::Error(e)) => return Err(e),
                Err(TryLockError::WouldBlock) if start.elapsed() >= wait => return Ok(None),
                Err(TryLockError::WouldBlock) => std::thread::sleep(POLL),
            }
        }
    }

    /// The lock of one writer of the cache folder `dir`, waiting at most
    /// `wait` for it; whoever holds it may clean up after writers that
    /// were killed: no other writer is between its stage and its rename.
    pub(crate) fn folder(dir: &Path, wait: Duration) -> io::Result<Lock> {
        let Some(lock) = Self::on(open_folder(dir)?, wait)? else {
            return Err(io::Error::other(format!(
                "another process has been writing it for over {} s",
                wait.as_secs_f64()
            )));
        };
        atomic::remove_leftovers(dir);
        Ok(lock)
    }
}

/// Unix locks the folder itself, so no lock file is left behind; opened as
/// a folder, so that anything else there is an error at once rather than
/// a wait.
#[cfg(unix)]
fn open_folder(dir: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let flags = rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::NONBLOCK;
    File::options()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(dir)
}

/// Windows cannot lock a folder handle; it locks a file beside the cache.
#[cfg(not(unix))]
fn open_folder(dir: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(".providers.lock"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_is_waited_for_then_given_up() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock");
        let other = || File::open(&path).unwrap();
        let holder = Lock::on(File::create(&path).unwrap(), Duration::ZERO).unwrap();
        assert!(holder.is_some());
        let start = Instant::now();
        assert!(
            Lock::on(other(), Duration::from_millis(100))
                .unwrap()
                .is_none()
        );
        assert!(start.elapsed() >= Duration::from_millis(100));
        drop(holder);
        assert!(Lock::on(other(), Duration::ZERO).unwrap().is_some());
    }
}
