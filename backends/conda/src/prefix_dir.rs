//! A prefix opened as a directory, and every path beneath it resolved part by part with
//! `O_NOFOLLOW`, so that a symlink planted anywhere in the prefix (say `lib` replaced by a link
//! to an outside directory) is seen and never followed. Callers pass paths that
//! [`check_relative_path`](crate::untrusted::check_relative_path) accepted, so no part is `..`.

use std::ffi::OsStr;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, CWD};
use rustix::io::Errno;

/// What a directory path beneath the prefix turned out to be.
pub(crate) enum Found {
    /// A directory, reached without following a symlink.
    Dir(OwnedFd),
    /// It, or a part on the way, does not exist or is not a directory.
    Missing,
    /// This part of it (relative to the prefix) is a symlink.
    Symlink(PathBuf),
}

/// What removing a file beneath the prefix did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Removal {
    /// The entry is gone now.
    Done,
    /// There was nothing to remove.
    Absent,
    /// A directory that is not empty stays.
    NonEmptyDir,
    /// This part of the way (relative to the prefix) is a symlink; nothing was removed.
    ThroughSymlink(PathBuf),
}

/// An open prefix.
pub(crate) struct PrefixDir {
    fd: OwnedFd,
    path: PathBuf,
}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

impl PrefixDir {
    /// Opens the prefix at `path` (the server made it; it is not itself checked for links).
    pub(crate) fn open(path: &Path) -> io::Result<PrefixDir> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(CWD, path, flags, Mode::empty())?;
        Ok(PrefixDir {
            fd,
            path: path.to_owned(),
        })
    }

    /// The prefix's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Opens the directory `dir` (relative; empty for the prefix itself) one part at a time,
    /// never following a symlink.
    pub(crate) fn open_dir(&self, dir: &Path) -> io::Result<Found> {
        let mut current = rustix::fs::openat(&self.fd, ".", DIR_FLAGS, Mode::empty())?;
        let mut walked = PathBuf::new();
        for component in dir.components() {
            let Component::Normal(part) = component else {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{} is not a plain relative path", dir.display()),
                ));
            };
            walked.push(part);
            match rustix::fs::openat(&current, part, DIR_FLAGS, Mode::empty()) {
                Ok(next) => current = next,
                Err(Errno::NOENT) => return Ok(Found::Missing),
                Err(Errno::LOOP | Errno::NOTDIR) => {
                    return Ok(match entry_type(&current, part)? {
                        Some(FileType::Symlink) => Found::Symlink(walked),
                        _ => Found::Missing,
                    })
                }
                Err(errno) => return Err(errno.into()),
            }
        }
        Ok(Found::Dir(current))
    }

    /// Removes the entry at `path` without following a symlink on the way or at its end: a
    /// file or a symlink is unlinked, a directory removed if it is empty.
    pub(crate) fn remove(&self, path: &Path) -> io::Result<Removal> {
        let (parent, name) = split(path)?;
        let parent = match self.open_dir(parent)? {
            Found::Dir(fd) => fd,
            Found::Missing => return Ok(Removal::Absent),
            Found::Symlink(part) => return Ok(Removal::ThroughSymlink(part)),
        };
        match rustix::fs::unlinkat(&parent, name, AtFlags::empty()) {
            Ok(()) => Ok(Removal::Done),
            Err(Errno::NOENT) => Ok(Removal::Absent),
            Err(Errno::ISDIR | Errno::PERM) if is_dir(&parent, name)? => {
                remove_empty_dir(&parent, name)
            }
            Err(errno) => Err(errno.into()),
        }
    }

    /// Removes the directory at `path` if it is empty (and is a directory, not a symlink).
    pub(crate) fn remove_dir_if_empty(&self, path: &Path) -> io::Result<Removal> {
        let (parent, name) = split(path)?;
        match self.open_dir(parent)? {
            Found::Dir(fd) if is_dir(&fd, name)? => remove_empty_dir(&fd, name),
            Found::Dir(_) | Found::Missing => Ok(Removal::Absent),
            Found::Symlink(part) => Ok(Removal::ThroughSymlink(part)),
        }
    }

    /// The names in the directory `dir`, `None` if it is not a directory reached without a
    /// symlink.
    pub(crate) fn entries(&self, dir: &Path) -> io::Result<Option<(OwnedFd, Vec<Vec<u8>>)>> {
        let Found::Dir(fd) = self.open_dir(dir)? else {
            return Ok(None);
        };
        let mut names = Vec::new();
        for entry in Dir::read_from(&fd)? {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                names.push(name.to_vec());
            }
        }
        Ok(Some((fd, names)))
    }
}

/// `path`'s parent and last part.
fn split(path: &Path) -> io::Result<(&Path, &OsStr)> {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => Ok((parent, name)),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} names no entry", path.display()),
        )),
    }
}

/// The type of the entry `name` in `dir`, not following a symlink; `None` if there is none.
pub(crate) fn entry_type(dir: &OwnedFd, name: &OsStr) -> io::Result<Option<FileType>> {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => Ok(Some(FileType::from_raw_mode(stat.st_mode))),
        Err(Errno::NOENT) => Ok(None),
        Err(errno) => Err(errno.into()),
    }
}

fn is_dir(dir: &OwnedFd, name: &OsStr) -> io::Result<bool> {
    Ok(entry_type(dir, name)? == Some(FileType::Directory))
}

fn remove_empty_dir(parent: &OwnedFd, name: &OsStr) -> io::Result<Removal> {
    match rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR) {
        Ok(()) => Ok(Removal::Done),
        Err(Errno::NOENT) => Ok(Removal::Absent),
        Err(Errno::NOTEMPTY | Errno::EXIST) => Ok(Removal::NonEmptyDir),
        Err(errno) => Err(errno.into()),
    }
}

/// `name` as a path part.
pub(crate) fn os_str(name: &[u8]) -> &OsStr {
    OsStr::from_bytes(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn removal_never_goes_through_a_planted_symlink() {
        let temp = tempfile::tempdir().unwrap();
        let (prefix, outside) = (temp.path().join("prefix"), temp.path().join("outside"));
        std::fs::create_dir_all(prefix.join("lib/deep")).unwrap();
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("x"), "keep").unwrap();
        std::fs::write(prefix.join("lib/deep/own"), "mine").unwrap();
        symlink(&outside, prefix.join("share")).unwrap();
        symlink(&outside, prefix.join("lib/deep/link")).unwrap();
        let dir = PrefixDir::open(&prefix).unwrap();

        for (path, part) in [("share/x", "share"), ("lib/deep/link/x", "lib/deep/link")] {
            assert_eq!(
                dir.remove(Path::new(path)).unwrap(),
                Removal::ThroughSymlink(PathBuf::from(part)),
            );
        }
        assert!(outside.join("x").exists());
        assert!(matches!(
            dir.open_dir(Path::new("share")).unwrap(),
            Found::Symlink(_)
        ));

        // The link itself is an entry of the prefix: removing it removes the link only.
        assert_eq!(
            dir.remove(Path::new("lib/deep/link")).unwrap(),
            Removal::Done
        );
        assert!(outside.join("x").exists());
        assert_eq!(
            dir.remove(Path::new("lib/deep/own")).unwrap(),
            Removal::Done
        );
        assert_eq!(
            dir.remove(Path::new("lib/deep/own")).unwrap(),
            Removal::Absent
        );
        assert_eq!(
            dir.remove(Path::new("lib/deep/own/below")).unwrap(),
            Removal::Absent
        );
        assert_eq!(
            dir.remove_dir_if_empty(Path::new("lib")).unwrap(),
            Removal::NonEmptyDir
        );
        assert_eq!(
            dir.remove_dir_if_empty(Path::new("lib/deep")).unwrap(),
            Removal::Done
        );
        assert_eq!(
            dir.remove_dir_if_empty(Path::new("share")).unwrap(),
            Removal::Absent,
            "a symlink is not an empty directory"
        );
        assert!(prefix.join("share").exists());
    }
}
