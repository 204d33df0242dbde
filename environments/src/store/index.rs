//! The index file: committed environments and reservations, replaced atomically.
//!
//! Readers open `index.json` without locking: it is only ever replaced by `rename`, so a
//! reader sees either the old or the new file, whole. Writing is in [`super::writer`].

use std::fs::File;
use std::io::{self, Read};
use std::sync::Arc;
use std::time::Instant;

use rustix::fs::{Mode, OFlags};
use serde::{Deserialize, Serialize};

use super::cache::Stamp;
use super::error::StoreError;
use super::layout::Layout;
use super::record::{is_environment_id, EnvironmentRecord};
use super::stored::StoredRecord;

pub(crate) use super::writer::{Durability, IndexWriter, Space, StagedIndex};

/// The index format this code writes: roots relative to the store directory.
const FORMAT: u32 = 2;

/// The format older versions wrote (absolute roots); read, and rewritten as [`FORMAT`].
const FORMAT_ABSOLUTE_ROOTS: u32 = 1;

/// The largest index read; a larger one is corrupt (a record is well under 1 KiB).
pub(crate) const MAX_INDEX_BYTES: u64 = 64 << 20;

/// The contents of `index.json`, as the store uses them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Index {
    /// Committed environments whose records are sound, ascending by id.
    pub(crate) environments: Vec<EnvironmentRecord>,
    /// Records that point outside their place in the store: kept, never used.
    pub(crate) refused: Vec<StoredRecord>,
    /// Environments being provisioned.
    pub(crate) reservations: Vec<ReservationEntry>,
}

/// `index.json` as it is spelled on disk.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct IndexFile {
    format: u32,
    environments: Vec<StoredRecord>,
    reservations: Vec<ReservationEntry>,
}

/// A reservation: an id and a name held while an environment is provisioned.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct ReservationEntry {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) backend: String,
    pub(crate) reserved_at_unix_ms: u64,
}

impl Index {
    /// The current index if answering needs no read (see [`IndexCache::current`]). Cheap
    /// enough to call on an async thread. `None` means [`Index::read`] must read the file.
    ///
    /// [`IndexCache::current`]: super::cache::IndexCache::current
    pub(crate) fn cached(layout: &Layout, received: Option<Instant>) -> Option<Arc<Index>> {
        layout.cache.current(&layout.dir, &layout.index, received)
    }

    /// The current index, read without locking unless [`Index::cached`] has it; a missing file
    /// is an empty index. Blocking.
    ///
    /// The file is opened without following a symlink and without blocking, and only a
    /// regular file of at most [`MAX_INDEX_BYTES`] is read.
    pub(crate) fn read(layout: &Layout) -> Result<Arc<Index>, StoreError> {
        if let Some(index) = Index::cached(layout, None) {
            return Ok(index);
        }
        let corrupt = |detail: String| StoreError::Corrupt {
            path: layout.index.clone(),
            detail,
            source: None,
        };
        let io_error = |error| StoreError::io(format!("reading {}", layout.index.display()), error);
        let Some((file, bytes)) =
            read_regular_file(&layout.index).map_err(|error| match error {
                ReadError::Io(error) => io_error(error),
                ReadError::Refused(detail) => corrupt(detail),
            })?
        else {
            return Ok(layout.cache.empty());
        };
        let parsed: IndexFile =
            serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt {
                path: layout.index.clone(),
                detail: e.to_string(),
                source: Some(e),
            })?;
        if parsed.format != FORMAT && parsed.format != FORMAT_ABSOLUTE_ROOTS {
            return Err(corrupt(format!(
                "unsupported index format {}",
                parsed.format
            )));
        }
        let index = Arc::new(Index::from_file(layout, parsed));
        let stamp = Stamp::of_file(&file).map_err(io_error)?;
        layout.cache.store(file, stamp, index.clone());
        Ok(index)
    }

    fn from_file(layout: &Layout, file: IndexFile) -> Index {
        let mut index = Index::default();
        for stored in file.environments {
            match stored.resolve(layout) {
                Ok(record) => index.environments.push(record),
                Err(reason) => {
                    tracing::warn!(
                        index = %layout.index.display(),
                        id = %stored.id,
                        "ignoring an index record: {reason}"
                    );
                    index.refused.push(stored);
                }
            }
        }
        index.environments.sort_by(|a, b| a.id.cmp(&b.id));
        for entry in file.reservations {
            if is_environment_id(&entry.id) {
                index.reservations.push(entry);
            } else {
                tracing::warn!(
                    index = %layout.index.display(),
                    id = %entry.id,
                    "dropping a reservation whose id is not an environment id"
                );
            }
        }
        index
    }

    pub(super) fn to_file(&self, layout: &Layout) -> IndexFile {
        let mut environments: Vec<StoredRecord> = self
            .environments
            .iter()
            .map(|record| StoredRecord::from_record(layout, record))
            .chain(self.refused.iter().cloned())
            .collect();
        environments.sort_by(|a, b| a.id.cmp(&b.id));
        IndexFile {
            format: FORMAT,
            environments,
            reservations: self.reservations.clone(),
        }
    }

    /// The committed environment with this id.
    pub(crate) fn environment(&self, id: &str) -> Option<&EnvironmentRecord> {
        self.environments.iter().find(|record| record.id == id)
    }

    /// Whether any record (sound or refused) or reservation uses this id.
    pub(crate) fn knows_id(&self, id: &str) -> bool {
        self.environment(id).is_some()
            || self.refused.iter().any(|stored| stored.id == id)
            || self.reservations.iter().any(|entry| entry.id == id)
    }

    /// The ids of every record, sound or refused: directories and locks the sweep must keep.
    pub(crate) fn record_ids(&self) -> impl Iterator<Item = &str> {
        self.environments
            .iter()
            .map(|record| record.id.as_str())
            .chain(self.refused.iter().map(|stored| stored.id.as_str()))
    }
}

/// Why [`read_regular_file`] did not read a file.
pub(crate) enum ReadError {
    /// The file system failed.
    Io(io::Error),
    /// The path is not something to read: a symlink, a FIFO, a device, a directory, too big.
    Refused(String),
}

/// Reads the whole of `path` if it is a regular file (not a symlink) of at most
/// [`MAX_INDEX_BYTES`]; `None` if it does not exist. Never blocks on a FIFO or device.
fn read_regular_file(path: &std::path::Path) -> Result<Option<(File, Vec<u8>)>, ReadError> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = match rustix::fs::open(path, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(None),
        Err(rustix::io::Errno::LOOP) => {
            return Err(ReadError::Refused(
                "it is a symlink; the index must be a regular file".into(),
            ))
        }
        Err(errno) => return Err(ReadError::Io(errno.into())),
    };
    let mut file = File::from(fd);
    let metadata = file.metadata().map_err(ReadError::Io)?;
    if !metadata.is_file() {
        return Err(ReadError::Refused("it is not a regular file".into()));
    }
    let mut bytes = Vec::new();
    (&mut file)
        .take(MAX_INDEX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > MAX_INDEX_BYTES {
        return Err(ReadError::Refused(format!(
            "it is larger than {MAX_INDEX_BYTES} bytes"
        )));
    }
    Ok(Some((file, bytes)))
}
