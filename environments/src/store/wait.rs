//! Waiting for a lock without a thread blocked in `flock`, so that the wait can be abandoned.
//!
//! A blocked `flock` cannot be interrupted: a future that waited that way on the blocking pool
//! would, once dropped, leave a thread behind that still takes the lock when it comes free and
//! acts on it. Here the lock is tried without blocking, and between tries the waiter sleeps on
//! inotify events for the lock file (a holder releasing its lock closes the file, and the
//! kernel reports the close), with a periodic retry as a safety net. Dropping the future ends
//! the wait then and there, having changed nothing.

use std::path::Path;
use std::time::Duration;

use wsp_exec::file_events::FileEvents;

use super::lock::{LockMode, PathLock};

/// How often the lock is tried when no inotify event came (lost events, other file systems).
const RETRY_INTERVAL: Duration = Duration::from_millis(500);

/// How often the lock is tried when inotify is not available at all.
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// Takes `path`'s lock in `mode`, waiting as long as it takes. Cancel-safe: dropped before it
/// returns, it holds nothing and leaves nothing behind. Runs its (non-blocking) system calls
/// on the calling thread; needs a tokio runtime with its I/O and time drivers enabled.
///
/// A lock that is free is taken at the first try, with no watch set up: an inotify instance
/// costs a grace period of the kernel's to close (see [`FileEvents`]). The watch is set up
/// before the next try, so a release between the two tries is not missed.
pub(crate) async fn acquire(path: &Path, mode: LockMode) -> std::io::Result<PathLock> {
    let mut attempt = match PathLock::attempt(path, mode)?.try_lock()? {
        Ok(lock) => return Ok(lock),
        Err(attempt) => attempt,
    };
    let mut events = FileEvents::new(path);
    loop {
        attempt = match attempt.try_lock()? {
            Ok(lock) => return Ok(lock),
            Err(attempt) => attempt,
        };
        match events.as_mut() {
            Some(events) => events.next(RETRY_INTERVAL).await,
            None => tokio::time::sleep(POLL_INTERVAL).await,
        }
    }
}
