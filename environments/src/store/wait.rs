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

use super::lock::{LockMode, PathLock};

/// How often the lock is tried when no inotify event came (lost events, other file systems).
const RETRY_INTERVAL: Duration = Duration::from_millis(500);

/// How often the lock is tried when inotify is not available at all.
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// Takes `path`'s lock in `mode`, waiting as long as it takes. Cancel-safe: dropped before it
/// returns, it holds nothing and leaves nothing behind. Runs its (non-blocking) system calls
/// on the calling thread; needs a tokio runtime with its I/O and time drivers enabled.
pub(crate) async fn acquire(path: &Path, mode: LockMode) -> std::io::Result<PathLock> {
    let mut events = watch::Events::new(path);
    let mut attempt = PathLock::attempt(path, mode)?;
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

#[cfg(target_os = "linux")]
mod watch {
    use std::ffi::OsString;
    use std::mem::MaybeUninit;
    use std::os::fd::OwnedFd;
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;
    use std::time::Duration;

    use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
    use tokio::io::unix::AsyncFd;

    /// inotify events about one file, watched through its directory (so that the watch
    /// survives the file being unlinked and created again).
    pub(super) struct Events {
        fd: AsyncFd<OwnedFd>,
        name: OsString,
    }

    impl Events {
        /// `None` if `path` cannot be watched (no inotify instance left, say).
        pub(super) fn new(path: &Path) -> Option<Events> {
            let dir = path.parent()?;
            let name = path.file_name()?.to_os_string();
            let fd = inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC).ok()?;
            let changes = WatchFlags::CLOSE_WRITE
                | WatchFlags::CLOSE_NOWRITE
                | WatchFlags::DELETE
                | WatchFlags::CREATE
                | WatchFlags::MOVED_FROM
                | WatchFlags::MOVED_TO;
            inotify::add_watch(&fd, dir, changes).ok()?;
            // SAFETY: the descriptor is owned by the `AsyncFd` and stays open, and the same,
            // until the `AsyncFd` is dropped.
            let fd = unsafe { AsyncFd::register(fd) }.ok()?;
            Some(Events { fd, name })
        }

        /// Waits for an event about the file, or for `timeout`.
        pub(super) async fn next(&mut self, timeout: Duration) {
            let _ = tokio::time::timeout(timeout, self.next_event()).await;
        }

        async fn next_event(&mut self) {
            let mut buffer = [MaybeUninit::<u8>::uninit(); 4096];
            loop {
                let Ok(mut ready) = self.fd.readable().await else {
                    // Not pollable after all: rely on the caller's timeout.
                    return std::future::pending().await;
                };
                let Some(relevant) = read_events(ready.get_inner(), &mut buffer, &self.name) else {
                    // A broken descriptor: rely on the caller's timeout.
                    return std::future::pending().await;
                };
                ready.clear_ready();
                if relevant {
                    return;
                }
            }
        }
    }

    /// Reads every queued event: whether one was about `name` (or events were lost); `None`
    /// if the descriptor cannot be read.
    fn read_events(fd: &OwnedFd, buffer: &mut [MaybeUninit<u8>], name: &OsString) -> Option<bool> {
        let mut reader = inotify::Reader::new(fd, buffer);
        let mut relevant = false;
        loop {
            match reader.next() {
                Ok(event) => {
                    let about_file = event
                        .file_name()
                        .is_some_and(|file| file.to_bytes() == name.as_bytes());
                    relevant |= about_file || event.events().contains(ReadFlags::QUEUE_OVERFLOW);
                }
                Err(rustix::io::Errno::AGAIN) => return Some(relevant),
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => return None,
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod watch {
    use std::path::Path;
    use std::time::Duration;

    /// No change notification here: the caller polls.
    pub(super) struct Events;

    impl Events {
        pub(super) fn new(_path: &Path) -> Option<Events> {
            None
        }

        pub(super) async fn next(&mut self, timeout: Duration) {
            tokio::time::sleep(timeout).await
        }
    }
}
