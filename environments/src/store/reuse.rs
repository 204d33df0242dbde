//! Environments reused by content, and when each environment was last used.
//!
//! A create with `reuse` holds `locks/<key>.reuse` exclusively from before it looks for an
//! environment with its content key until its own is committed (or abandoned), so identical
//! creates in every process that shares the store build one environment: the others wait, then
//! find it. The key lives in the environment's record until an install or uninstall changes the
//! environment ([`Store::forget_reuse`]).
//!
//! Every use of an environment touches its use-lock file (see `removal::acquire_use`), whose
//! modification time is then when it was last used.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::error::StoreError;
use super::index::{Durability, IndexWriter, Space};
use super::lock::{LockMode, PathLock};
use super::record::EnvironmentRecord;
use super::{run_blocking, wait, Store};

/// How many hex digits a content key has (a SHA-256).
const KEY_HEX_DIGITS: usize = 64;

/// The suffix of a content key's lock file in `locks/`.
pub(crate) const KIND: &str = "reuse";

/// Whether `key` has the shape of a content key: 64 lowercase hex digits. Only keys of this
/// shape name lock files.
pub fn is_reuse_key(key: &str) -> bool {
    key.len() == KEY_HEX_DIGITS
        && key
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The exclusive right to build the environment of one content key, held until dropped.
#[derive(Debug)]
pub struct ReuseTurn {
    _lock: PathLock,
}

impl Store {
    /// Waits for the turn to build the environment of content `key` (64 lowercase hex
    /// digits), in this process and every other on this store. Cancel-safe.
    pub async fn reuse_turn(&self, key: &str) -> Result<ReuseTurn, StoreError> {
        if !is_reuse_key(key) {
            return Err(StoreError::io(
                format!("locking the content key {key:?}"),
                std::io::ErrorKind::InvalidInput.into(),
            ));
        }
        let path = self.layout.locks.join(format!("{key}.{KIND}"));
        let lock = wait::acquire(&path, LockMode::Exclusive)
            .await
            .map_err(|e| StoreError::io(format!("locking {}", path.display()), e))?;
        Ok(ReuseTurn { _lock: lock })
    }

    /// The committed environment made with `reuse` whose content key is `key` and that
    /// nothing has changed since, if any.
    pub async fn reusable(&self, key: &str) -> Result<Option<EnvironmentRecord>, StoreError> {
        let index = self.index().await?;
        Ok(index
            .environments
            .iter()
            .find(|record| record.reuse_key.as_deref() == Some(key))
            .cloned())
    }

    /// Makes environment `id` no longer reusable (it is being changed). Nothing happens when
    /// it has no key or is gone.
    pub async fn forget_reuse(&self, id: &str) -> Result<(), StoreError> {
        let reusable = self.index().await?;
        if reusable
            .environment(id)
            .and_then(|r| r.reuse_key.as_ref())
            .is_none()
        {
            return Ok(());
        }
        let layout = self.layout.clone();
        let id = id.to_owned();
        run_blocking(move || {
            let writer = IndexWriter::lock(&layout)?;
            let mut index = writer.read()?;
            let Some(record) = index.environments.iter_mut().find(|r| r.id == id) else {
                return Ok(());
            };
            if record.reuse_key.take().is_none() {
                return Ok(());
            }
            writer.write(&index, Durability::Durable, Space::Takes)
        })
        .await
    }

    /// When `record`'s environment was last used (created, reused, got, locked, executed in, installed
    /// into or uninstalled from, in any process). Blocking: one `lstat`.
    pub fn last_used(&self, record: &EnvironmentRecord) -> SystemTime {
        let created = UNIX_EPOCH + Duration::from_millis(record.created_at_unix_ms);
        match std::fs::symlink_metadata(self.layout.use_lock(&record.id))
            .and_then(|metadata| metadata.modified())
        {
            Ok(touched) => touched.max(created),
            Err(_) => created,
        }
    }
}

/// Marks the environment whose use-lock is `lock` as used now, to the nanosecond (an explicit
/// time: the kernel's own stamps are only as fine as its tick). A failure only makes it look
/// older to `environment/gc`.
pub(crate) fn touch(lock: &PathLock) {
    if let Err(error) = lock.set_modified_now() {
        tracing::debug!(path = %lock.path().display(), %error, "could not mark an environment as used");
    }
}
