//! Containing everything a command starts, so that it can all be killed at once.
//!
//! Three mechanisms, tried in this order when the process first asks
//! ([`containment_mode`]):
//! 1. [`ContainmentMode::Cgroup`]: a cgroup v2 of its own per command, created under this
//!    process's cgroup and joined by the child before it execs. `cgroup.kill` kills every
//!    process in it, `setsid` daemons included, and `cgroup.events` tells when it is empty.
//!    Needs a writable cgroup v2 hierarchy (root, or a delegated subtree).
//! 2. [`ContainmentMode::PidNamespace`]: a PID namespace of its own per command (inside a user
//!    namespace when this process is not privileged). A small init that wsp forks in the
//!    namespace runs the command as its only child; when the command exits, or the init is
//!    killed, the kernel kills everything else in the namespace.
//! 3. [`ContainmentMode::ProcessGroup`]: only the command's process group, which a process
//!    leaves with `setsid` or `setpgid`.
//!
//! Every live containment is registered, so that [`kill_all_live`] can kill them all when the
//! server exits (where destructors do not run).

mod cgroup;
mod pidns;
mod registry;

use std::io;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

pub use registry::kill_all_live;

pub(super) use pidns::NamespacePlan;

/// How the processes of one command are held together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContainmentMode {
    /// A cgroup v2 per command, killed with `cgroup.kill`.
    Cgroup,
    /// A PID namespace per command.
    PidNamespace {
        /// Whether the namespace is made inside a new user namespace (this process lacks the
        /// privilege to make a PID namespace otherwise).
        user_namespace: bool,
    },
    /// The command's process group only.
    ProcessGroup,
}

impl ContainmentMode {
    /// The mode's name as the server reports it: `cgroup`, `pid-namespace` or
    /// `process-group`.
    pub fn as_str(self) -> &'static str {
        match self {
            ContainmentMode::Cgroup => "cgroup",
            ContainmentMode::PidNamespace { .. } => "pid-namespace",
            ContainmentMode::ProcessGroup => "process-group",
        }
    }

    /// Whether a process that leaves the process group (`setsid`) is still contained.
    pub fn contains_new_sessions(self) -> bool {
        !matches!(self, ContainmentMode::ProcessGroup)
    }
}

/// The best mode this process can use, found by trying each once (later calls return the
/// same answer).
pub fn containment_mode() -> ContainmentMode {
    static MODE: OnceLock<ContainmentMode> = OnceLock::new();
    *MODE.get_or_init(|| {
        if cgroup::available() {
            ContainmentMode::Cgroup
        } else if pidns::works(false) {
            ContainmentMode::PidNamespace {
                user_namespace: false,
            }
        } else if pidns::works(true) {
            ContainmentMode::PidNamespace {
                user_namespace: true,
            }
        } else {
            ContainmentMode::ProcessGroup
        }
    })
}

/// How long [`Containment::finish`] waits for a killed cgroup to empty before leaving its
/// removal to a background thread.
const EMPTY_WAIT: Duration = Duration::from_secs(5);

/// One command's containment, from before its spawn until it is dropped. Dropping it kills
/// whatever is still inside.
#[derive(Debug)]
pub(super) struct Containment {
    cgroup: Option<Arc<cgroup::ExecCgroup>>,
    namespace: Option<NamespacePlan>,
    live: registry::Registration,
}

impl Containment {
    /// Prepares a containment of `mode` (a cgroup is created here) and registers it.
    pub(super) fn prepare(mode: ContainmentMode) -> io::Result<Self> {
        let cgroup = match mode {
            ContainmentMode::Cgroup => Some(Arc::new(cgroup::ExecCgroup::create()?)),
            _ => None,
        };
        let namespace = match mode {
            ContainmentMode::PidNamespace { user_namespace } => {
                Some(NamespacePlan::new(user_namespace))
            }
            _ => None,
        };
        let live = registry::Registration::new(cgroup.clone());
        Ok(Containment {
            cgroup,
            namespace,
            live,
        })
    }

    /// The `cgroup.procs` descriptor the child writes `0` to, to join its cgroup.
    pub(super) fn cgroup_procs(&self) -> Option<std::os::fd::RawFd> {
        self.cgroup.as_deref().map(cgroup::ExecCgroup::procs_fd)
    }

    /// The namespace the child enters between fork and exec.
    pub(super) fn namespace(&self) -> Option<&NamespacePlan> {
        self.namespace.as_ref()
    }

    /// Records the spawned child, whose process group is killed along with the rest.
    pub(super) fn started(&self, pid: Option<u32>) {
        self.live.set_group(pid);
    }

    /// Kills everything inside at once (`SIGKILL`); the processes die shortly after.
    pub(super) fn kill(&self) {
        self.live.kill();
    }

    /// The main child exited: kills what it left behind and, for a cgroup, waits until all of
    /// it is gone and removes the cgroup.
    pub(super) async fn finish(&mut self) {
        self.live.kill();
        self.live.forget_group();
        if let Some(cgroup) = &self.cgroup {
            if cgroup.wait_empty(EMPTY_WAIT).await.unwrap_or(false) {
                cgroup.remove();
            }
        }
    }
}

impl Drop for Containment {
    fn drop(&mut self) {
        self.live.kill();
        if let Some(cgroup) = self.cgroup.take() {
            cgroup::remove_when_empty(cgroup);
        }
    }
}
