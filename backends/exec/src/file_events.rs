//! Change events about one file, for waiting on a lock without a thread blocked in `flock`:
//! inotify on Linux, watched through the file's directory (so that the watch survives the file
//! being unlinked and created again). A holder releasing its lock closes the file, and the
//! kernel reports the close.

pub use inotify_events::FileEvents;

#[cfg(target_os = "linux")]
mod inotify_events {
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
    ///
    /// Closing an inotify instance waits for a grace period of the kernel's (the marks are
    /// freed under SRCU): 1–23 ms measured here, during which the closing thread is blocked.
    /// So a `FileEvents` dropped inside a tokio runtime closes its descriptor on the blocking
    /// pool, not on an async thread that serves other requests meanwhile.
    pub struct FileEvents {
        fd: Option<AsyncFd<OwnedFd>>,
        name: OsString,
    }

    impl Drop for FileEvents {
        fn drop(&mut self) {
            let Some(fd) = self.fd.take() else { return };
            // Deregistered from the reactor here; closed below.
            let fd = fd.into_inner();
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn_blocking(move || drop(fd));
            }
        }
    }

    impl FileEvents {
        /// `None` if `path` cannot be watched (no inotify instance left, say).
        pub fn new(path: &Path) -> Option<FileEvents> {
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
            Some(FileEvents { fd: Some(fd), name })
        }

        /// Waits for an event about the file, or for `timeout`.
        pub async fn next(&mut self, timeout: Duration) {
            let _ = tokio::time::timeout(timeout, self.next_event()).await;
        }

        async fn next_event(&mut self) {
            let mut buffer = [MaybeUninit::<u8>::uninit(); 4096];
            let Some(fd) = &self.fd else {
                return std::future::pending().await;
            };
            loop {
                let Ok(mut ready) = fd.readable().await else {
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
mod inotify_events {
    use std::path::Path;
    use std::time::Duration;

    /// No change notification here: the caller polls.
    pub struct FileEvents;

    impl FileEvents {
        pub fn new(_path: &Path) -> Option<FileEvents> {
            None
        }

        pub async fn next(&mut self, timeout: Duration) {
            tokio::time::sleep(timeout).await
        }
    }
}
