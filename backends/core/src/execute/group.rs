//! Killing a child's whole process group, at the latest when the guard is dropped.

use rustix::process::{kill_process_group, Pid, Signal};

/// Kills the process group led by a child with `SIGKILL`, once: on [`GroupKill::kill`] or
/// when dropped, whichever comes first.
///
/// The group id is the leader's pid. The kernel keeps that number reserved while any process
/// of the group is alive, so killing the group after the leader was reaped still reaches its
/// leftovers and nothing else.
#[derive(Debug)]
pub(super) struct GroupKill {
    group: Option<Pid>,
}

impl GroupKill {
    /// A guard for the group led by the process `leader` (`None`: nothing to kill).
    pub(super) fn new(leader: Option<u32>) -> Self {
        let group = leader
            .and_then(|pid| i32::try_from(pid).ok())
            .and_then(Pid::from_raw);
        GroupKill { group }
    }

    /// Kills every process still in the group; later calls and the drop do nothing.
    pub(super) fn kill(&mut self) {
        if let Some(group) = self.group.take() {
            // ESRCH (the group is already empty) is the expected outcome when the command
            // left nothing behind.
            let _ = kill_process_group(group, Signal::KILL);
        }
    }
}

impl Drop for GroupKill {
    fn drop(&mut self) {
        self.kill();
    }
}
