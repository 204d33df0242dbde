//! Reservations: a name and an id held while an environment is provisioned, then committed
//! into a record or aborted.
//!
//! A live reservation holds an exclusive flock on `locks/<id>.owner` for its whole life. The
//! kernel drops that lock when the owning process dies, so a reservation whose owner lock
//! anyone else can take is stale: it no longer holds its name and `sweep` removes it.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::error::StoreError;
use super::index::{Durability, Index, IndexWriter, ReservationEntry, Space};
use super::layout::{remove_path, rename_if_present, Layout};
use super::lock::{LockMode, PathLock};
use super::record::{new_environment_id, now_unix_ms, CommitFacts, EnvironmentRecord};
use super::reserve;
use super::run_blocking;
use super::staged_commit::{finished, StagedCommit};
use super::sweep;

/// An environment being provisioned: its name is taken and its root exists and is empty.
///
/// Finish it with [`commit`](Reservation::commit) or [`abort`](Reservation::abort). Dropping
/// it unfinished aborts it in the background; if the process dies instead, the reservation
/// goes stale and a later [`Store::sweep`](super::Store::sweep) removes it.
#[derive(Debug)]
pub struct Reservation {
    /// The environment's id.
    pub id: String,
    /// The environment's root, `<store>/environments/<id>`, created empty.
    pub root: PathBuf,
    pending: Option<Pending>,
}

impl Reservation {
    /// The reserved name.
    pub fn name(&self) -> &str {
        self.pending
            .as_ref()
            .map_or("", |pending| pending.entry.name.as_str())
    }

    /// Turns the reservation into a committed environment, atomically. On failure the
    /// reservation is aborted (its root deleted, the index as before [`reserve`]).
    ///
    /// [`reserve`]: super::Store::reserve
    pub async fn commit(mut self, facts: CommitFacts) -> Result<EnvironmentRecord, StoreError> {
        let pending = self.take_pending()?;
        run_blocking(move || pending.commit(facts)).await
    }

    /// [`commit`](Reservation::commit) in two steps, for a caller with work of its own to
    /// overlap with the slow part of a commit: this one takes the index lock, checks the name
    /// as [`reserve`](super::Store::reserve) does ([`StoreError::NameConflict`] if a committed
    /// environment or another live reservation has it), and writes and fsyncs the new index
    /// beside the current one; nothing is visible until [`StagedCommit::publish`]. The index
    /// lock is held until then, so finish the staged commit soon. On failure the reservation
    /// is aborted. See [`Staging`] for committing under another name and sweeping first.
    pub async fn stage_commit(
        mut self,
        facts: CommitFacts,
        staging: Staging,
    ) -> Result<StagedCommit, StoreError> {
        let pending = self.take_pending()?;
        if staging.sweep_first {
            pending.layout.deletions.idle().await;
        }
        let Staging { name, sweep_first } = staging;
        run_blocking(move || pending.stage(name, facts, sweep_first)).await
    }

    /// Deletes the root and forgets the reservation; the index ends as it was before
    /// [`reserve`](super::Store::reserve). An error after the index was restored means only
    /// that some files could not be deleted yet: they wait in the trash for a later sweep.
    pub async fn abort(mut self) -> Result<(), StoreError> {
        let mut pending = self.take_pending()?;
        run_blocking(move || pending.abort()).await
    }

    fn take_pending(&mut self) -> Result<Pending, StoreError> {
        self.pending.take().ok_or_else(|| finished(&self.id))
    }
}

/// How [`Reservation::stage_commit`] stages: by default under the reserved name, with no sweep.
#[derive(Debug, Clone, Default)]
pub struct Staging {
    /// The name to commit under instead of the reserved one (a spare environment taken by a
    /// create).
    pub name: Option<String>,
    /// [`Store::sweep`](super::Store::sweep) first: its index-locked part runs under the lock
    /// the staged commit then keeps, and the rest beside the staged commit's
    /// [`publish`](StagedCommit::publish) (or after its abort). A failed sweep is only logged.
    pub sweep_first: bool,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let Some(pending) = self.pending.take() else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn_blocking(move || drop(pending));
            }
            Err(_) => drop(pending),
        }
    }
}

/// Takes a new reservation. Blocking.
pub(crate) fn reserve(
    layout: Arc<Layout>,
    name: &str,
    backend: &str,
) -> Result<Reservation, StoreError> {
    let writer = IndexWriter::lock(&layout)?;
    let mut index = writer.read()?;
    check_name_free(&layout, &index, name, "")?;
    let (id, owner) = fresh_id_with_owner_lock(&layout, |id| index.knows_id(id))?;
    let root = layout.root(&id);
    if let Err(error) = create_root(&root) {
        discard_lock(owner);
        return Err(StoreError::io(
            format!("creating environment root {}", root.display()),
            error,
        ));
    }
    let entry = ReservationEntry {
        id: id.clone(),
        name: name.into(),
        backend: backend.into(),
        reserved_at_unix_ms: now_unix_ms(),
    };
    index.reservations.push(entry.clone());
    if let Err(error) = writer.write(&index, Durability::AtomicOnly, Space::Takes) {
        if let Err(cleanup) = std::fs::remove_dir(&root) {
            tracing::warn!(root = %root.display(), %cleanup, "could not remove an unused root");
        }
        discard_lock(owner);
        return Err(error);
    }
    drop(writer);
    Ok(Reservation {
        id,
        root,
        pending: Some(Pending {
            layout,
            entry,
            owner: Some(owner),
        }),
    })
}

/// Fails with [`StoreError::NameConflict`] if a committed environment or a live reservation
/// other than `own_id`'s has exactly `name`. Call under the index lock.
fn check_name_free(
    layout: &Layout,
    index: &Index,
    name: &str,
    own_id: &str,
) -> Result<(), StoreError> {
    if index.environments.iter().any(|record| record.name == name) {
        return Err(StoreError::NameConflict { name: name.into() });
    }
    let others = index.reservations.iter();
    for entry in others.filter(|entry| entry.name == name && entry.id != own_id) {
        if take_stale_owner_lock(layout, &entry.id)?.is_none() {
            return Err(StoreError::NameConflict { name: name.into() });
        }
    }
    Ok(())
}

/// Creates an environment root, making sure its owner may fill it whatever the umask.
fn create_root(root: &Path) -> std::io::Result<()> {
    std::fs::create_dir(root)?;
    let mode = std::fs::metadata(root)?.permissions().mode();
    if mode & 0o700 != 0o700 {
        std::fs::set_permissions(root, std::fs::Permissions::from_mode(mode | 0o700))?;
    }
    Ok(())
}

/// Probes the owner lock of the reservation of `id`: `None` if a live owner holds it,
/// otherwise the reservation is stale and the lock is returned held. Call under the index lock.
pub(crate) fn take_stale_owner_lock(
    layout: &Layout,
    id: &str,
) -> Result<Option<PathLock>, StoreError> {
    let path = layout.owner_lock(id);
    PathLock::try_acquire(&path, LockMode::Exclusive)
        .map_err(|e| StoreError::io(format!("probing {}", path.display()), e))
}

/// Draws ids until one is unused and its owner lock is free, and takes that lock.
fn fresh_id_with_owner_lock(
    layout: &Layout,
    is_known: impl Fn(&str) -> bool,
) -> Result<(String, PathLock), StoreError> {
    loop {
        let id = new_environment_id();
        if is_known(&id) || std::fs::symlink_metadata(layout.root(&id)).is_ok() {
            continue;
        }
        let path = layout.owner_lock(&id);
        let lock = PathLock::try_acquire(&path, LockMode::Exclusive)
            .map_err(|e| StoreError::io(format!("locking {}", path.display()), e))?;
        if let Some(lock) = lock {
            return Ok((id, lock));
        }
    }
}

pub(crate) fn discard_lock(owner: PathLock) {
    let path = owner.path().to_path_buf();
    if let Err(error) = owner.unlink() {
        tracing::warn!(path = %path.display(), %error, "could not delete a lock file");
    }
}

/// The part of a reservation that outlives the async handle: it finishes the reservation,
/// aborting it when dropped unfinished.
#[derive(Debug)]
pub(super) struct Pending {
    pub(super) layout: Arc<Layout>,
    entry: ReservationEntry,
    pub(super) owner: Option<PathLock>,
}

impl Pending {
    /// Commits; on error `self` is dropped after the index lock was released, which aborts.
    fn commit(mut self, facts: CommitFacts) -> Result<EnvironmentRecord, StoreError> {
        let record = self.write_record(facts)?;
        if let Some(owner) = self.owner.take() {
            discard_lock(owner);
        }
        Ok(record)
    }

    /// [`Reservation::stage_commit`]'s first step, after the index-locked part of a sweep
    /// if `sweep`; on error `self` is dropped after the index lock was released, which aborts.
    fn stage(
        self,
        name: Option<String>,
        facts: CommitFacts,
        sweep: bool,
    ) -> Result<StagedCommit, StoreError> {
        let writer = IndexWriter::lock(&self.layout)?;
        let half_swept = match sweep {
            true => match sweep::sweep_locked(&self.layout, &writer) {
                Ok(half) => Some(half),
                Err(error) => {
                    sweep::log_failure(&error);
                    None
                }
            },
            false => None,
        };
        let (index, record) = self.committed_index(&writer, name, facts)?;
        let staged = writer.stage(index, Durability::Durable, Space::Takes)?;
        Ok(StagedCommit {
            record,
            staged: Some((staged, self)),
            half_swept,
        })
    }

    fn write_record(&self, facts: CommitFacts) -> Result<EnvironmentRecord, StoreError> {
        let writer = IndexWriter::lock(&self.layout)?;
        let (index, record) = self.committed_index(&writer, None, facts)?;
        writer.write(&index, Durability::Durable, Space::Takes)?;
        // The reserve must keep up with the index it may have to hold.
        reserve::ensure(&self.layout);
        Ok(record)
    }

    /// The index with this reservation committed under `name` (else its own name), read
    /// and checked under `writer`'s lock, and the new record.
    fn committed_index(
        &self,
        writer: &IndexWriter<'_>,
        name: Option<String>,
        facts: CommitFacts,
    ) -> Result<(Index, EnvironmentRecord), StoreError> {
        let layout = &self.layout;
        let id = &self.entry.id;
        let mut index = writer.read()?;
        let position = index
            .reservations
            .iter()
            .position(|entry| entry.id == *id)
            .ok_or_else(|| StoreError::Corrupt {
                path: layout.index.clone(),
                detail: format!("the live reservation {id} is missing"),
                source: None,
            })?;
        if let Some(name) = &name {
            check_name_free(layout, &index, name, id)?;
        }
        let root = layout.root(id);
        if !root.is_dir() {
            return Err(StoreError::io(
                format!("committing {id}: the root {} is gone", root.display()),
                std::io::ErrorKind::NotFound.into(),
            ));
        }
        index.reservations.remove(position);
        let record = EnvironmentRecord {
            id: id.clone(),
            name: name.unwrap_or_else(|| self.entry.name.clone()),
            python_version: facts.python_version,
            python_full_version: facts.python_full_version,
            backend: self.entry.backend.clone(),
            root,
            interpreter_path: facts.interpreter_path,
            extra: facts.extra,
            created_at_unix_ms: now_unix_ms(),
            reuse_key: facts.reuse_key,
        };
        index.environments.push(record.clone());
        Ok((index, record))
    }

    /// Aborts: moves the root to the trash, forgets the reservation, then deletes the root.
    pub(super) fn abort(&mut self) -> Result<(), StoreError> {
        let Some(owner) = self.owner.take() else {
            return Ok(());
        };
        let layout = &self.layout;
        let id = &self.entry.id;
        let root = layout.root(id);
        let trash = layout.new_trash_entry(id);
        let writer = IndexWriter::lock(layout)?;
        let mut index = writer.read()?;
        let moved = rename_if_present(&root, &trash).map_err(|e| {
            StoreError::io(
                format!("moving {} to {}", root.display(), trash.display()),
                e,
            )
        })?;
        let before = index.reservations.len();
        index.reservations.retain(|entry| entry.id != *id);
        if index.reservations.len() != before {
            writer.write(&index, Durability::AtomicOnly, Space::Frees)?;
        }
        discard_lock(owner);
        drop(writer);
        if !moved {
            reserve::replenish(layout);
            return Ok(());
        }
        let gate_path = layout.use_lock(id);
        let gate = PathLock::acquire(&gate_path, LockMode::Exclusive)
            .map_err(|e| StoreError::io(format!("locking {}", gate_path.display()), e))?;
        let removed = remove_path(&trash)
            .map_err(|e| StoreError::io(format!("deleting {}", trash.display()), e));
        discard_lock(gate);
        reserve::replenish(layout);
        removed
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Err(error) = self.abort() {
            tracing::warn!(id = %self.entry.id, %error, "aborting a dropped reservation failed");
        }
    }
}
