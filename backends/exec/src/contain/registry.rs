//! Every live containment of this process, so that all of them can be killed at exit.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rustix::process::{kill_process_group, Pid, Signal};

use super::cgroup::ExecCgroup;

/// How long [`kill_all_live`] waits, in all, for killed cgroups to empty so it can remove
/// them.
const EXIT_WAIT: Duration = Duration::from_secs(2);

#[derive(Debug)]
struct Live {
    cgroup: Option<Arc<ExecCgroup>>,
    /// The child's process group id, or 0 before the spawn and after the group was forgotten.
    group: AtomicI32,
}

impl Live {
    fn kill(&self) {
        if let Some(cgroup) = &self.cgroup {
            cgroup.kill();
        }
        if let Some(group) = Pid::from_raw(self.group.load(Ordering::Acquire)) {
            // ESRCH (nothing left in the group) is the usual outcome.
            let _ = kill_process_group(group, Signal::KILL);
        }
    }
}

fn registry() -> MutexGuard<'static, BTreeMap<u64, Arc<Live>>> {
    static LIVE: Mutex<BTreeMap<u64, Arc<Live>>> = Mutex::new(BTreeMap::new());
    // A panic while the lock was held leaves the map itself intact.
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A containment's entry in the registry, removed when dropped.
#[derive(Debug)]
pub(super) struct Registration {
    key: u64,
    live: Arc<Live>,
}

impl Registration {
    pub(super) fn new(cgroup: Option<Arc<ExecCgroup>>) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let key = NEXT.fetch_add(1, Ordering::Relaxed);
        let live = Arc::new(Live {
            cgroup,
            group: AtomicI32::new(0),
        });
        registry().insert(key, live.clone());
        Registration { key, live }
    }

    pub(super) fn set_group(&self, leader: Option<u32>) {
        let group = leader.and_then(|pid| i32::try_from(pid).ok()).unwrap_or(0);
        self.live.group.store(group, Ordering::Release);
    }

    /// Stops killing the process group: its leader was reaped and what was left of it has
    /// been killed, so its number may soon belong to someone else.
    pub(super) fn forget_group(&self) {
        self.live.group.store(0, Ordering::Release);
    }

    pub(super) fn kill(&self) {
        self.live.kill();
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        registry().remove(&self.key);
    }
}

/// Kills, with `SIGKILL`, everything every live command of this process started, and removes
/// their cgroups once empty (waiting up to 2 s in all); when all of them could be removed, it
/// moves this process back to the cgroups it started in and removes its own cgroup subtree.
///
/// For a server about to exit: `std::process::exit` runs no destructors, so the commands'
/// own cleanup would never happen. Safe to call more than once; commands killed this way
/// answer as if killed by `SIGKILL`, and in `cgroup` mode no command can start after it.
pub fn kill_all_live() {
    let all: Vec<Arc<Live>> = registry().values().cloned().collect();
    for entry in &all {
        entry.kill();
    }
    let deadline = std::time::Instant::now() + EXIT_WAIT;
    let mut all_removed = true;
    for cgroup in all.iter().filter_map(|entry| entry.cgroup.as_ref()) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if cgroup.wait_empty_blocking(left) {
            cgroup.remove();
        } else {
            all_removed = false;
        }
    }
    if all_removed {
        super::dissolve_subtrees();
    }
}
