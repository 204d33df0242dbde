//! One install at a time per environment, across processes: an exclusive `flock` on
//! `<root>/.wsp-install.lock`.
//!
//! The file lives in the environment, whose files are not trusted: it is opened without
//! following a symlink and without blocking on a FIFO, and must be a regular file. Waiting
//! never blocks a thread: the lock is tried, and tried again a little later, so a waiting
//! install can be cancelled at any moment.

use std::fs::File;
use std::io;
use std::path::Path;
use std::time::Duration;

use fs4::fs_std::FileExt;
use rustix::fs::{Mode, OFlags};

/// The lock file's name in an environment's root.
pub const INSTALL_LOCK_FILE: &str = ".wsp-install.lock";

/// How long a waiting install sleeps between tries; doubled up to [`MAX_RETRY`].
const FIRST_RETRY: Duration = Duration::from_millis(5);
const MAX_RETRY: Duration = Duration::from_millis(100);

/// The exclusive install lock of one environment; released when dropped.
#[derive(Debug)]
pub struct InstallLock {
    _file: File,
}

/// Takes the install lock of the environment at `root`, waiting while another process holds
/// it.
pub async fn lock_environment(root: &Path) -> io::Result<InstallLock> {
    let path = root.join(INSTALL_LOCK_FILE);
    let mut retry = FIRST_RETRY;
    loop {
        let attempt = {
            let path = path.clone();
            tokio::task::spawn_blocking(move || try_lock(&path))
                .await
                .map_err(io::Error::other)?
        };
        if let Some(lock) = attempt? {
            return Ok(lock);
        }
        tokio::time::sleep(retry).await;
        retry = (retry * 2).min(MAX_RETRY);
    }
}

fn try_lock(path: &Path) -> io::Result<Option<InstallLock>> {
    let flags =
        OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = rustix::fs::open(path, flags, Mode::from_raw_mode(0o600))?;
    let file = File::from(fd);
    if !file.metadata()?.is_file() {
        return Err(io::Error::other(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    match FileExt::try_lock_exclusive(&file) {
        Ok(true) => Ok(Some(InstallLock { _file: file })),
        Ok(false) => Ok(None),
        Err(error) if error.kind() == io::ErrorKind::WouldBlock => Ok(None),
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_second_lock_waits_for_the_first() {
        let root = tempfile::tempdir().unwrap();
        let first = lock_environment(root.path()).await.unwrap();
        let second = tokio::spawn({
            let root = root.path().to_owned();
            async move { lock_environment(&root).await.map(|_| ()) }
        });
        assert!(try_lock(&root.path().join(INSTALL_LOCK_FILE))
            .unwrap()
            .is_none());
        assert!(!second.is_finished());
        drop(first);
        second.await.unwrap().unwrap();
    }

    #[test]
    fn a_symlinked_lock_file_is_refused() {
        let root = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.path().join(INSTALL_LOCK_FILE)).unwrap();
        assert!(try_lock(&root.path().join(INSTALL_LOCK_FILE)).is_err());
    }
}
