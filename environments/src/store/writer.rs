//! Writing the index: whole, atomically, under the index lock.
//!
//! Writers hold an exclusive flock on `index.lock` across read-modify-write, write a temporary
//! file in the same directory, fsync it, rename it over `index.json` and fsync the directory.
//! A change that frees space writes into the space reserve when the file system is full (see
//! [`super::reserve`]).

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::Arc;

use super::cache::Stamp;
use super::error::StoreError;
use super::index::Index;
use super::layout::{sync_dir, Layout};
use super::lock::{LockMode, PathLock};
use super::reserve;

/// The exclusive right to rewrite the index, held until dropped.
pub(crate) struct IndexWriter<'a> {
    layout: &'a Layout,
    _lock: PathLock,
}

impl<'a> IndexWriter<'a> {
    /// Waits for the index lock. Blocking.
    pub(crate) fn lock(layout: &'a Layout) -> Result<IndexWriter<'a>, StoreError> {
        let lock = PathLock::acquire(&layout.index_lock, LockMode::Exclusive)
            .map_err(|e| StoreError::io(format!("locking {}", layout.index_lock.display()), e))?;
        Ok(IndexWriter {
            layout,
            _lock: lock,
        })
    }

    /// Reads the index for changing it; under this lock nobody else can change it.
    pub(crate) fn read(&self) -> Result<Index, StoreError> {
        Ok(Index::clone(&*Index::read(self.layout)?))
    }

    /// Replaces the index atomically (a reader or a crash sees the old or the new index,
    /// never a mix), and with [`Durability::Durable`] also durably (fsynced file and directory).
    pub(crate) fn write(
        &self,
        index: &Index,
        durability: Durability,
        space: Space,
    ) -> Result<(), StoreError> {
        let written = write_temp(self.layout, index, durability, space)?;
        rename_into_place(self.layout, written, index.clone())?;
        if durability == Durability::Durable {
            sync_store_dir(self.layout)?;
        }
        Ok(())
    }

    /// Writes (and with [`Durability::Durable`] fsyncs) the new index beside the current one,
    /// keeping the lock: nothing is visible to anyone until [`StagedIndex::publish`]. Dropped
    /// unpublished, it deletes the temporary file (or gives it back to the space reserve) and
    /// releases the lock.
    pub(crate) fn stage(
        self,
        index: Index,
        durability: Durability,
        space: Space,
    ) -> Result<StagedIndex, StoreError> {
        let written = write_temp(self.layout, &index, durability, space)?;
        Ok(StagedIndex {
            temp: self.layout.index_temp.clone(),
            reserve: self.layout.reserve.clone(),
            staged: Some((written, index, durability)),
            _lock: self._lock,
        })
    }
}

/// A new index written beside the current one, under the index lock; see
/// [`IndexWriter::stage`].
#[derive(Debug)]
pub(crate) struct StagedIndex {
    temp: PathBuf,
    reserve: PathBuf,
    staged: Option<(Written, Index, Durability)>,
    _lock: PathLock,
}

impl StagedIndex {
    /// Renames the staged index over the current one: from here on everyone sees it. Only a
    /// failed rename is an error (nothing changed); a failed fsync of the directory after it
    /// is logged, since the change is already visible.
    pub(crate) fn publish(mut self, layout: &Layout) -> Result<(), StoreError> {
        let Some((written, index, durability)) = self.staged.take() else {
            return Ok(());
        };
        rename_into_place(layout, written, index)?;
        if durability == Durability::Durable {
            if let Err(error) = sync_store_dir(layout) {
                tracing::warn!(%error, "the index change may not survive a power loss");
            }
        }
        Ok(())
    }
}

impl Drop for StagedIndex {
    fn drop(&mut self) {
        let Some((written, _, _)) = self.staged.take() else {
            return;
        };
        if written.in_reserve.is_some() {
            reserve::put_back(&self.temp, &self.reserve);
        } else if let Err(error) = std::fs::remove_file(&self.temp) {
            tracing::debug!(path = %self.temp.display(), %error, "could not delete an unused index");
        }
    }
}

/// A temporary index file, written and open.
#[derive(Debug)]
struct Written {
    file: File,
    /// Set when the index was written into the space reserve: the length of the index, which
    /// spaces follow up to the reserve's end.
    in_reserve: Option<u64>,
}

/// Writes `index` to the temporary index file.
fn write_temp(
    layout: &Layout,
    index: &Index,
    durability: Durability,
    space: Space,
) -> Result<Written, StoreError> {
    let temp = &layout.index_temp;
    let mut bytes = serde_json::to_vec_pretty(&index.to_file(layout)).map_err(|e| {
        StoreError::io(
            format!("encoding {}", temp.display()),
            io::Error::new(io::ErrorKind::InvalidData, e),
        )
    })?;
    bytes.push(b'\n');
    let write = || -> io::Result<File> {
        // A temporary file left by a crash may be read-only (restrictive umask): replace it.
        match std::fs::remove_file(temp) {
            Err(error) if error.kind() != io::ErrorKind::NotFound => return Err(error),
            _ => {}
        }
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(temp)?;
        file.write_all(&bytes)?;
        if durability == Durability::Durable {
            file.sync_all()?;
        }
        Ok(file)
    };
    let error = match write() {
        Ok(file) => {
            return Ok(Written {
                file,
                in_reserve: None,
            })
        }
        Err(error) => error,
    };
    let _ = std::fs::remove_file(temp);
    if space == Space::Frees && reserve::is_out_of_space(&error) {
        let durable = durability == Durability::Durable;
        if let Some(file) = reserve::write_into(layout, &bytes, durable)? {
            tracing::info!("the file system is full: the index change uses the space reserve");
            return Ok(Written {
                file,
                in_reserve: Some(bytes.len() as u64),
            });
        }
    }
    Err(StoreError::io(format!("writing {}", temp.display()), error))
}

/// Renames the temporary index over `index.json` and remembers it in the cache.
fn rename_into_place(
    layout: &Layout,
    written: Written,
    mut index: Index,
) -> Result<(), StoreError> {
    let temp = &layout.index_temp;
    std::fs::rename(temp, &layout.index).map_err(|e| {
        StoreError::io(
            format!(
                "replacing {} with {}",
                layout.index.display(),
                temp.display()
            ),
            e,
        )
    })?;
    let Written { file, in_reserve } = written;
    if let Some(len) = in_reserve {
        reserve::trim(&file, len);
    }
    index.environments.sort_by(|a, b| a.id.cmp(&b.id));
    // The rename may change the ctime: stamp the file as it is now named.
    match Stamp::of_file(&file) {
        Ok(stamp) => layout.cache.store(file, stamp, Arc::new(index)),
        Err(error) => tracing::debug!(%error, "not caching the index just written"),
    }
    Ok(())
}

/// Makes the rename of the index durable.
fn sync_store_dir(layout: &Layout) -> Result<(), StoreError> {
    sync_dir(&layout.dir)
        .map_err(|e| StoreError::io(format!("syncing {}", layout.dir.display()), e))
}

/// Whether an index write must survive a power loss, or only a process crash.
///
/// Committing or removing an environment is durable. Reservations need not be: a reservation
/// lost to a power cut leaves an unowned directory, and one that reappears has no live owner;
/// sweeping removes both. Skipping their fsyncs halves a create's I/O waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Durability {
    /// fsync the file and the directory.
    Durable,
    /// Rename atomically, without waiting for the disk.
    AtomicOnly,
}

/// What an index change does to the space the store takes, which decides whether it may use
/// the space reserve on a full file system.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Space {
    /// A reservation or a commit: on a full file system it fails, keeping the reserve.
    Takes,
    /// A removal, an abort or a sweep: it may use the reserve, and frees space.
    Frees,
}
