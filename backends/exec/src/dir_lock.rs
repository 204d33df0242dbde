//! Directories their owning process locks for as long as it lives: an exclusive `flock` on
//! the directory itself. One whose lock nobody holds belongs to a process that is gone (a
//! dead server's cgroup subtree, a dead server's sandbox TMPDIRs).

use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{flock, FlockOperation, Mode, OFlags};

/// `dir` opened as a directory, to lock, never through a symlink.
pub(crate) fn open_dir(dir: &Path) -> io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    Ok(rustix::fs::open(dir, flags, Mode::empty())?)
}

/// `dir`'s lock, taken if no process holds it; `None` while one does (or when `dir` cannot
/// be opened).
pub(crate) fn lock_if_unheld(dir: &Path) -> Option<OwnedFd> {
    let lock = open_dir(dir).ok()?;
    flock(&lock, FlockOperation::NonBlockingLockExclusive).ok()?;
    Some(lock)
}

/// Whether `lock` is still the directory at `dir`: not removed (and maybe made again) by a
/// sweeper since it was opened.
pub(crate) fn still_at(lock: &OwnedFd, dir: &Path) -> io::Result<bool> {
    let locked = rustix::fs::fstat(lock)?;
    Ok(rustix::fs::stat(dir)
        .is_ok_and(|now| (now.st_dev, now.st_ino) == (locked.st_dev, locked.st_ino)))
}
