//! Waiting for a file lock, bounded: the one loop behind the folder lock
//! of every writer of the cache and the lock that keeps refreshes apart.

use std::fs::{File, TryLockError};
use std::io;
use std::time::{Duration, Instant};

/// How often a held lock is tried again.
const POLL: Duration = Duration::from_millis(10);

/// Locks `file` exclusively, trying again for at most `wait` while another
/// holds it; `Ok(false)` when it was still held then. The lock is released
/// when the file is closed, which the kernel does if the process dies.
pub fn within(file: &File, wait: Duration) -> io::Result<bool> {
    let start = Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(true),
            Err(TryLockError::Error(e)) => return Err(e),
            Err(TryLockError::WouldBlock) if start.elapsed() >= wait => return Ok(false),
            Err(TryLockError::WouldBlock) => std::thread::sleep(POLL),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_is_waited_for_then_given_up() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock");
        let holder = File::create(&path).unwrap();
        let other = File::open(&path).unwrap();
        assert!(within(&holder, Duration::ZERO).unwrap());
        let start = Instant::now();
        assert!(!within(&other, Duration::from_millis(100)).unwrap());
        assert!(start.elapsed() >= Duration::from_millis(100));
        drop(holder);
        assert!(within(&other, Duration::ZERO).unwrap());
    }
}
