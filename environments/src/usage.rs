//! The delete-waits rule: a `get`, `execute`, `install` or `uninstall` read before a `delete`
//! of the same environment finishes before the delete removes it, in this process and across
//! processes.
//!
//! In this process the rule is decided in the order requests were read: a use registers when
//! it is read ([`Usage::begin`]); a `delete` read later marks the id as going away (so every use
//! read after it sees `-31001`) and then waits until the uses registered before it are gone.
//! Both take a [`ReadTime`], so they can only run in a request's read-time step. Across
//! processes the registered use then holds the store's use lock of the environment
//! ([`UseToken::hold`]), which a delete in another process waits for.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

use crate::store::{EnvironmentRecord, Store, StoreError, UseGuard};
use wsp_middleware::ReadTime;

#[derive(Default)]
struct State {
    uses: HashMap<String, usize>,
    deleting: HashSet<String>,
}

/// Who is using which environment in this process.
#[derive(Clone, Default)]
pub(crate) struct Usage {
    state: Arc<Mutex<State>>,
    released: Arc<Notify>,
}

/// A delete of an environment under way; dropping it ends it.
pub(crate) struct DeleteMark {
    usage: Usage,
    id: String,
}

impl Drop for DeleteMark {
    fn drop(&mut self) {
        self.usage.lock().deleting.remove(&self.id);
    }
}

/// A registered use; dropping it releases the use.
pub(crate) struct UseToken {
    usage: Usage,
    id: String,
}

/// A use held in this process and across processes: the environment's record, while the
/// environment can't be deleted.
pub(crate) struct InUse {
    guard: UseGuard,
    _token: UseToken,
}

impl UseToken {
    /// Holds the environment for the rest of the request, across processes too: takes the
    /// store's use lock (waiting while another process deletes it).
    pub(crate) async fn hold(self, store: &Store) -> Result<InUse, StoreError> {
        let guard = store.acquire_use(&self.id).await?;
        Ok(InUse {
            guard,
            _token: self,
        })
    }
}

impl InUse {
    /// The environment's record.
    pub(crate) fn record(&self) -> &EnvironmentRecord {
        self.guard.record()
    }
}

impl Usage {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Registers a use of `id`, at the request's read time; `None` when a delete of `id` was
    /// read earlier.
    pub(crate) fn begin(&self, id: &str, _read: &ReadTime<'_>) -> Option<UseToken> {
        let mut state = self.lock();
        if state.deleting.contains(id) {
            return None;
        }
        *state.uses.entry(id.to_owned()).or_default() += 1;
        Some(UseToken {
            usage: self.clone(),
            id: id.to_owned(),
        })
    }

    /// Marks `id` as being deleted until the mark is dropped, whatever the delete's outcome
    /// (a dropped, never polled delete included); `None` when another delete of it is already
    /// under way.
    pub(crate) fn mark_deleting(&self, id: &str, _read: &ReadTime<'_>) -> Option<DeleteMark> {
        self.lock()
            .deleting
            .insert(id.to_owned())
            .then(|| DeleteMark {
                usage: self.clone(),
                id: id.to_owned(),
            })
    }

    /// Marks `id` as being deleted, as [`mark_deleting`](Usage::mark_deleting) does, if no use
    /// of it is registered and no other delete of it is under way; `None` otherwise.
    pub(crate) fn mark_deleting_if_unused(&self, id: &str) -> Option<DeleteMark> {
        let mut state = self.lock();
        if state.uses.contains_key(id) || !state.deleting.insert(id.to_owned()) {
            return None;
        }
        Some(DeleteMark {
            usage: self.clone(),
            id: id.to_owned(),
        })
    }

    /// Waits until no use of `id` registered so far remains.
    pub(crate) async fn wait_unused(&self, id: &str) {
        loop {
            let released = self.released.notified();
            tokio::pin!(released);
            released.as_mut().enable();
            if !self.lock().uses.contains_key(id) {
                return;
            }
            released.await;
        }
    }
}

impl Drop for UseToken {
    fn drop(&mut self) {
        let mut state = self.usage.lock();
        if let Some(count) = state.uses.get_mut(&self.id) {
            *count -= 1;
            if *count == 0 {
                state.uses.remove(&self.id);
            }
        }
        drop(state);
        self.usage.released.notify_waiters();
    }
}
