//! Sweeping: removing what crashed or failed operations left behind.
//!
//! Under the index lock, stale reservations are dropped and their roots, together with
//! directories under `environments/` that belong to nothing, are moved to the trash. Then,
//! without the index lock, the trash is emptied and unused lock files are deleted. Anything
//! whose use-lock someone holds (a `remove` or `abort` still deleting it, a user of an
//! environment that is being removed) is skipped and left for a later sweep.

use std::collections::HashSet;
use std::io;
use std::path::PathBuf;

use super::error::StoreError;
use super::index::{Durability, IndexWriter, Space};
use super::layout::{remove_path, rename_if_present, trash_entry_id, Layout};
use super::lock::{LockMode, PathLock};
use super::record::is_environment_id;
use super::reservation::{discard_lock, take_stale_owner_lock};
use super::reserve;
use super::reuse::is_reuse_key;

/// What [`Store::sweep`](super::Store::sweep) did.
#[derive(Debug, Default)]
pub struct SweepReport {
    /// Ids of stale reservations (their process died) that were dropped from the index.
    pub stale_reservations: Vec<String>,
    /// Paths that were deleted: trash entries and stray files.
    pub removed: Vec<PathBuf>,
    /// Paths left alone because someone is still using or deleting them.
    pub busy: Vec<PathBuf>,
    /// Paths that could not be handled, and why; a later sweep tries again.
    pub failed: Vec<(PathBuf, io::Error)>,
}

/// A trash entry together with the use-lock that makes deleting it safe, if it has one.
type GatedEntry = (PathBuf, Option<PathLock>);

/// A sweep whose index-locked part is done: the rest needs no lock (see [`finish`]).
#[derive(Debug)]
pub(crate) struct HalfSwept {
    report: SweepReport,
    /// The entries moved to the trash, with their gates held.
    gated: Vec<GatedEntry>,
    /// The ids of committed environments.
    committed: HashSet<String>,
}

/// Sweeps the store. Blocking.
pub(crate) fn sweep(layout: &Layout) -> Result<SweepReport, StoreError> {
    let writer = IndexWriter::lock(layout)?;
    let half = sweep_locked(layout, &writer)?;
    drop(writer);
    finish(layout, half)
}

/// The index-locked part of a sweep, under `writer`: drops stale reservations and moves their
/// roots and unowned environment directories to the trash. Blocking.
pub(crate) fn sweep_locked(
    layout: &Layout,
    writer: &IndexWriter<'_>,
) -> Result<HalfSwept, StoreError> {
    let mut report = SweepReport::default();
    let (gated, committed) = move_leftovers_to_trash(layout, writer, &mut report)?;
    Ok(HalfSwept {
        report,
        gated,
        committed,
    })
}

/// The rest of a sweep, without the index lock: deletes what was moved to the trash and
/// whatever else is there, and unused lock files. Blocking.
pub(crate) fn finish(layout: &Layout, half: HalfSwept) -> Result<SweepReport, StoreError> {
    let HalfSwept {
        mut report,
        gated,
        committed,
    } = half;
    let mut attempted = HashSet::new();
    for (entry, gate) in gated {
        attempted.insert(entry.clone());
        delete_entry(entry, gate, &mut report);
    }
    empty_trash(layout, &attempted, &mut report)?;
    delete_unused_lock_files(layout, &committed, &mut report)?;
    reserve::replenish(layout);
    Ok(report)
}

/// Logs a sweep that failed: the next one tries again, so nothing else is done about it.
pub(crate) fn log_failure(error: &StoreError) {
    tracing::warn!(%error, "sweeping the state directory failed");
}

/// Drops stale reservations and moves their roots and unowned environment directories to
/// the trash, under `writer`. Returns the moved entries with their gates held, and the ids
/// of committed environments.
fn move_leftovers_to_trash(
    layout: &Layout,
    writer: &IndexWriter<'_>,
    report: &mut SweepReport,
) -> Result<(Vec<GatedEntry>, HashSet<String>), StoreError> {
    let mut index = writer.read()?;
    let mut gated = Vec::new();
    let mut live = HashSet::new();
    let mut stale = Vec::new();
    for entry in &index.reservations {
        match take_stale_owner_lock(layout, &entry.id)? {
            None => {
                live.insert(entry.id.clone());
            }
            Some(owner) => stale.push((entry.id.clone(), owner)),
        }
    }
    for (id, _) in &stale {
        let root = layout.root(id);
        let trash = layout.new_trash_entry(id);
        match rename_if_present(&root, &trash) {
            Ok(true) => gated.push((trash, None)),
            Ok(false) => {}
            // The root stays; once the reservation is gone it is swept as unowned.
            Err(error) => report.failed.push((root, error)),
        }
    }
    if !stale.is_empty() {
        index.reservations.retain(|entry| live.contains(&entry.id));
        writer.write(&index, Durability::AtomicOnly, Space::Frees)?;
        for (id, owner) in stale {
            discard_lock(owner);
            report.stale_reservations.push(id);
        }
    }
    let committed: HashSet<String> = index.record_ids().map(str::to_owned).collect();
    for entry in read_dir(&layout.environments)? {
        let name = entry.file_name().to_string_lossy().into_owned();
        if committed.contains(&name) || live.contains(&name) {
            continue;
        }
        let path = entry.path();
        let gate = if is_environment_id(&name) {
            match try_gate(layout, &name) {
                Ok(Some(gate)) => Some(gate),
                Ok(None) => {
                    report.busy.push(path);
                    continue;
                }
                Err(error) => {
                    report.failed.push((layout.use_lock(&name), error));
                    continue;
                }
            }
        } else {
            None
        };
        let trash = layout.new_trash_entry(&name);
        match rename_if_present(&path, &trash) {
            Ok(true) => gated.push((trash, gate)),
            Ok(false) => {}
            Err(error) => report.failed.push((path, error)),
        }
    }
    if let Err(error) = remove_path(&layout.index_temp) {
        report.failed.push((layout.index_temp.clone(), error));
    }
    Ok((gated, committed))
}

/// Deletes every trash entry nobody is deleting already.
fn empty_trash(
    layout: &Layout,
    attempted: &HashSet<PathBuf>,
    report: &mut SweepReport,
) -> Result<(), StoreError> {
    for entry in read_dir(&layout.trash)? {
        if attempted.contains(&entry.path()) {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let id = trash_entry_id(&name);
        let gate = if is_environment_id(id) {
            match try_gate(layout, id) {
                Ok(Some(gate)) => Some(gate),
                Ok(None) => {
                    report.busy.push(entry.path());
                    continue;
                }
                Err(error) => {
                    report.failed.push((layout.use_lock(id), error));
                    continue;
                }
            }
        } else {
            None
        };
        delete_entry(entry.path(), gate, report);
    }
    Ok(())
}

/// Deletes lock files nobody holds, except the use-locks and sandboxed markers of committed
/// environments.
fn delete_unused_lock_files(
    layout: &Layout,
    committed: &HashSet<String>,
    report: &mut SweepReport,
) -> Result<(), StoreError> {
    for entry in read_dir(&layout.locks)? {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some((id, kind)) = name.rsplit_once('.') else {
            continue;
        };
        let wanted = match kind {
            "use" | super::sandboxed::KIND | super::changed::KIND => !committed.contains(id),
            "owner" | "delete" => true,
            super::reuse::KIND => is_reuse_key(id),
            _ => false,
        };
        if !wanted || !(is_environment_id(id) || is_reuse_key(id)) {
            continue;
        }
        // A held lock is in use: a live reservation, a user, or a deletion in progress.
        match PathLock::try_acquire(&entry.path(), LockMode::Exclusive) {
            Ok(Some(lock)) => match lock.unlink() {
                Ok(()) => report.removed.push(entry.path()),
                Err(error) => report.failed.push((entry.path(), error)),
            },
            Ok(None) => {}
            Err(error) => report.failed.push((entry.path(), error)),
        }
    }
    Ok(())
}

fn try_gate(layout: &Layout, id: &str) -> io::Result<Option<PathLock>> {
    PathLock::try_acquire(&layout.use_lock(id), LockMode::Exclusive)
}

fn delete_entry(path: PathBuf, gate: Option<PathLock>, report: &mut SweepReport) {
    match remove_path(&path) {
        Ok(()) => report.removed.push(path),
        Err(error) => report.failed.push((path, error)),
    }
    if let Some(gate) = gate {
        if let Err(error) = gate.unlink() {
            tracing::debug!(%error, "could not delete a lock file");
        }
    }
}

fn read_dir(dir: &std::path::Path) -> Result<Vec<std::fs::DirEntry>, StoreError> {
    let context = || format!("listing {}", dir.display());
    std::fs::read_dir(dir)
        .map_err(|e| StoreError::io(context(), e))?
        .map(|entry| entry.map_err(|e| StoreError::io(context(), e)))
        .collect()
}
