//! Advisory `flock` locks on named files, safe against the files being unlinked.
//!
//! `flock` locks an open file description, not a path. To let a lock file be deleted while
//! others may be waiting on it, every acquisition re-checks after locking that the path still
//! names the locked inode and starts over if not. Holding a verified exclusive lock therefore
//! makes it safe to unlink the path: nobody else can hold a verified lock on that inode, and
//! anyone still waiting on it will notice and retry on a fresh file.

use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use fs4::fs_std::FileExt;
use rustix::fs::{Mode, OFlags};

/// Shared (many holders) or exclusive (one holder).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LockMode {
    /// Any number of shared holders, no exclusive one.
    Shared,
    /// A single holder.
    Exclusive,
}

/// A held lock on a file; released when dropped.
#[derive(Debug)]
pub(crate) struct PathLock {
    file: File,
    path: PathBuf,
    mode: LockMode,
}

impl PathLock {
    /// Locks `path` (creating the file if needed), waiting as long as it takes. Blocking.
    pub(crate) fn acquire(path: &Path, mode: LockMode) -> io::Result<PathLock> {
        loop {
            let file = open_lock_file(path)?;
            retry_interrupted(|| match mode {
                LockMode::Shared => FileExt::lock_shared(&file),
                LockMode::Exclusive => FileExt::lock_exclusive(&file),
            })?;
            if still_named_by(&file, path)? {
                return Ok(PathLock {
                    file,
                    path: path.to_path_buf(),
                    mode,
                });
            }
        }
    }

    /// Locks `path` (creating the file if needed) if nobody holds a conflicting lock.
    pub(crate) fn try_acquire(path: &Path, mode: LockMode) -> io::Result<Option<PathLock>> {
        loop {
            let file = open_lock_file(path)?;
            let locked = retry_interrupted(|| match mode {
                LockMode::Shared => FileExt::try_lock_shared(&file),
                LockMode::Exclusive => FileExt::try_lock_exclusive(&file),
            })?;
            if !locked {
                return Ok(None);
            }
            if still_named_by(&file, path)? {
                return Ok(Some(PathLock {
                    file,
                    path: path.to_path_buf(),
                    mode,
                }));
            }
        }
    }

    /// Opens `path` (creating the file if needed) for repeated [`LockAttempt::try_lock`]s on
    /// one open file, so that failed attempts open and close nothing.
    pub(crate) fn attempt(path: &Path, mode: LockMode) -> io::Result<LockAttempt> {
        Ok(LockAttempt {
            file: open_lock_file(path)?,
            path: path.to_path_buf(),
            mode,
        })
    }

    /// The locked file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Deletes the lock file, then releases the lock. Only an exclusive holder may do this;
    /// a shared holder just releases.
    /// Sets the lock file's modification time to now.
    pub(crate) fn set_modified_now(&self) -> io::Result<()> {
        self.file.set_modified(std::time::SystemTime::now())
    }

    pub(crate) fn unlink(self) -> io::Result<()> {
        if self.mode == LockMode::Exclusive {
            match std::fs::remove_file(&self.path) {
                Err(error) if error.kind() != io::ErrorKind::NotFound => return Err(error),
                _ => {}
            }
        }
        drop(self.file);
        Ok(())
    }
}

/// A lock file held open for taking its lock without waiting, again and again.
#[derive(Debug)]
pub(crate) struct LockAttempt {
    file: File,
    path: PathBuf,
    mode: LockMode,
}

impl LockAttempt {
    /// Takes the lock if nobody holds a conflicting one; otherwise gives the attempt back.
    pub(crate) fn try_lock(mut self) -> io::Result<Result<PathLock, LockAttempt>> {
        loop {
            let locked = retry_interrupted(|| match self.mode {
                LockMode::Shared => FileExt::try_lock_shared(&self.file),
                LockMode::Exclusive => FileExt::try_lock_exclusive(&self.file),
            })?;
            if !locked {
                return Ok(Err(self));
            }
            if still_named_by(&self.file, &self.path)? {
                return Ok(Ok(PathLock {
                    file: self.file,
                    path: self.path,
                    mode: self.mode,
                }));
            }
            // The file was unlinked by its last exclusive holder: try its successor.
            self.file = open_lock_file(&self.path)?;
        }
    }
}

/// Whether some process holds a lock on the existing file `path` that excludes a shared one
/// (an exclusive lock). A missing file is held by nobody; the file is never created.
pub(crate) fn held_exclusively(path: &Path) -> io::Result<bool> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let file = match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd) => File::from(fd),
        Err(rustix::io::Errno::NOENT) => return Ok(false),
        Err(errno) => return Err(errno.into()),
    };
    Ok(!retry_interrupted(|| FileExt::try_lock_shared(&file))?)
}

/// Opens `path` read-only, creating it if missing: `flock` needs no write access, so a lock
/// file created under a restrictive umask stays usable. A symlink is refused (`ELOOP`), never
/// followed, so no lock file is ever made or locked outside its directory; a FIFO or anything
/// else that is not a regular file is refused without blocking (lock files in an environment's
/// root are not trusted).
pub(crate) fn open_lock_file(path: &Path) -> io::Result<File> {
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )?;
    let file = File::from(fd);
    if !file.metadata()?.is_file() {
        return Err(io::Error::other(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    Ok(file)
}

/// Whether `path` still names the inode `file` has open.
fn still_named_by(file: &File, path: &Path) -> io::Result<bool> {
    let held = file.metadata()?;
    match std::fs::symlink_metadata(path) {
        Ok(named) => Ok(named.dev() == held.dev() && named.ino() == held.ino()),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(error) => Err(error),
    }
}

fn retry_interrupted<T>(mut operation: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    loop {
        match operation() {
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_excludes_across_open_file_descriptions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.lock");
        let held = PathLock::acquire(&path, LockMode::Exclusive).unwrap();
        assert!(PathLock::try_acquire(&path, LockMode::Shared)
            .unwrap()
            .is_none());
        drop(held);
        let shared = PathLock::try_acquire(&path, LockMode::Shared).unwrap();
        assert!(shared.is_some());
        assert!(PathLock::try_acquire(&path, LockMode::Shared)
            .unwrap()
            .is_some());
        assert!(PathLock::try_acquire(&path, LockMode::Exclusive)
            .unwrap()
            .is_none());
    }

    #[test]
    fn a_waiter_on_an_unlinked_file_moves_to_the_new_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.lock");
        let held = PathLock::acquire(&path, LockMode::Exclusive).unwrap();
        let waiter_path = path.clone();
        let waiter = std::thread::spawn(move || {
            PathLock::acquire(&waiter_path, LockMode::Exclusive).unwrap()
        });
        held.unlink().unwrap();
        let taken = waiter.join().unwrap();
        let named = std::fs::metadata(&path).unwrap();
        let locked = taken.file.metadata().unwrap();
        assert_eq!(named.ino(), locked.ino());
    }
}
