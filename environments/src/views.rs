//! What `environment/get` reports about an environment's files (its installed packages and
//! disk use), kept between requests while the environment's [`ChangeStamp`] stays the same: a
//! repeated `get` of an unchanged environment reads no metadata file and walks no directory.
//!
//! Every execute, install and uninstall, in any process on the store, marks the environment
//! changed when it starts and when it ends ([`Store::mark_changed`]); so does any change of the
//! root directory's own entries. A view computed while a change runs carries the stamp read
//! before it was computed, which the change's end replaces.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use wsp_backend::{BoxBackend, Description};

use super::handlers::Answer;
use super::Environments;
use crate::store::{ChangeStamp, EnvironmentRecord};

/// How many environments' views are kept; past it the cache starts over.
const MAX_VIEWS: usize = 4096;

/// An environment's files as last described and weighed.
#[derive(Clone)]
pub(crate) struct View {
    pub(crate) description: Description,
    pub(crate) disk_bytes: u64,
}

/// The views of this process, by environment id.
#[derive(Clone, Default)]
pub(crate) struct Views {
    views: Arc<Mutex<HashMap<String, (ChangeStamp, View)>>>,
}

impl Views {
    fn cached(&self, id: &str, stamp: ChangeStamp) -> Option<View> {
        let views = self.views.lock().unwrap_or_else(|p| p.into_inner());
        views
            .get(id)
            .filter(|(kept, _)| *kept == stamp)
            .map(|(_, view)| view.clone())
    }

    fn keep(&self, id: &str, stamp: ChangeStamp, view: View) {
        let mut views = self.views.lock().unwrap_or_else(|p| p.into_inner());
        if views.len() >= MAX_VIEWS && !views.contains_key(id) {
            views.clear();
        }
        views.insert(id.to_owned(), (stamp, view));
    }

    /// Forgets a deleted environment's view.
    pub(crate) fn forget(&self, id: &str) {
        self.views
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
    }
}

/// A request that may change an environment's files: marked changed when it starts and when
/// it ends (dropped, cancelled or not).
pub(crate) struct Changing {
    store: crate::store::Store,
    id: String,
}

impl Drop for Changing {
    fn drop(&mut self) {
        self.store.mark_changed(&self.id);
    }
}

impl Environments {
    /// Marks `id` changed now and again when the returned guard is dropped.
    pub(crate) fn changing(&self, id: &str) -> Changing {
        self.inner.store.mark_changed(id);
        Changing {
            store: self.inner.store.clone(),
            id: id.to_owned(),
        }
    }

    /// `record`'s installed packages and disk use: kept from an earlier request while nothing
    /// changed, else described by `backend` and weighed (side by side, off the async threads).
    pub(crate) async fn view(
        &self,
        backend: &BoxBackend,
        record: &EnvironmentRecord,
    ) -> Answer<View> {
        let stamp = self.inner.store.change_stamp(&record.id, &record.root);
        if let Some(view) = self.inner.views.cached(&record.id, stamp) {
            return Ok(view);
        }
        let root = record.root.clone();
        let weighed = tokio::task::spawn_blocking(move || super::disk_use::disk_bytes(&root));
        let (description, weighed) = tokio::join!(self.describe(backend, &record.root), weighed);
        let disk_bytes = weighed
            .map_err(std::io::Error::other)
            .and_then(|weighed| weighed)
            .map_err(|e| super::handlers::describe_failed(record, e))?;
        let view = View {
            description: description?,
            disk_bytes,
        };
        self.inner.views.keep(&record.id, stamp, view.clone());
        Ok(view)
    }
}
