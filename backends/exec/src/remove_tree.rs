//! Deleting a directory tree without recursion: however deep the tree, the stack stays flat
//! and at most three descriptors are open.
//!
//! `std::fs::remove_dir_all` and the crates that do its job (`remove_dir_all`, cap-std's) hold
//! a stack frame and a descriptor for every level, so a tree some tens of thousands deep (an
//! environment's files are untrusted input) overflows the stack or runs out of descriptors.
//! Here one directory is open at a time, and the walk goes down through `openat` of a child
//! and up through `..`:
//! - an entry is unlinked with `unlinkat`; a directory is tried with `AT_REMOVEDIR` first and
//!   entered (`O_NOFOLLOW | O_DIRECTORY`) only when it is not empty; nothing is ever followed:
//!   a symlink, wherever it lies, is removed as a link;
//! - once a directory is empty the walk goes back to its parent through `..` and checks that
//!   it arrived where it came from (device and inode); a tree moved away meanwhile is not
//!   chased (the removal fails instead of deleting whatever the moved directory now lies in);
//! - the parent's listing resumes where it was left, so each entry is read about once.
//!
//! The same walk removes a tree of cgroups, where only the directories are removed.
//!
//! Memory is 24 bytes per level of depth (the identity of each directory on the way down and
//! where its listing stopped) plus one listing buffer. A directory its owner made unwritable or
//! unreadable is given back its owner's rights (0700) once, and the step retried.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::Path;

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use rustix::io::Errno;

/// What the tree holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Contents {
    /// Files, symlinks and directories: everything is unlinked.
    Files,
    /// Cgroups: only the directories are removed (their interface files go with them), and a
    /// cgroup that still has processes fails the removal (`EBUSY`).
    Cgroups,
}

/// Deletes `path`: a directory with everything below it, or a file or symlink itself. A
/// missing path is not an error. The last component of `path` is not followed either.
pub fn remove_tree(path: &Path) -> io::Result<()> {
    remove(path, Contents::Files)
}

/// Removes the cgroup `path` and every cgroup below it, deepest first. They must hold no
/// process; a missing path is not an error.
pub(crate) fn remove_cgroup_tree(path: &Path) -> io::Result<()> {
    remove(path, Contents::Cgroups)
}

fn remove(path: &Path, contents: Contents) -> io::Result<()> {
    let Some(name) = path.file_name() else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} names no entry to remove", path.display()),
        ));
    };
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let parent = match rustix::fs::open(
        parent,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(parent) => parent,
        Err(Errno::NOENT) => return Ok(()),
        Err(error) => return Err(error.into()),
    };
    remove_entry(&parent, name, contents)
}

/// One directory on the way down from the tree's top to the one being emptied.
struct Level {
    identity: (u64, u64),
    /// Where its listing resumes: just before the child the walk went into.
    resume: i64,
}

/// Removes `name` in `parent`, whatever kind of entry it is. `parent` itself is never
/// changed, its mode included.
fn remove_entry(
    parent: &OwnedFd,
    name: impl rustix::path::Arg + Copy,
    contents: Contents,
) -> io::Result<()> {
    match rustix::fs::unlinkat(parent, name, AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => return Ok(()),
        Err(Errno::ISDIR) => {}
        Err(error) => return Err(error.into()),
    }
    let top = match enter(parent, name) {
        Ok(top) => top,
        Err(Errno::NOENT) => return Ok(()),
        Err(error) => return Err(error.into()),
    };
    empty_tree(top, contents)?;
    match rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR) {
        Ok(()) | Err(Errno::NOENT) => Ok(()),
        Err(error) => Err(error.into()),
    }
}

/// Empties the tree whose top directory `top` is, iteratively.
fn empty_tree(top: OwnedFd, contents: Contents) -> io::Result<()> {
    let mut above: Vec<Level> = Vec::new();
    let mut current = top;
    let mut resume = 0;
    let mut emptied = None;
    loop {
        let walk = Walk { contents, emptied };
        match walk.empty_or_descend(&current, resume)? {
            Step::Descend { child, resume: at } => {
                above.push(Level {
                    identity: identity(&current)?,
                    resume: at,
                });
                current = child;
                resume = 0;
                emptied = None;
            }
            Step::Empty => {
                let Some(level) = above.pop() else {
                    return Ok(());
                };
                let up = rustix::fs::openat(
                    &current,
                    c"..",
                    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                )?;
                if identity(&up)? != level.identity {
                    return Err(io::Error::other(
                        "a directory was moved out of the tree while the tree was being removed",
                    ));
                }
                emptied = Some(identity(&current)?);
                current = up;
                resume = level.resume;
            }
        }
    }
}

enum Step {
    /// Every entry is gone.
    Empty,
    /// `child` is a directory that is not empty; the listing resumes at `resume` afterwards.
    Descend { child: OwnedFd, resume: i64 },
}

/// One step of the walk.
struct Walk {
    contents: Contents,
    /// The directory the walk just emptied and left: it is not entered again, since what
    /// still keeps it from being removed (a process in a cgroup, a writer refilling it) is
    /// not something removing entries can fix.
    emptied: Option<(u64, u64)>,
}

impl Walk {
    /// Removes the entries of `dir` from listing position `resume` on, until a directory that is
    /// not empty is found. A scan that did not start at the top is followed by one that does, so
    /// that `Empty` is only said of a directory read whole from its start.
    fn empty_or_descend(&self, dir: &OwnedFd, resume: i64) -> Result<Step, Errno> {
        let mut start = resume;
        loop {
            let mut entries = Dir::read_from(dir)?;
            if start != 0 {
                entries.seek(start)?;
            }
            let mut before = start;
            // An entry replaced by another kind of entry since it was listed: read the listing again.
            let mut raced = false;
            while let Some(entry) = entries.read() {
                let entry = entry?;
                let name = entry.file_name();
                let position = before;
                before = entry.offset();
                if is_dot(name) {
                    continue;
                }
                let is_dir = match entry.file_type() {
                    FileType::Unknown => {
                        match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                            Ok(stat) => {
                                FileType::from_raw_mode(stat.st_mode) == FileType::Directory
                            }
                            Err(Errno::NOENT) => continue,
                            Err(error) => return Err(error),
                        }
                    }
                    kind => kind == FileType::Directory,
                };
                if !is_dir && self.contents == Contents::Cgroups {
                    continue;
                }
                if !is_dir {
                    match unlinkat(dir, name, AtFlags::empty()) {
                        Ok(()) | Err(Errno::NOENT) => continue,
                        Err(Errno::ISDIR) => {
                            raced = true;
                            continue;
                        }
                        Err(error) => return Err(error),
                    }
                }
                let refused = match unlinkat(dir, name, AtFlags::REMOVEDIR) {
                    Ok(()) | Err(Errno::NOENT) => continue,
                    Err(error @ (Errno::NOTEMPTY | Errno::EXIST)) => error,
                    Err(Errno::BUSY) if self.contents == Contents::Cgroups => Errno::BUSY,
                    Err(Errno::NOTDIR) => {
                        raced = true;
                        continue;
                    }
                    Err(error) => return Err(error),
                };
                match enter(dir, name) {
                    Ok(child)
                        if self.emptied.is_some() && self.emptied == identity(&child).ok() =>
                    {
                        return Err(refused)
                    }
                    Ok(child) => {
                        return Ok(Step::Descend {
                            child,
                            resume: position,
                        })
                    }
                    Err(Errno::NOENT) => continue,
                    Err(Errno::LOOP | Errno::NOTDIR) => {
                        raced = true;
                        continue;
                    }
                    Err(error) => return Err(error),
                }
            }
            if start == 0 && !raced {
                return Ok(Step::Empty);
            }
            start = 0;
        }
    }
}

fn is_dot(name: &CStr) -> bool {
    matches!(name.to_bytes(), b"." | b"..")
}

/// `unlinkat` inside the tree, retried once after giving `dir` back its owner's rights when
/// they were missing.
fn unlinkat(
    dir: &OwnedFd,
    name: impl rustix::path::Arg + Copy,
    flags: AtFlags,
) -> Result<(), Errno> {
    match rustix::fs::unlinkat(dir, name, flags) {
        Err(Errno::ACCESS) => {
            rustix::fs::fchmod(dir, Mode::RWXU)?;
            rustix::fs::unlinkat(dir, name, flags)
        }
        other => other,
    }
}

/// Opens the directory `name` in `parent` without following a symlink, giving it back its
/// owner's rights first when they were missing.
fn enter(parent: &OwnedFd, name: impl rustix::path::Arg + Copy) -> Result<OwnedFd, Errno> {
    match open_dir(parent, name) {
        Err(Errno::ACCESS) => {}
        other => return other,
    }
    // Not readable or not searchable by its owner: change its mode through a path-only
    // descriptor (which never follows a symlink), then open it for reading.
    let handle = rustix::fs::openat(
        parent,
        name,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    rustix::fs::chmod(format!("/proc/self/fd/{}", handle.as_raw_fd()), Mode::RWXU)?;
    open_dir(parent, name)
}

fn open_dir(parent: impl AsFd, name: impl rustix::path::Arg) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(
        parent,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

fn identity(dir: &OwnedFd) -> Result<(u64, u64), Errno> {
    let stat = rustix::fs::fstat(dir)?;
    Ok((stat.st_dev, stat.st_ino))
}

#[cfg(test)]
mod tests;
