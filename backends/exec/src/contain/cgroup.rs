//! A cgroup v2 per command, in the server's own subtree (see [`super::subtree`]).

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rustix::fs::{Mode, OFlags};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

use super::escapees::kill_escapees;
use super::hierarchy::{own_v2, Kind};
use super::subtree::{populated, wait_events_empty, Subtree};
use crate::remove_tree::remove_cgroup_tree;

/// How long the background remover waits for one killed cgroup to empty.
const REMOVER_WAIT: Duration = Duration::from_secs(30);

static SUBTREE: OnceLock<Option<Subtree>> = OnceLock::new();

/// This process's subtree of the v2 hierarchy if it was made already.
pub(super) fn made_subtree() -> Option<&'static Subtree> {
    SUBTREE.get().and_then(Option::as_ref)
}

/// This process's subtree of the v2 hierarchy, made (and this process moved into its leaf)
/// the first time it is asked for; `None` without a writable cgroup v2 hierarchy.
pub(super) fn subtree() -> Option<&'static Subtree> {
    SUBTREE
        .get_or_init(|| {
            let home = own_v2()?;
            match Subtree::establish(Kind::V2, home) {
                Ok(subtree) => Some(subtree),
                Err(error) => {
                    tracing::debug!(%error, "cannot make this server's cgroup subtree");
                    None
                }
            }
        })
        .as_ref()
}

/// Whether per-command cgroups work here: one is created, a forked child joins it, and it is
/// removed again.
pub(super) fn available() -> bool {
    let Ok(cgroup) = ExecCgroup::create(None) else {
        return false;
    };
    let procs = cgroup.procs_fd();
    // SAFETY: the child only calls `write` and `_exit`, both async-signal-safe.
    let joined = unsafe {
        match libc::fork() {
            0 => {
                let ok = libc::write(procs, b"0".as_ptr().cast(), 1) == 1;
                libc::_exit(if ok { 0 } else { 1 })
            }
            -1 => false,
            child => {
                crate::spawn::wait_blocking(child).is_ok_and(|status| status.code() == Some(0))
            }
        }
    };
    let emptied = cgroup.wait_empty_blocking(Duration::from_secs(1));
    cgroup.remove();
    joined && emptied
}

/// One command's cgroup.
#[derive(Debug)]
pub(super) struct ExecCgroup {
    dir: PathBuf,
    /// The directory itself, to start a child in (`CLONE_INTO_CGROUP`).
    dir_fd: OwnedFd,
    procs: OwnedFd,
    kill: OwnedFd,
    events: OwnedFd,
    removed: AtomicBool,
}

impl ExecCgroup {
    /// Creates the next `<n>` in this process's subtree, with `pids.max` set to `processes`
    /// when given (which needs [`Subtree::limits_pids`]).
    pub(super) fn create(processes: Option<u64>) -> io::Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let subtree =
            subtree().ok_or_else(|| io::Error::other("no cgroup v2 hierarchy was found"))?;
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = subtree.dir().join(n.to_string());
        std::fs::create_dir(&dir)?;
        let open = |name: &str, flags: OFlags| -> io::Result<OwnedFd> {
            Ok(rustix::fs::open(
                dir.join(name),
                flags | OFlags::CLOEXEC,
                Mode::empty(),
            )?)
        };
        let files = (|| {
            if let Some(processes) = processes {
                std::fs::write(dir.join("pids.max"), processes.to_string())?;
            }
            Ok::<_, io::Error>((
                open(".", OFlags::RDONLY | OFlags::DIRECTORY)?,
                open("cgroup.procs", OFlags::WRONLY)?,
                open("cgroup.kill", OFlags::WRONLY)?,
                open("cgroup.events", OFlags::RDONLY)?,
            ))
        })();
        match files {
            Ok((dir_fd, procs, kill, events)) => Ok(ExecCgroup {
                dir,
                dir_fd,
                procs,
                kill,
                events,
                removed: AtomicBool::new(false),
            }),
            Err(error) => {
                let _ = std::fs::remove_dir(&dir);
                Err(error)
            }
        }
    }

    pub(super) fn dir_fd(&self) -> RawFd {
        self.dir_fd.as_raw_fd()
    }

    pub(super) fn procs_fd(&self) -> RawFd {
        self.procs.as_raw_fd()
    }

    /// Sends `SIGKILL` to every process in the cgroup and its descendants.
    pub(super) fn kill(&self) {
        if !self.removed.load(Ordering::Acquire) {
            // Fails only once the cgroup is gone, and then there is nothing to kill.
            let _ = rustix::io::write(&self.kill, b"1");
        }
    }

    /// Whether any process is still in the cgroup or below it.
    fn populated(&self) -> io::Result<bool> {
        populated(&self.events)
    }

    /// Waits until the cgroup is empty; `Ok(false)` when `bound` passed first.
    pub(super) async fn wait_empty(&self, bound: Duration) -> io::Result<bool> {
        let deadline = tokio::time::Instant::now() + bound;
        // cgroup.events signals each change as an exceptional condition (POLLPRI).
        let events = self.events.try_clone()?;
        // SAFETY: the AsyncFd owns this descriptor and nothing else closes it.
        let events = unsafe { AsyncFd::register_with_interest(events, Interest::PRIORITY) }
            .map_err(io::Error::from)?;
        loop {
            if !self.populated()? {
                return Ok(true);
            }
            match tokio::time::timeout_at(deadline, events.ready(Interest::PRIORITY)).await {
                Ok(guard) => guard?.clear_ready(),
                Err(_) => return Ok(false),
            }
        }
    }

    /// Like [`ExecCgroup::wait_empty`], blocking the thread; `false` on timeout or error.
    pub(super) fn wait_empty_blocking(&self, bound: Duration) -> bool {
        wait_events_empty(&self.events, Instant::now() + bound)
    }

    /// Removes the cgroup (and any cgroups a nested server made below it); it must be empty.
    /// Then kills what the command moved into the server's own cgroup: with the command gone,
    /// nothing it moved there descends from the server any longer.
    pub(super) fn remove(&self) {
        if !self.removed.swap(true, Ordering::AcqRel) {
            if let Err(error) = remove_cgroup_tree(&self.dir) {
                tracing::debug!(dir = %self.dir.display(), %error, "cannot remove a command's cgroup");
            }
            if let Some(subtree) = made_subtree() {
                kill_escapees(subtree);
            }
        }
    }
}

/// Removes `cgroup` now if it is empty, else from a background thread once it is.
pub(super) fn remove_when_empty(cgroup: Arc<ExecCgroup>) {
    if cgroup.removed.load(Ordering::Acquire) {
        return;
    }
    if let Ok(false) = cgroup.populated() {
        cgroup.remove();
        return;
    }
    static REMOVER: OnceLock<Mutex<mpsc::Sender<Arc<ExecCgroup>>>> = OnceLock::new();
    let sender = REMOVER.get_or_init(|| {
        let (sender, receiver) = mpsc::channel::<Arc<ExecCgroup>>();
        let spawned = std::thread::Builder::new()
            .name("wsp-cgroup-remover".into())
            .spawn(move || {
                for cgroup in receiver {
                    if cgroup.wait_empty_blocking(REMOVER_WAIT) {
                        cgroup.remove();
                    }
                }
            });
        if let Err(error) = spawned {
            tracing::warn!(%error, "cannot start the cgroup remover; killed cgroups stay behind");
        }
        Mutex::new(sender)
    });
    let sender = sender
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    // Fails only when the remover could not start; the empty cgroup then stays.
    let _ = sender.send(cgroup);
}
