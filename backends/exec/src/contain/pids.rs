//! How `limits.processes` is enforced: `pids.max` of a cgroup of the command's own where a
//! `pids` controller is at hand, else `RLIMIT_NPROC` where that binds, else not at all.
//!
//! `RLIMIT_NPROC` counts every process of the user, and binds no process whose real uid is 0
//! or that has `CAP_SYS_ADMIN` or `CAP_SYS_RESOURCE`: a root server cannot limit its commands
//! with it. `pids.max` counts the tasks (threads included, as `RLIMIT_NPROC` does) of one
//! cgroup, whoever runs them. The cgroup is
//! - the command's own v2 cgroup, in `cgroup` mode when the server's subtree delegates `pids`;
//! - else a cgroup of the command's own in the v1 `pids` hierarchy (systems that still mount
//!   the `pids` controller on v1), joined by the child beside its containment, and in
//!   `pid-namespace` mode before it enters the namespace: wsp's forwarder and init count
//!   there too, so the limit is raised by those two.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

use rustix::fs::{Mode, OFlags};

use super::hierarchy::{own_v1_pids, Kind};
use super::subtree::Subtree;
use super::{cgroup, ContainmentMode};
use crate::remove_tree::remove_cgroup_tree;

/// How `limits.processes` is enforced here (`initialize` reports it as `process_limit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessLimit {
    /// `pids.max` of a cgroup of the command's own: it binds root, and counts the command's
    /// tasks only.
    Cgroup,
    /// `RLIMIT_NPROC`: it counts every process of the server's user.
    Rlimit,
    /// Neither: a command asking for `limits.processes` is refused (`limit-unavailable`).
    Unavailable,
}

impl ProcessLimit {
    /// `cgroup`, `rlimit` or `unavailable`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProcessLimit::Cgroup => "cgroup",
            ProcessLimit::Rlimit => "rlimit",
            ProcessLimit::Unavailable => "unavailable",
        }
    }
}

/// How a command run in `mode` gets its process limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mechanism {
    /// `pids.max` of the command's v2 cgroup.
    V2,
    /// `pids.max` of a v1 `pids` cgroup of its own.
    V1,
    /// `RLIMIT_NPROC`.
    Rlimit,
    /// None.
    Unavailable,
}

impl Mechanism {
    pub(super) fn for_mode(mode: ContainmentMode) -> Mechanism {
        if mode == ContainmentMode::Cgroup && cgroup::subtree().is_some_and(Subtree::limits_pids) {
            Mechanism::V2
        } else if v1_subtree().is_some() {
            Mechanism::V1
        } else if rlimit_binds() {
            Mechanism::Rlimit
        } else {
            Mechanism::Unavailable
        }
    }

    pub(super) fn public(self) -> ProcessLimit {
        match self {
            Mechanism::V2 | Mechanism::V1 => ProcessLimit::Cgroup,
            Mechanism::Rlimit => ProcessLimit::Rlimit,
            Mechanism::Unavailable => ProcessLimit::Unavailable,
        }
    }
}

static V1_SUBTREE: OnceLock<Option<Subtree>> = OnceLock::new();

/// This process's subtree of the v1 `pids` hierarchy, made on first use.
fn v1_subtree() -> Option<&'static Subtree> {
    V1_SUBTREE
        .get_or_init(|| {
            let home = own_v1_pids()?;
            match Subtree::establish(Kind::V1Pids, home) {
                Ok(subtree) => Some(subtree),
                Err(error) => {
                    tracing::debug!(%error, "cannot make this server's v1 pids subtree");
                    None
                }
            }
        })
        .as_ref()
}

/// Removes this process's v1 `pids` subtree, if it made one: for a server about to exit.
pub(super) fn dissolve_v1() {
    if let Some(subtree) = V1_SUBTREE.get().and_then(Option::as_ref) {
        subtree.dissolve();
    }
}

/// Whether `RLIMIT_NPROC` binds this process's children: a real uid other than 0, and neither
/// `CAP_SYS_ADMIN` nor `CAP_SYS_RESOURCE` in effect.
fn rlimit_binds() -> bool {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return !rustix::process::getuid().is_root();
    };
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .map(str::trim)
    };
    let real_uid = field("Uid:").and_then(|ids| ids.split_whitespace().next());
    let effective = field("CapEff:").and_then(|hex| u64::from_str_radix(hex, 16).ok());
    const CAP_SYS_ADMIN: u32 = 21;
    const CAP_SYS_RESOURCE: u32 = 24;
    let exempting = (1u64 << CAP_SYS_ADMIN) | (1u64 << CAP_SYS_RESOURCE);
    real_uid.is_some_and(|uid| uid != "0") && effective.is_some_and(|caps| caps & exempting == 0)
}

/// A command's own cgroup in the v1 `pids` hierarchy; dropping it removes it once empty.
#[derive(Debug)]
pub(super) struct V1PidsCgroup {
    dir: PathBuf,
    procs: OwnedFd,
}

/// How often, and how far apart, removing a v1 cgroup whose processes are still dying is
/// tried again in the background (v1 has no event that says it emptied).
const RETRIES: u32 = 50;
const RETRY_PAUSE: Duration = Duration::from_millis(100);

impl V1PidsCgroup {
    /// Makes one with `pids.max` at `max`.
    pub(super) fn create(max: u64) -> io::Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let subtree = v1_subtree().ok_or_else(|| io::Error::other("no v1 pids hierarchy"))?;
        let dir = subtree
            .dir()
            .join(NEXT.fetch_add(1, Ordering::Relaxed).to_string());
        std::fs::create_dir(&dir)?;
        let made = std::fs::write(dir.join("pids.max"), max.to_string()).and_then(|()| {
            Ok(rustix::fs::open(
                dir.join("cgroup.procs"),
                OFlags::WRONLY | OFlags::CLOEXEC,
                Mode::empty(),
            )?)
        });
        match made {
            Ok(procs) => Ok(V1PidsCgroup { dir, procs }),
            Err(error) => {
                let _ = std::fs::remove_dir(&dir);
                Err(error)
            }
        }
    }

    /// The `cgroup.procs` the child writes `0` to.
    pub(super) fn procs_fd(&self) -> RawFd {
        self.procs.as_raw_fd()
    }
}

impl Drop for V1PidsCgroup {
    fn drop(&mut self) {
        if remove_cgroup_tree(&self.dir).is_ok() {
            return;
        }
        let dir = std::mem::take(&mut self.dir);
        let spawned = std::thread::Builder::new()
            .name("wsp-pids-remover".into())
            .spawn(move || {
                for _ in 0..RETRIES {
                    std::thread::sleep(RETRY_PAUSE);
                    if remove_cgroup_tree(&dir).is_ok() {
                        return;
                    }
                }
                tracing::debug!(dir = %dir.display(), "a command's pids cgroup stays behind");
            });
        if let Err(error) = spawned {
            tracing::debug!(%error, "cannot start the pids cgroup remover");
        }
    }
}
