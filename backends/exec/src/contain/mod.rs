//! Containing everything a command starts, so that it can all be killed at once.
//!
//! Three mechanisms, tried in this order when the process first asks
//! ([`containment_mode`]):
//! 1. [`ContainmentMode::Cgroup`]: a cgroup v2 of its own per command, created in this
//!    process's subtree (module `subtree`: the server moves itself into a leaf of it, and at
//!    start kills and removes what dead servers left). The child starts inside it (`clone3`
//!    with `CLONE_INTO_CGROUP`, module `spawn`), or joins it before it execs where `clone3` is
//!    refused. `cgroup.kill` kills every process in it, `setsid` daemons included, and
//!    `cgroup.events` tells when it is empty; a process the command moved into the server's
//!    own cgroup is killed when the command ends (module `escapees`). Should the server die
//!    without cleaning up (`SIGKILL`), its guardian kills the whole subtree at once (module
//!    `guardian`). Needs a writable cgroup v2 hierarchy (root, or a delegated subtree).
//! 2. [`ContainmentMode::PidNamespace`]: a PID namespace of its own per command (inside a user
//!    namespace when this process is not privileged). A small init that wsp forks in the
//!    namespace runs the command as its only child; when the command exits, or the init is
//!    killed, the kernel kills everything else in the namespace, and so it does when the server
//!    dies (the forwarder watches a lifeline pipe, see module `pidns`).
//! 3. [`ContainmentMode::ProcessGroup`]: only the command's process group, which a process
//!    leaves with `setsid` or `setpgid`.
//!
//! Every live containment is registered, so that [`kill_all_live`] can kill them all when the
//! server exits (where destructors do not run).
//!
//! `limits.processes` is enforced here too (module `pids`): see [`ProcessLimit`].
//!
//! Tests choose the mode of a whole process with [`TEST_CONTAINMENT_VAR`] (`cgroup`,
//! `pid-namespace`, `pid-namespace-user` or `process-group`), and of one run with
//! [`super::RunOptions::containment`].

mod cgroup;
mod escapees;
mod guardian;
mod hierarchy;
mod pidns;
mod pids;
mod registry;
mod subtree;

use std::io;
use std::os::fd::RawFd;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

pub use crate::ContainmentMode;
pub use pids::ProcessLimit;
pub use registry::kill_all_live;

/// Set to `cgroup`, `pid-namespace`, `pid-namespace-user` or `process-group`, it makes
/// [`containment_mode`] use that mode without trying the better ones (a switch for tests; a
/// mode that does not work here fails the commands).
pub const TEST_CONTAINMENT_VAR: &str = "WSP_TEST_CONTAINMENT";

pub(super) use pidns::NamespacePlan;

/// The best mode this process can use, found by trying each once (later calls return the
/// same answer). Finding that cgroups work makes this process's cgroup subtree, which kills
/// and removes what dead servers left: a server calls this as it starts.
pub fn containment_mode() -> ContainmentMode {
    static MODE: OnceLock<ContainmentMode> = OnceLock::new();
    *MODE.get_or_init(|| {
        if let Some(mode) = forced_mode() {
            return mode;
        }
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

/// The mode [`TEST_CONTAINMENT_VAR`] names, if it names one.
fn forced_mode() -> Option<ContainmentMode> {
    let forced = std::env::var(TEST_CONTAINMENT_VAR).ok()?;
    let mode = match forced.as_str() {
        "cgroup" => ContainmentMode::Cgroup,
        "pid-namespace" => ContainmentMode::PidNamespace {
            user_namespace: false,
        },
        "pid-namespace-user" => ContainmentMode::PidNamespace {
            user_namespace: true,
        },
        "process-group" => ContainmentMode::ProcessGroup,
        other => {
            tracing::warn!(
                value = other,
                "{TEST_CONTAINMENT_VAR} names no containment mode"
            );
            return None;
        }
    };
    tracing::info!(
        mode = mode.as_str(),
        "containment mode forced by {TEST_CONTAINMENT_VAR}"
    );
    Some(mode)
}

/// How `limits.processes` is enforced for commands in this process's best mode
/// ([`containment_mode`]).
pub fn process_limit() -> ProcessLimit {
    pids::Mechanism::for_mode(containment_mode()).public()
}

/// Why a containment could not be prepared.
#[derive(Debug)]
pub(super) enum PrepareError {
    /// `limits.processes` was asked for and cannot be enforced in this mode.
    ProcessLimitUnavailable(String),
    /// The cgroups could not be made.
    Io(io::Error),
}

/// How long [`Containment::finish`] waits for a killed cgroup to empty before leaving its
/// removal to a background thread.
const EMPTY_WAIT: Duration = Duration::from_secs(5);

/// One command's containment, from before its spawn until it is dropped. Dropping it kills
/// whatever is still inside.
#[derive(Debug)]
pub(super) struct Containment {
    cgroup: Option<Arc<cgroup::ExecCgroup>>,
    v1_pids: Option<pids::V1PidsCgroup>,
    namespace: Option<NamespacePlan>,
    rlimit_processes: bool,
    live: registry::Registration,
}

impl Containment {
    /// Prepares a containment of `mode` that holds the command to `processes` tasks (cgroups
    /// are created here) and registers it.
    pub(super) fn prepare(
        mode: ContainmentMode,
        processes: Option<u64>,
    ) -> Result<Self, PrepareError> {
        let mechanism = pids::Mechanism::for_mode(mode);
        if processes.is_some() && mechanism == pids::Mechanism::Unavailable {
            return Err(PrepareError::ProcessLimitUnavailable(format!(
                "`limits.processes` cannot be enforced here: RLIMIT_NPROC does not bind this \
                 server's user (root, or CAP_SYS_ADMIN or CAP_SYS_RESOURCE), and the {} \
                 containment has no pids cgroup",
                mode.as_str()
            )));
        }
        let v2_limit = processes.filter(|_| mechanism == pids::Mechanism::V2);
        let cgroup = match mode {
            ContainmentMode::Cgroup => Some(Arc::new(
                cgroup::ExecCgroup::create(v2_limit).map_err(PrepareError::Io)?,
            )),
            _ => None,
        };
        let v1_pids = match processes.filter(|_| mechanism == pids::Mechanism::V1) {
            Some(processes) => {
                // The forwarder and the init of a PID namespace count too.
                let helpers = match mode {
                    ContainmentMode::PidNamespace { .. } => 2,
                    _ => 0,
                };
                let max = processes.saturating_add(helpers);
                Some(pids::V1PidsCgroup::create(max).map_err(PrepareError::Io)?)
            }
            None => None,
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
            v1_pids,
            namespace,
            rlimit_processes: mechanism == pids::Mechanism::Rlimit,
            live,
        })
    }

    /// The directory of the command's cgroup v2, to start the child in; it is also the first
    /// of [`Containment::cgroup_procs`].
    pub(super) fn cgroup_dir(&self) -> Option<RawFd> {
        self.cgroup.as_deref().map(cgroup::ExecCgroup::dir_fd)
    }

    /// The `cgroup.procs` descriptors the child writes `0` to, to join its cgroups: first its
    /// cgroup v2's (which a child started in it skips), then its v1 `pids` cgroup's.
    pub(super) fn cgroup_procs(&self) -> [Option<RawFd>; 2] {
        [
            self.cgroup.as_deref().map(cgroup::ExecCgroup::procs_fd),
            self.v1_pids.as_ref().map(pids::V1PidsCgroup::procs_fd),
        ]
    }

    /// Whether `limits.processes` is left to `RLIMIT_NPROC` (else a cgroup holds it).
    pub(super) fn rlimit_processes(&self) -> bool {
        self.rlimit_processes
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
    /// it is gone and removes the cgroup (which kills what it moved into the server's cgroup).
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

/// For a server about to exit, once its commands are gone: moves it back to the cgroups it
/// started in and removes its subtrees.
fn dissolve_subtrees() {
    if let Some(subtree) = cgroup::made_subtree() {
        escapees::kill_escapees(subtree);
        subtree.dissolve();
    }
    pids::dissolve_v1();
}
