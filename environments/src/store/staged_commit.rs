//! A commit in two steps: written and fsynced beside the index under the index lock
//! ([`Reservation::stage_commit`](super::Reservation::stage_commit)), then published or
//! aborted.

use std::sync::Arc;

use super::error::StoreError;
use super::index::StagedIndex;
use super::layout::Layout;
use super::record::EnvironmentRecord;
use super::reservation::{discard_lock, Pending};
use super::reserve;
use super::run_blocking;
use super::sweep::{self, HalfSwept};

/// A commit written beside the index and holding the index lock: see
/// [`Reservation::stage_commit`](super::Reservation::stage_commit). Dropped unpublished, it aborts the reservation in the
/// background, as a dropped [`Reservation`](super::Reservation) does.
#[derive(Debug)]
pub struct StagedCommit {
    pub(super) record: EnvironmentRecord,
    /// Both are `Some` until the commit is published or aborted.
    pub(super) staged: Option<(StagedIndex, Pending)>,
    /// The rest of a sweep begun under the staged commit's lock.
    pub(super) half_swept: Option<HalfSwept>,
}

impl StagedCommit {
    /// Makes the staged commit everyone's (the rename of the index and the fsync of its
    /// directory), and releases the index lock. If the rename fails, the reservation is
    /// aborted.
    pub async fn publish(mut self) -> Result<EnvironmentRecord, StoreError> {
        let Some((staged, mut pending)) = self.staged.take() else {
            return Err(finished(&self.record.id));
        };
        let record = self.record.clone();
        let sweeping = finish_sweep(pending.layout.clone(), self.half_swept.take());
        let publishing = run_blocking(move || {
            // On error `pending` is dropped after the staged index let go of the lock: it aborts.
            staged.publish(&pending.layout)?;
            reserve::ensure(&pending.layout);
            if let Some(owner) = pending.owner.take() {
                discard_lock(owner);
            }
            Ok(record)
        });
        tokio::join!(publishing, sweeping).0
    }

    /// Drops the staged index (releasing the index lock), then aborts the reservation.
    pub async fn abort(mut self) -> Result<(), StoreError> {
        let Some((staged, mut pending)) = self.staged.take() else {
            return Err(finished(&self.record.id));
        };
        let layout = pending.layout.clone();
        let aborted = run_blocking(move || {
            drop(staged);
            pending.abort()
        })
        .await;
        finish_sweep(layout, self.half_swept.take()).await;
        aborted
    }
}

/// The rest of a sweep whose index-locked part is done, if any; a failure is only logged.
async fn finish_sweep(layout: Arc<Layout>, half: Option<HalfSwept>) {
    let Some(half) = half else {
        return;
    };
    if let Err(error) = run_blocking(move || sweep::finish(&layout, half)).await {
        sweep::log_failure(&error);
    }
}

impl Drop for StagedCommit {
    fn drop(&mut self) {
        let Some((staged, pending)) = self.staged.take() else {
            return;
        };
        let half_swept = self.half_swept.take();
        // The lock goes first: the abort takes it again.
        let finish = move || {
            let layout = pending.layout.clone();
            drop(staged);
            drop(pending);
            if let Some(half) = half_swept {
                if let Err(error) = sweep::finish(&layout, half) {
                    sweep::log_failure(&error);
                }
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn_blocking(finish);
            }
            Err(_) => finish(),
        }
    }
}

pub(super) fn finished(id: &str) -> StoreError {
    StoreError::io(
        format!("finishing reservation {id}"),
        std::io::Error::other("the reservation is already finished"),
    )
}
