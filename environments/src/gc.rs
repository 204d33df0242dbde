//! `environment/gc`: deleting environments, least recently used first, until the store's
//! environments fit in a number of bytes.

use wsp_exec::current_stack;
use wsp_protocol::results::EnvironmentChange;
use wsp_protocol::{GcParams, GcResult};

use super::disk_use::disk_bytes;
use super::failure::store_error;
use super::handlers::Answer;
use super::Environments;
use crate::store::{EnvironmentRecord, StoreError};

/// An environment as the collection weighs it.
struct Candidate {
    id: String,
    last_used: std::time::SystemTime,
    disk_bytes: u64,
}

impl Environments {
    /// `environment/gc`: deletes environments by least recent use until the rest hold at most
    /// `keep_bytes`, skipping every one that a request (in any process on this store) uses or
    /// deletes right now and those this server runs in.
    pub(super) async fn gc(self, params: GcParams) -> Answer<GcResult> {
        let listing = self.inner.store.listing(None).await.map_err(store_error)?;
        let store = self.inner.store.clone();
        let mut candidates = tokio::task::spawn_blocking(move || weigh(&store, &listing))
            .await
            .map_err(|e| {
                let doing = "weighing the environments on the blocking pool";
                store_error(StoreError::io(doing, std::io::Error::other(e)))
            })?;
        candidates.sort_by(|a, b| (a.last_used, &a.id).cmp(&(b.last_used, &b.id)));
        let mut total: u64 = candidates.iter().map(|c| c.disk_bytes).sum();
        let running = current_stack();
        let mut deleted = Vec::new();
        for candidate in candidates {
            if total <= params.keep_bytes {
                break;
            }
            let id = candidate.id;
            if running.contains(&id) {
                continue;
            }
            match self.inner.store.unused_soon(&id).await {
                Ok(true) => {}
                Ok(false) | Err(StoreError::NotFound { .. }) => continue,
                Err(e) => return Err(store_error(e)),
            }
            let Some(_mark) = self.inner.usage.mark_deleting_if_unused(&id) else {
                continue;
            };
            let removal = match self.inner.store.remove_unused(&id).await {
                Ok(Some(removal)) => removal,
                Ok(None) | Err(StoreError::NotFound { .. }) => continue,
                Err(e) => return Err(store_error(e)),
            };
            self.changed(&id, EnvironmentChange::Deleted);
            tokio::spawn(self.clone().finish_removal(removal));
            total -= candidate.disk_bytes;
            deleted.push(id);
        }
        Ok(GcResult {
            deleted,
            disk_bytes: total,
        })
    }
}

/// When each environment was last used and what it holds. Blocking.
fn weigh(store: &crate::store::Store, records: &[EnvironmentRecord]) -> Vec<Candidate> {
    records
        .iter()
        .map(|record| Candidate {
            last_used: store.last_used(record),
            disk_bytes: disk_bytes(&record.root).unwrap_or(0),
            id: record.id.clone(),
        })
        .collect()
}
