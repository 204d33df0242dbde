//! Using and removing environments: the use-lock protocol.
//!
//! Users of an environment hold a shared flock on `locks/<id>.use`, taken before they look
//! the environment up. A removal is cancellable until its point of no return and changes
//! nothing before it:
//!
//! 1. it takes `locks/<id>.delete` exclusively (a second removal of `id` finds it taken and
//!    answers [`StoreError::NotFound`]); while it is held, a new user in any process sees it
//!    after taking its shared use-lock, lets go and answers `NotFound`;
//! 2. it waits, without blocking a thread, until it can take the use-lock exclusively, that
//!    is until every earlier user in every process is done;
//! 3. under the index lock, it writes the index without the record beside the current one;
//! 4. the point of no return: in the same poll that returns the answer, the new index is
//!    renamed into place and the root moved to the trash;
//! 5. the trash entry is deleted in the background (see [`Removal::files_deleted`]).
//!
//! Dropping the future during 1–3 releases its locks at once and deletes the unused index
//! file, so nothing anyone can observe has changed; once 4 has run the future is already
//! complete. Only the index lock, held by a blocking task staging the index, may outlive the
//! future by the time that write takes.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use super::error::StoreError;
use super::index::{Durability, Index, IndexWriter, Space, StagedIndex};
use super::layout::{remove_path, rename_if_present, Layout};
use super::lock::{held_exclusively, LockMode, PathLock};
use super::record::{is_environment_id, EnvironmentRecord};
use super::reserve;
use super::{current_index, run_blocking, wait};

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

/// What [`Store::remove`](super::Store::remove) did: the record is out of the index and the
/// root is in the trash; its files are being deleted in the background.
#[derive(Debug)]
pub struct Removal {
    /// The record that was removed from the index.
    pub record: EnvironmentRecord,
    files: tokio::task::JoinHandle<Option<(PathBuf, io::Error)>>,
}

/// Files of a removed environment that could not be deleted. They wait for a later
/// [`sweep`](super::Store::sweep).
#[derive(Debug)]
pub struct Leftover {
    /// The environment's own directory, as its record named it.
    pub root: PathBuf,
    /// Where its files sit now: its entry in the trash, or the root itself when it could not
    /// be moved there.
    pub path: PathBuf,
    /// Why they could not be deleted.
    pub error: io::Error,
}

impl Removal {
    /// Waits until the environment's files are deleted. Returns what could not be, and why:
    /// the caller should warn, naming both [`Leftover::root`] and [`Leftover::path`]. The
    /// deletion finishes whether or not this is awaited.
    pub async fn files_deleted(self) -> Option<Leftover> {
        let root = self.record.root;
        let (path, error) = match self.files.await {
            Ok(leftover) => leftover?,
            Err(error) => (root.clone(), io::Error::other(error)),
        };
        Some(Leftover { root, path, error })
    }
}

fn not_found(id: &str) -> StoreError {
    StoreError::NotFound { id: id.into() }
}

/// Takes a shared use-lock on `id`, then checks that it is committed and that no removal of
/// it has started. Blocking.
pub(crate) fn acquire_use(layout: &Layout, id: &str) -> Result<UseGuard, StoreError> {
    // Unknown ids are answered without creating a lock file for them.
    if !is_environment_id(id) || Index::read(layout)?.environment(id).is_none() {
        return Err(not_found(id));
    }
    let path = layout.use_lock(id);
    let lock = PathLock::acquire(&path, LockMode::Shared)
        .map_err(|e| StoreError::io(format!("locking {}", path.display()), e))?;
    let marker = layout.delete_lock(id);
    if held_exclusively(&marker)
        .map_err(|e| StoreError::io(format!("probing {}", marker.display()), e))?
    {
        return Err(not_found(id));
    }
    match Index::read(layout)?.environment(id) {
        Some(record) => {
            refuse_unsafe_root(record)?;
            super::reuse::touch(&lock);
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

/// Removes `id`; see the module documentation for the steps and what cancelling does.
///
/// The locks that make the removal visible to others (the marker and the gate) live in this
/// future itself, never in a blocking task, so that dropping it releases them at once.
pub(crate) async fn remove(layout: Arc<Layout>, id: &str) -> Result<Removal, StoreError> {
    remove_when(layout, id, Users::WaitFor)
        .await?
        .ok_or_else(|| not_found(id))
}

/// Removes `id` as [`remove`] does if nobody uses or deletes it right now; `None` if someone
/// does (then nothing has changed).
pub(crate) async fn remove_unused(
    layout: Arc<Layout>,
    id: &str,
) -> Result<Option<Removal>, StoreError> {
    remove_when(layout, id, Users::SkipIfAny).await
}

/// How long [`unused_soon`] waits for an environment's use lock to come free.
///
/// A child process forked here (a command's, an installer's) holds a copy of every descriptor
/// this process had open at the fork until it execs: a few milliseconds, more on a busy
/// machine. The use locks of the requests running at that moment stay held that long after
/// those requests end.
const BRIEF_USE: std::time::Duration = std::time::Duration::from_millis(250);

/// Whether nobody in any process holds `id`'s use lock, or nobody does within [`BRIEF_USE`].
/// Takes the lock for a moment and releases it.
pub(crate) async fn unused_soon(layout: &Layout, id: &str) -> Result<bool, StoreError> {
    if !is_environment_id(id) {
        return Err(not_found(id));
    }
    let gate_path = layout.use_lock(id);
    let gate = tokio::time::timeout(BRIEF_USE, wait::acquire(&gate_path, LockMode::Exclusive));
    match gate.await {
        Ok(Ok(_released_at_once)) => Ok(true),
        Ok(Err(e)) => {
            let doing = format!("waiting for users of {id} on {}", gate_path.display());
            Err(StoreError::io(doing, e))
        }
        Err(_still_held) => Ok(false),
    }
}

/// What a removal does about the environment's users.
#[derive(PartialEq)]
enum Users {
    WaitFor,
    SkipIfAny,
}

async fn remove_when(
    layout: Arc<Layout>,
    id: &str,
    users: Users,
) -> Result<Option<Removal>, StoreError> {
    let committed = |index: Arc<Index>| index.environment(id).is_some();
    if !is_environment_id(id) || !committed(current_index(&layout, None).await?) {
        return Err(not_found(id));
    }
    let marker_path = layout.delete_lock(id);
    let marker = match PathLock::try_acquire(&marker_path, LockMode::Exclusive)
        .map_err(|e| StoreError::io(format!("locking {}", marker_path.display()), e))?
    {
        Some(marker) => marker,
        None if users == Users::SkipIfAny => return Ok(None),
        None => return Err(not_found(id)),
    };
    // Removed by a removal that ended just before this one took the marker?
    if !committed(current_index(&layout, None).await?) {
        return Err(not_found(id));
    }
    let gate_path = layout.use_lock(id);
    let waiting = |e| {
        let doing = format!("waiting for users of {id} on {}", gate_path.display());
        StoreError::io(doing, e)
    };
    let gate = match users {
        Users::WaitFor => wait::acquire(&gate_path, LockMode::Exclusive)
            .await
            .map_err(waiting)?,
        Users::SkipIfAny => match PathLock::try_acquire(&gate_path, LockMode::Exclusive) {
            Ok(Some(gate)) => gate,
            Ok(None) => return Ok(None),
            Err(e) => return Err(waiting(e)),
        },
    };
    let (staging, owned_id) = (layout.clone(), id.to_owned());
    let (record, staged) = run_blocking(move || prepare(&staging, &owned_id)).await?;
    Prepared {
        record,
        staged,
        marker,
        gate,
    }
    .commit(&layout)
    .map(Some)
}

/// Everything a removal needs to cross its point of no return without waiting.
struct Prepared {
    record: EnvironmentRecord,
    staged: StagedIndex,
    marker: PathLock,
    gate: PathLock,
}

/// Stages the index without `id`, holding the index lock. Blocking.
fn prepare(layout: &Layout, id: &str) -> Result<(EnvironmentRecord, StagedIndex), StoreError> {
    let writer = IndexWriter::lock(layout)?;
    let mut index = writer.read()?;
    let position = index
        .environments
        .iter()
        .position(|record| record.id == id)
        .ok_or_else(|| not_found(id))?;
    let record = index.environments.remove(position);
    Ok((
        record,
        writer.stage(index, Durability::Durable, Space::Frees)?,
    ))
}

impl Prepared {
    /// The point of no return, on the calling thread: publishes the index, moves the root to
    /// the trash and starts deleting it in the background.
    fn commit(self, layout: &Arc<Layout>) -> Result<Removal, StoreError> {
        let Prepared {
            record,
            staged,
            marker,
            gate,
        } = self;
        staged.publish(layout)?;
        let root = layout.root(&record.id);
        let trash = layout.new_trash_entry(&record.id);
        let moved = rename_if_present(&root, &trash);
        let in_flight = layout.deletions.enter();
        let layout = layout.clone();
        let files = tokio::task::spawn_blocking(move || {
            let leftover = match moved {
                Ok(true) => remove_path(&trash).err().map(|error| (trash, error)),
                Ok(false) => None,
                Err(error) => Some((root, error)),
            };
            for lock in [gate, marker] {
                let path = lock.path().to_path_buf();
                if let Err(error) = lock.unlink() {
                    tracing::debug!(path = %path.display(), %error, "could not delete a lock file");
                }
            }
            // Had the index change used the space reserve, the files just freed refill it.
            reserve::replenish(&layout);
            drop(in_flight);
            leftover
        });
        Ok(Removal { record, files })
    }
}
