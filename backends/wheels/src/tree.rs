//! Writing into an environment whose files are untrusted: every path is walked from the
//! environment's root one component at a time, never through a symlink, and every file is
//! created new (`O_EXCL`). What an install creates is noted in a [`Journal`], which removes it
//! all again unless the install is committed.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::Arc;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, CWD};

/// An environment's root directory, held open.
#[derive(Debug)]
pub(crate) struct Tree {
    root: OwnedFd,
}

/// What is at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Presence {
    /// Nothing (or a parent directory is missing).
    Absent,
    /// Something: a file, a directory, a link.
    Present,
    /// A parent is a symlink or not a directory.
    Blocked,
}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

impl Tree {
    /// Opens the directory `root`.
    pub fn open(root: &Path) -> io::Result<Tree> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        Ok(Tree {
            root: rustix::fs::openat(CWD, root, flags, Mode::empty())?,
        })
    }

    /// The directory holding `rel` (a `/`-separated relative path), opened without following
    /// a symlink; missing directories are made (and noted in `journal`) when it is given.
    fn parent(&self, rel: &str, mut journal: Option<&mut Vec<String>>) -> io::Result<OwnedFd> {
        let mut dir = rustix::fs::openat(&self.root, ".", DIR_FLAGS, Mode::empty())?;
        let Some((parents, _)) = rel.rsplit_once('/') else {
            return Ok(dir);
        };
        let mut walked = String::new();
        for part in parents.split('/') {
            if !walked.is_empty() {
                walked.push('/');
            }
            walked.push_str(part);
            dir = match rustix::fs::openat(&dir, part, DIR_FLAGS, Mode::empty()) {
                Ok(next) => next,
                Err(rustix::io::Errno::NOENT) if journal.is_some() => {
                    rustix::fs::mkdirat(&dir, part, Mode::from_raw_mode(0o777))?;
                    if let Some(journal) = journal.as_deref_mut() {
                        journal.push(walked.clone());
                    }
                    rustix::fs::openat(&dir, part, DIR_FLAGS, Mode::empty())?
                }
                Err(errno) => return Err(errno.into()),
            };
        }
        Ok(dir)
    }

    /// What is at `rel`.
    pub fn presence(&self, rel: &str) -> Presence {
        let dir = match self.parent(rel, None) {
            Ok(dir) => dir,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Presence::Absent,
            Err(_) => return Presence::Blocked,
        };
        let leaf = rel.rsplit('/').next().unwrap_or(rel);
        match rustix::fs::statat(&dir, leaf, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(_) => Presence::Present,
            Err(rustix::io::Errno::NOENT) => Presence::Absent,
            Err(_) => Presence::Blocked,
        }
    }

    /// Creates the new file `rel` with mode `0o666` (`0o777` when `executable`) less the
    /// umask, making missing parents.
    pub fn create_file(
        &self,
        rel: &str,
        executable: bool,
        created_dirs: &mut Vec<String>,
    ) -> io::Result<File> {
        let dir = self.parent(rel, Some(created_dirs))?;
        let leaf = rel.rsplit('/').next().unwrap_or(rel);
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mode = if executable { 0o777 } else { 0o666 };
        let fd = rustix::fs::openat(&dir, leaf, flags, Mode::from_raw_mode(mode))?;
        Ok(File::from(fd))
    }

    /// Removes the file `rel` (or the empty directory, `dir`); a missing one is no error.
    pub fn remove(&self, rel: &str, dir: bool) -> io::Result<()> {
        let parent = match self.parent(rel, None) {
            Ok(parent) => parent,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(error) => return Err(error),
        };
        let leaf = rel.rsplit('/').next().unwrap_or(rel);
        let flags = if dir {
            AtFlags::REMOVEDIR
        } else {
            AtFlags::empty()
        };
        match rustix::fs::unlinkat(&parent, leaf, flags) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
            Err(errno) => Err(errno.into()),
        }
    }
}

impl Tree {
    /// Removes the entries of the directory `rel` whose names start with `prefix`.
    pub fn remove_prefixed(&self, rel: &str, prefix: &str) -> io::Result<()> {
        let parent = match self.parent(rel, None) {
            Ok(parent) => parent,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(error) => return Err(error),
        };
        let leaf = rel.rsplit('/').next().unwrap_or(rel);
        let dir = match rustix::fs::openat(&parent, leaf, DIR_FLAGS, Mode::empty()) {
            Ok(dir) => dir,
            Err(rustix::io::Errno::NOENT) => return Ok(()),
            Err(errno) => return Err(errno.into()),
        };
        let mut names = Vec::new();
        let mut entries = rustix::fs::Dir::read_from(&dir)?;
        while let Some(entry) = entries.read() {
            let name = entry?.file_name().to_bytes().to_vec();
            if name.starts_with(prefix.as_bytes()) {
                names.push(name);
            }
        }
        for name in names {
            match rustix::fs::unlinkat(&dir, name.as_slice(), AtFlags::empty()) {
                Ok(()) | Err(rustix::io::Errno::NOENT) => {}
                Err(errno) => return Err(errno.into()),
            }
        }
        Ok(())
    }
}

/// Adds execute bits to the mode `file` was created with: `bits` `0o111` is pip's for an
/// executable file of a wheel, `0o555` distlib's for a generated script.
pub(crate) fn add_mode_bits(file: &File, bits: u32) -> io::Result<()> {
    let mode = rustix::fs::fstat(file)?.st_mode & 0o7777;
    rustix::fs::fchmod(file, Mode::from_raw_mode(mode | bits))?;
    Ok(())
}

/// What an install has created, relative to the environment's root; removed on drop unless
/// [`Journal::commit`]ted.
pub(crate) struct Journal {
    tree: Arc<Tree>,
    files: Vec<String>,
    dirs: Vec<String>,
    /// `(directory, module stem)` of each `.py` written: its `__pycache__` entries go too.
    modules: Vec<(String, String)>,
    cache_tag: String,
    committed: bool,
}

impl Journal {
    pub fn new(tree: Arc<Tree>, cache_tag: &str) -> Journal {
        Journal {
            tree,
            files: Vec::new(),
            dirs: Vec::new(),
            modules: Vec::new(),
            cache_tag: cache_tag.to_owned(),
            committed: false,
        }
    }

    /// Creates the file `rel` (see [`Tree::create_file`]) and notes it.
    pub fn create_file(&mut self, rel: &str, executable: bool) -> io::Result<File> {
        let file = self.tree.create_file(rel, executable, &mut self.dirs)?;
        self.files.push(rel.to_owned());
        if let Some(stem) = rel.strip_suffix(".py") {
            let (dir, stem) = stem.rsplit_once('/').unwrap_or(("", stem));
            self.modules.push((dir.to_owned(), stem.to_owned()));
        }
        Ok(file)
    }

    /// Notes the file `rel`, which something else created for this install.
    pub fn note_file(&mut self, rel: &str) {
        self.files.push(rel.to_owned());
    }

    /// Keeps everything.
    pub fn commit(mut self) {
        self.committed = true;
    }

    fn roll_back(&mut self) {
        let join = |dir: &str, name: &str| {
            if dir.is_empty() {
                name.to_owned()
            } else {
                format!("{dir}/{name}")
            }
        };
        let mut failed = 0;
        for file in self.files.iter().rev() {
            failed += usize::from(self.tree.remove(file, false).is_err());
        }
        for (dir, stem) in &self.modules {
            // Written by the interpreter, atomically (a temporary name first): whatever of
            // this module's the cache holds goes, and the cache itself once empty.
            let cache = join(dir, "__pycache__");
            let prefix = format!("{stem}.{}.", self.cache_tag);
            failed += usize::from(self.tree.remove_prefixed(&cache, &prefix).is_err());
            let _ = self.tree.remove(&cache, true);
        }
        for dir in self.dirs.iter().rev() {
            failed += usize::from(self.tree.remove(dir, true).is_err());
        }
        if failed > 0 {
            tracing::warn!(
                failed,
                "some files of a failed install could not be removed"
            );
        }
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        if !self.committed {
            self.roll_back();
        }
    }
}

/// Reads at most `limit` bytes of the regular file `path`, whose last component is not
/// followed if it is a symlink, without blocking on a FIFO.
pub(crate) fn read_bounded(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let file = File::from(rustix::fs::openat(CWD, path, flags, Mode::empty())?);
    let stat = rustix::fs::fstat(&file)?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is not a regular file", path.display()),
        ));
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is larger than {limit} bytes", path.display()),
        ));
    }
    Ok(bytes)
}
