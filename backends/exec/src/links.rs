//! Copying the hard-linked files of an environment before a sandboxed run.
//!
//! Installers hard-link files from their caches into environments (uv from its cache, the
//! venv backend's pip seed, conda from its package cache). A hard link is the same file: a
//! sandboxed command may write everything in its root, and writing such a file would write
//! the cache's copy, which other environments are later made from, and run unconfined. So
//! before a sandboxed run every regular file of the root with more than one link is replaced
//! by a copy of its own (same contents and mode, then renamed over the link).
//!
//! The tree is untrusted and may change while it is walked (another command of the same
//! environment may be running): every directory is opened beneath the root with
//! `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, and every file operation is relative to that open
//! directory, so nothing is followed out of the root. The walk keeps a list of directories,
//! not a recursion, so its depth is bounded only by the path length the kernel accepts; a
//! tree too deep for that is refused.

use std::ffi::{CStr, OsStr};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, ResolveFlags};

/// How many files were copied.
pub(super) fn unshare_links(root: &Path) -> io::Result<usize> {
    let root_dir = rustix::fs::open(root, directory_flags(), Mode::empty())?;
    let mut pending = vec![PathBuf::from(".")];
    let mut copied = 0;
    while let Some(relative) = pending.pop() {
        let dir = match open_beneath(&root_dir, &relative) {
            Ok(dir) => dir,
            // Removed or swapped for something else since it was listed: nothing to copy.
            Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => continue,
            Err(rustix::io::Errno::LOOP | rustix::io::Errno::XDEV) => continue,
            Err(error) => return Err(error.into()),
        };
        for entry in Dir::read_from(&dir)? {
            let entry = entry?;
            let name = entry.file_name();
            if matches!(name.to_bytes(), b"." | b"..") {
                continue;
            }
            let Ok(stat) = rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) else {
                continue;
            };
            match FileType::from_raw_mode(stat.st_mode) {
                FileType::Directory => {
                    pending.push(relative.join(OsStr::from_bytes(name.to_bytes())));
                }
                FileType::RegularFile if stat.st_nlink > 1 => {
                    copy_over(&dir, name, stat.st_mode & 0o7777)?;
                    copied += 1;
                }
                _ => {}
            }
        }
    }
    Ok(copied)
}

fn directory_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

fn open_beneath(root: &OwnedFd, relative: &Path) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat2(
        root,
        relative,
        directory_flags(),
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
    )
}

/// Replaces `name` in `dir` by a copy with the same contents and `mode`.
fn copy_over(dir: &OwnedFd, name: &CStr, mode: u32) -> io::Result<()> {
    let source = rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mut source = File::from(source);
    let temporary = temporary_name(name);
    let copy = rustix::fs::openat(
        dir,
        temporary.as_c_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )?;
    let mut copy = File::from(copy);
    let copied = io::copy(&mut source, &mut copy)
        .and_then(|_| {
            rustix::fs::fchmod(copy.as_fd(), Mode::from_raw_mode(mode)).map_err(Into::into)
        })
        .and_then(|()| {
            rustix::fs::renameat(dir, temporary.as_c_str(), dir, name).map_err(Into::into)
        });
    if copied.is_err() {
        let _ = rustix::fs::unlinkat(dir, temporary.as_c_str(), AtFlags::empty());
    }
    copied
}

/// A fresh name beside `name`.
fn temporary_name(name: &CStr) -> std::ffi::CString {
    let nonce: u64 = rand::random();
    let mut bytes = b".wsp-unlink-".to_vec();
    bytes.extend_from_slice(format!("{nonce:016x}-").as_bytes());
    bytes.extend(name.to_bytes().iter().take(128));
    // The name came from a directory entry, which holds no NUL.
    std::ffi::CString::new(bytes).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn hard_links_become_copies_and_symlinks_are_not_followed() {
        let outside = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        let shared = outside.path().join("cached.py");
        std::fs::write(&shared, "cached\n").unwrap();
        std::fs::create_dir_all(root.path().join("lib/deep")).unwrap();
        let linked = root.path().join("lib/deep/module.py");
        std::fs::hard_link(&shared, &linked).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("lib/out")).unwrap();
        std::fs::write(root.path().join("single.txt"), "alone\n").unwrap();

        assert_eq!(unshare_links(root.path()).unwrap(), 1);
        assert_eq!(std::fs::metadata(&linked).unwrap().nlink(), 1);
        assert_eq!(std::fs::metadata(&shared).unwrap().nlink(), 1);
        std::fs::write(&linked, "changed\n").unwrap();
        assert_eq!(std::fs::read_to_string(&shared).unwrap(), "cached\n");
        assert_eq!(unshare_links(root.path()).unwrap(), 0);
    }
}
