//! The last index this process read or wrote, reused while `index.json` is unchanged.
//!
//! `index.json` is never modified in place: every change writes a new file and renames it over
//! the old one, which gives the path a new inode. The cache keeps the file it was parsed from
//! open, so that inode cannot be freed and its number cannot be reused while cached. One
//! `lstat` of the path then tells whether the cached index is still current: same device and
//! inode (plus size, mtime and ctime, against edits in place by hand) means the same contents.
//! A commit by another process renames a new file into place, so it is seen at the next lookup.

use std::fs::File;
use std::sync::{Arc, Mutex, MutexGuard};

use rustix::fs::Stat;

use super::index::Index;

/// What identifies one version of `index.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    size: i128,
    mtime: (i128, i128),
    ctime: (i128, i128),
}

impl Stamp {
    pub(crate) fn of(stat: &Stat) -> Stamp {
        Stamp {
            dev: stat.st_dev,
            ino: stat.st_ino,
            size: i128::from(stat.st_size),
            mtime: (i128::from(stat.st_mtime), i128::from(stat.st_mtime_nsec)),
            ctime: (i128::from(stat.st_ctime), i128::from(stat.st_ctime_nsec)),
        }
    }

    /// The stamp of an open file.
    pub(crate) fn of_file(file: &File) -> std::io::Result<Stamp> {
        Ok(Stamp::of(&rustix::fs::fstat(file)?))
    }
}

/// The cached index, shared by every handle on one store in this process.
#[derive(Debug)]
pub(crate) struct IndexCache {
    empty: Arc<Index>,
    last: Mutex<Option<Cached>>,
}

#[derive(Debug)]
struct Cached {
    /// Held open so that the inode behind `stamp` stays allocated.
    _file: File,
    stamp: Stamp,
    index: Arc<Index>,
}

impl Default for IndexCache {
    fn default() -> Self {
        IndexCache {
            empty: Arc::new(Index::default()),
            last: Mutex::new(None),
        }
    }
}

impl IndexCache {
    fn last(&self) -> MutexGuard<'_, Option<Cached>> {
        self.last
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The index of a store that has no `index.json`.
    pub(crate) fn empty(&self) -> Arc<Index> {
        self.empty.clone()
    }

    /// The cached index if it was read from the file `stamp` describes.
    pub(crate) fn get(&self, stamp: Stamp) -> Option<Arc<Index>> {
        let last = self.last();
        let cached = last.as_ref()?;
        (cached.stamp == stamp).then(|| cached.index.clone())
    }

    /// Remembers `index` as the contents of `file`, the current `index.json`.
    pub(crate) fn store(&self, file: File, stamp: Stamp, index: Arc<Index>) {
        *self.last() = Some(Cached {
            _file: file,
            stamp,
            index,
        });
    }
}
