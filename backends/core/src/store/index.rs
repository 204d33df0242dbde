//! The index file: committed environments and reservations, replaced atomically.
//!
//! Readers open `index.json` without locking: it is only ever replaced by `rename`, so a
//! reader sees either the old or the new file, whole. Writers hold an exclusive flock on
//! `index.lock` across read-modify-write, write a temporary file in the same directory,
//! fsync it, rename it over `index.json` and fsync the directory.

use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;

use serde::{Deserialize, Serialize};

use super::error::StoreError;
use super::layout::{sync_dir, Layout};
use super::lock::{LockMode, PathLock};
use super::record::EnvironmentRecord;

/// The index format this code writes and understands.
const FORMAT: u32 = 1;

/// The contents of `index.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Index {
    /// Always [`FORMAT`].
    pub(crate) format: u32,
    /// Committed environments, ascending by id.
    pub(crate) environments: Vec<EnvironmentRecord>,
    /// Environments being provisioned.
    pub(crate) reservations: Vec<ReservationEntry>,
}

/// A reservation: an id and a name held while an environment is provisioned.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct ReservationEntry {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) backend: String,
    pub(crate) reserved_at_unix_ms: u64,
}

impl Default for Index {
    fn default() -> Self {
        Index {
            format: FORMAT,
            environments: Vec::new(),
            reservations: Vec::new(),
        }
    }
}

impl Index {
    /// Reads the current index without locking; a missing file is an empty index. Blocking.
    pub(crate) fn read(layout: &Layout) -> Result<Index, StoreError> {
        let bytes = match std::fs::read(&layout.index) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Index::default()),
            Err(error) => {
                return Err(StoreError::io(
                    format!("reading {}", layout.index.display()),
                    error,
                ))
            }
        };
        let index: Index = serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt {
            path: layout.index.clone(),
            detail: e.to_string(),
        })?;
        if index.format != FORMAT {
            return Err(StoreError::Corrupt {
                path: layout.index.clone(),
                detail: format!("unsupported index format {}", index.format),
            });
        }
        Ok(index)
    }

    /// The committed environment with this id.
    pub(crate) fn environment(&self, id: &str) -> Option<&EnvironmentRecord> {
        self.environments.iter().find(|record| record.id == id)
    }

    /// Whether any committed environment or reservation uses this id.
    pub(crate) fn knows_id(&self, id: &str) -> bool {
        self.environment(id).is_some() || self.reservations.iter().any(|entry| entry.id == id)
    }
}

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

    /// Reads the index; under this lock nobody else can change it.
    pub(crate) fn read(&self) -> Result<Index, StoreError> {
        Index::read(self.layout)
    }

    /// Replaces the index atomically (a reader or a crash sees the old or the new index,
    /// never a mix), and with [`Durability::Durable`] also durably (fsynced file and directory).
    pub(crate) fn write(&self, index: &Index, durability: Durability) -> Result<(), StoreError> {
        let durable = durability == Durability::Durable;
        let mut index = index.clone();
        index.environments.sort_by(|a, b| a.id.cmp(&b.id));
        let temp = &self.layout.index_temp;
        let mut bytes = serde_json::to_vec_pretty(&index).map_err(|e| {
            StoreError::io(
                format!("encoding {}", temp.display()),
                io::Error::new(io::ErrorKind::InvalidData, e),
            )
        })?;
        bytes.push(b'\n');
        let write_temp = || -> io::Result<()> {
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
            if durable {
                file.sync_all()?;
            }
            Ok(())
        };
        write_temp().map_err(|e| StoreError::io(format!("writing {}", temp.display()), e))?;
        std::fs::rename(temp, &self.layout.index).map_err(|e| {
            StoreError::io(
                format!(
                    "replacing {} with {}",
                    self.layout.index.display(),
                    temp.display()
                ),
                e,
            )
        })?;
        if !durable {
            return Ok(());
        }
        sync_dir(&self.layout.dir)
            .map_err(|e| StoreError::io(format!("syncing {}", self.layout.dir.display()), e))
    }
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
