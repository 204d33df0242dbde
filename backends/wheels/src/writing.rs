//! One writer per environment: an install holds its environment's lock from its first write
//! until what it wrote is committed or removed again. The future of an install that is dropped
//! (a cancelled request) is gone at once, but its blocking work goes on to the next file and
//! then removes what it wrote; [`settled`] waits for that, so the next change to the
//! environment starts from a consistent one.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, PoisonError, Weak};

use tokio::sync::OwnedMutexGuard;

type RootLock = tokio::sync::Mutex<()>;

/// The locks of the environments being written now (held by no one: gone).
static LOCKS: LazyLock<Mutex<HashMap<PathBuf, Weak<RootLock>>>> = LazyLock::new(Default::default);

fn lock_of(root: &Path) -> Arc<RootLock> {
    let mut locks = LOCKS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(lock) = locks.get(root).and_then(Weak::upgrade) {
        return lock;
    }
    locks.retain(|_, lock| lock.strong_count() > 0);
    let lock = Arc::new(RootLock::new(()));
    locks.insert(root.to_path_buf(), Arc::downgrade(&lock));
    lock
}

/// Waits for the environment at `root` to have no writer, then holds it until dropped.
pub(crate) async fn writer(root: &Path) -> OwnedMutexGuard<()> {
    lock_of(root).lock_owned().await
}

/// Waits until no install of this crate is writing into the environment at `root`, or
/// removing what a cancelled one wrote there. Call it before changing an environment in any
/// other way (another installer, an uninstall).
pub async fn settled(root: &Path) {
    drop(writer(root).await);
}
