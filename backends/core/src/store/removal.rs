//! Using and removing environments: the use-lock protocol.
//!
//! Users of an environment hold a shared flock on `locks/<id>.use`, taken before they look
//! the environment up. `remove` first drops the record from the index, so later lookups miss,
//! then takes that lock exclusively, which waits for every earlier user in any process, and
//! only then deletes the files.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use super::error::StoreError;
use super::index::{Durability, Index, IndexWriter};
use super::layout::{remove_path, rename_if_present, Layout};
use super::lock::{LockMode, PathLock};
use super::record::{is_environment_id, EnvironmentRecord};

/// Proof that an environment is in use: while any `UseGuard` for it lives, in any process,
/// [`Store::remove`](super::Store::remove) waits before deleting its files.
#[derive(Debug)]
pub struct UseGuard {
    record: EnvironmentRecord,
    _lock: PathLock,
}

impl UseGuard {
    /// The environment's record, as read after the lock was taken.
    pub fn record(&self) -> &EnvironmentRecord {
        &self.record
    }
}

/// What [`Store::remove`](super::Store::remove) did.
#[derive(Debug)]
pub struct Removal {
    /// The record that was removed from the index.
    pub record: EnvironmentRecord,
    /// Files that could not be deleted, and why. They wait for a later sweep; the caller
    /// should warn, naming the directory.
    pub leftover: Option<(PathBuf, io::Error)>,
}

fn not_found(id: &str) -> StoreError {
    StoreError::NotFound { id: id.into() }
}

/// Takes a shared use-lock on `id`, then checks that it is committed. Blocking.
pub(crate) fn acquire_use(layout: &Layout, id: &str) -> Result<UseGuard, StoreError> {
    // Unknown ids are answered without creating a lock file for them.
    if !is_environment_id(id) || Index::read(layout)?.environment(id).is_none() {
        return Err(not_found(id));
    }
    let path = layout.use_lock(id);
    let lock = PathLock::acquire(&path, LockMode::Shared)
        .map_err(|e| StoreError::io(format!("locking {}", path.display()), e))?;
    match Index::read(layout)?.environment(id) {
        Some(record) => {
            refuse_unsafe_root(record)?;
            Ok(UseGuard {
                record: record.clone(),
                _lock: lock,
            })
        }
        None => Err(not_found(id)),
    }
}

/// Fails with [`StoreError::UnsafeRoot`] if the root is not a plain directory: a root swapped
/// for a symlink would send the user's reads and commands wherever it points.
fn refuse_unsafe_root(record: &EnvironmentRecord) -> Result<(), StoreError> {
    let unsafe_root = |detail: String| StoreError::UnsafeRoot {
        id: record.id.clone(),
        path: record.root.clone(),
        detail,
    };
    match std::fs::symlink_metadata(&record.root) {
        Ok(metadata) if metadata.file_type().is_symlink() => {
            let target = std::fs::read_link(&record.root).unwrap_or_default();
            Err(unsafe_root(format!("is a symlink to {}", target.display())))
        }
        Ok(metadata) if !metadata.is_dir() => Err(unsafe_root("is not a directory".into())),
        _ => Ok(()),
    }
}

/// Removes `id` from the index, waits for its users, then deletes its files. Blocking.
pub(crate) fn remove(layout: Arc<Layout>, id: &str) -> Result<Removal, StoreError> {
    if !is_environment_id(id) {
        return Err(not_found(id));
    }
    let record = {
        let writer = IndexWriter::lock(&layout)?;
        let mut index = writer.read()?;
        let position = index
            .environments
            .iter()
            .position(|record| record.id == id)
            .ok_or_else(|| not_found(id))?;
        let record = index.environments.remove(position);
        writer.write(&index, Durability::Durable)?;
        record
    };
    let path = layout.use_lock(id);
    let gate = match PathLock::acquire(&path, LockMode::Exclusive) {
        Ok(gate) => gate,
        Err(error) => {
            let context = format!("waiting for users of {id} on {}", path.display());
            let leftover = layout.root(id);
            tracing::warn!(%context, %error, "files are left for a later sweep");
            return Ok(Removal {
                record,
                leftover: Some((leftover, error)),
            });
        }
    };
    let leftover = delete_root(&layout, id);
    if let Err(error) = gate.unlink() {
        tracing::debug!(path = %path.display(), %error, "could not delete a lock file");
    }
    Ok(Removal { record, leftover })
}

/// Moves the root of `id` to the trash and deletes it there. Call with its use-lock held.
fn delete_root(layout: &Layout, id: &str) -> Option<(PathBuf, io::Error)> {
    let root = layout.root(id);
    let trash = layout.new_trash_entry(id);
    match rename_if_present(&root, &trash) {
        Ok(true) => remove_path(&trash).err().map(|error| (trash, error)),
        Ok(false) => None,
        Err(error) => Some((root, error)),
    }
}
