//! The state store: the environment index, reservations, use-locks and sweeping.
//!
//! One store directory may be shared by several server processes. Everything that must hold
//! across them is built on `flock` and atomic renames:
//!
//! - the index (`index.json`) is only ever replaced whole by `rename` under an exclusive lock
//!   on `index.lock`, so a process killed at any instant leaves either the old or the new
//!   index, never a mix;
//! - a record is committed only after its environment's files are complete, and removed from
//!   the index before any of its files are touched;
//! - the store's own contents are not trusted: roots are stored relative to the store and
//!   resolved beneath it, records that point elsewhere are refused, symlinked subdirectories
//!   are refused at open, and nothing is ever deleted or locked through a symlink;
//! - a reservation lives as long as its owner's flock, so a dead process's reservation goes
//!   stale by itself and stops holding its name;
//! - users of an environment share its use-lock; `remove` takes it exclusively before
//!   changing anything, which waits for every user in every process, and can be cancelled
//!   until then with no effect;
//! - files are deleted by first moving them into `trash/`, so a crash mid-delete leaves
//!   nothing half-deleted in `environments/`, and [`Store::sweep`] finishes the job later;
//! - `index.reserve` keeps space allocated for one index write, so that a removal can take
//!   its record out of the index, and free its files, on a full file system.
//!
//! File-system work that can wait runs on tokio's blocking pool. Three things run on the
//! calling thread instead, as none of them waits on anyone: the check that validates the
//! cached index (one `lstat`, or one read of the store's inotify watch), the non-blocking lock attempts of a removal waiting for its users, and a
//! removal's point of no return (two renames and a directory fsync), which must happen in the
//! same poll as its answer.

mod cache;
mod changed;
mod error;
mod in_flight;
mod index;
mod index_watch;
mod layout;
pub(crate) mod lock;
mod record;
mod removal;
mod reservation;
mod reserve;
mod reuse;
mod sandboxed;
mod staged_commit;
mod stored;
mod sweep;
mod wait;
mod writer;

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

pub use changed::ChangeStamp;
pub use error::StoreError;
pub(crate) use lock::{LockMode, PathLock};
pub use record::{
    is_environment_id, new_environment_id, CommitFacts, EnvironmentRecord, ID_PREFIX,
};
pub use removal::{Leftover, Removal, UseGuard};
pub use reservation::{Reservation, Staging};
pub use reuse::{is_reuse_key, ReuseTurn};
pub use staged_commit::StagedCommit;
pub(crate) use sweep::log_failure as log_sweep_failure;
pub use sweep::SweepReport;
pub(crate) use wait::acquire as acquire_lock;

use index::Index;
use layout::Layout;

/// A handle on a store directory. Cheap to clone. Clones share only a cache of the last index
/// read (checked against `index.json` at each use, see [`list`](Store::list)); everything else they
/// coordinate through the store's files, exactly like handles in different processes.
#[derive(Debug, Clone)]
pub struct Store {
    layout: Arc<Layout>,
}

impl Store {
    /// Opens the store at `dir`, creating it (and missing parents) with mode 0700, and its
    /// `environments/`, `locks/` and `trash/` subdirectories. Fails with
    /// [`StoreError::SymlinkedDirectory`] if one of those is a symlink.
    pub fn open(dir: &Path) -> Result<Store, StoreError> {
        let layout = Layout::create(dir)?;
        lock::open_lock_file(&layout.index_lock)
            .map_err(|e| StoreError::io(format!("creating {}", layout.index_lock.display()), e))?;
        reserve::replenish(&layout);
        Ok(Store {
            layout: Arc::new(layout),
        })
    }

    /// The store directory (absolute, symlinks resolved).
    pub fn dir(&self) -> &Path {
        &self.layout.dir
    }

    /// Where sandboxed runs get their private `TMPDIR`s: `tmp/`, inside the store directory
    /// that every sandbox hides.
    pub fn private_tmp_dir(&self) -> &Path {
        &self.layout.tmp
    }

    /// Every committed environment, ascending by id.
    ///
    /// While `index.json` is unchanged since this process last read or wrote it, this is one
    /// `lstat` on the calling thread and no read, lock or parse. A store looked up more than a
    /// few times watches its directory with inotify instead, and then this is one read of the
    /// watch that finds no event, which costs a quarter of the `lstat`.
    pub async fn list(&self) -> Result<Vec<EnvironmentRecord>, StoreError> {
        Ok(self.listing(None).await?.to_vec())
    }

    /// What [`list`](Store::list) returns, shared with the cache instead of copied.
    ///
    /// `received` is when the request asking was read ([`Request::received`]), if known:
    /// requests read together then share one look at the watch (see `IndexCache::current` in
    /// module `cache`). `None` looks now.
    ///
    /// [`Request::received`]: wsp_protocol::Request::received
    pub async fn listing(&self, received: Option<Instant>) -> Result<Listing, StoreError> {
        Ok(Listing(current_index(&self.layout, received).await?))
    }

    /// The committed environment with this id, if any (malformed ids have none). Cached as
    /// [`list`](Store::list) is.
    pub async fn get(&self, id: &str) -> Result<Option<EnvironmentRecord>, StoreError> {
        if !is_environment_id(id) {
            return Ok(None);
        }
        let index = self.index().await?;
        Ok(index.environment(id).cloned())
    }

    async fn index(&self) -> Result<Arc<Index>, StoreError> {
        current_index(&self.layout, None).await
    }

    /// Reserves `name` for a new environment of `backend`: picks a fresh id and creates its
    /// empty root. Fails with [`StoreError::NameConflict`] if a committed environment or a live
    /// reservation has exactly this name.
    pub async fn reserve(&self, name: &str, backend: &str) -> Result<Reservation, StoreError> {
        let layout = self.layout.clone();
        let name = name.to_owned();
        let backend = backend.to_owned();
        run_blocking(move || reservation::reserve(layout, &name, &backend)).await
    }

    /// Marks environment `id` as in use until the guard is dropped; see [`UseGuard`].
    /// Fails with [`StoreError::NotFound`] if `id` is not committed, including when a
    /// [`remove`](Store::remove) of it has already taken it out of the index.
    ///
    /// A process must not [`remove`](Store::remove) an environment while it holds a guard
    /// on it itself: the removal would wait for that guard.
    pub async fn acquire_use(&self, id: &str) -> Result<UseGuard, StoreError> {
        let layout = self.layout.clone();
        let id = id.to_owned();
        run_blocking(move || removal::acquire_use(&layout, &id)).await
    }

    /// Removes environment `id`: waits until no [`UseGuard`] on it is left in any process,
    /// takes it out of the index (later lookups get [`StoreError::NotFound`]) and moves its
    /// root to the trash, then deletes its files in the background (see
    /// [`Removal::files_deleted`]; files that cannot be deleted are removed by a later
    /// [`sweep`](Store::sweep)).
    ///
    /// From the start, new [`acquire_use`](Store::acquire_use)s of `id` in any process fail
    /// with [`StoreError::NotFound`], and so does a second `remove` of it; [`list`] and
    /// [`get`] show it until it is taken out of the index. Cancel-safe: dropped
    /// before it completes, the future has changed nothing (the environment is as it was and
    /// usable again); it completes in the very poll that takes the record out of the index.
    ///
    /// [`list`]: Store::list
    /// [`get`]: Store::get
    pub async fn remove(&self, id: &str) -> Result<Removal, StoreError> {
        removal::remove(self.layout.clone(), id).await
    }

    /// Whether nobody in any process uses environment `id`, or nobody does after a brief wait
    /// (for children forked while a request used it, which hold its use lock until they exec).
    pub async fn unused_soon(&self, id: &str) -> Result<bool, StoreError> {
        removal::unused_soon(&self.layout, id).await
    }

    /// Removes environment `id` as [`remove`](Store::remove) does, if nobody in any process
    /// uses or deletes it right now: `None` (and nothing changed) if someone does.
    pub async fn remove_unused(&self, id: &str) -> Result<Option<Removal>, StoreError> {
        removal::remove_unused(self.layout.clone(), id).await
    }

    /// Records that environment `id` runs sandboxed code (before its first sandboxed command
    /// starts): its installs and uninstalls are confined from then on, in every process.
    pub async fn mark_sandboxed(&self, id: &str) -> Result<(), StoreError> {
        let layout = self.layout.clone();
        let id = id.to_owned();
        run_blocking(move || {
            sandboxed::mark(&layout, &id)
                .map_err(|e| StoreError::io(format!("marking {id} as sandboxed"), e))
        })
        .await
    }

    /// Whether environment `id` has run sandboxed code (see
    /// [`mark_sandboxed`](Store::mark_sandboxed)); one `lstat`.
    pub fn was_sandboxed(&self, id: &str) -> bool {
        sandboxed::was_marked(&self.layout, id)
    }

    /// Removes leftovers: stale reservations and their roots, the trash, directories under
    /// `environments/` that belong to no environment and no live reservation, and unused lock
    /// files. Never touches a live reservation or anything someone is using or deleting.
    ///
    /// First waits for the deletions this process still runs in the background.
    pub async fn sweep(&self) -> Result<SweepReport, StoreError> {
        self.layout.deletions.idle().await;
        let layout = self.layout.clone();
        run_blocking(move || sweep::sweep(&layout)).await
    }
}

/// Every committed environment at one instant, ascending by id: a slice shared with the
/// store's cache (see [`Store::listing`]).
#[derive(Debug, Clone)]
pub struct Listing(Arc<Index>);

impl std::ops::Deref for Listing {
    type Target = [EnvironmentRecord];

    fn deref(&self) -> &[EnvironmentRecord] {
        &self.0.environments
    }
}

/// The current index: the cached one if `index.json` is unchanged (one `lstat`, or one read
/// of the watch, on this thread), else read off the async threads.
async fn current_index(
    layout: &Arc<Layout>,
    received: Option<Instant>,
) -> Result<Arc<Index>, StoreError> {
    if let Some(index) = Index::cached(layout, received) {
        return Ok(index);
    }
    let layout = layout.clone();
    run_blocking(move || Index::read(&layout)).await
}

/// Runs blocking store work on tokio's blocking pool.
async fn run_blocking<T, F>(work: F) -> Result<T, StoreError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, StoreError> + Send + 'static,
{
    tokio::task::spawn_blocking(work).await.map_err(|e| {
        StoreError::io(
            "running store work on the blocking pool",
            std::io::Error::other(e),
        )
    })?
}
