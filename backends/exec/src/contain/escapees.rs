//! Processes that left their command's cgroup for the server's.
//!
//! Writing a pid into a `cgroup.procs` moves that process, and a command run as root (or by
//! the owner of a delegated subtree) may write its children into the server's own cgroup or
//! into the subtree's top, where its command's `cgroup.kill` no longer reaches. A cgroup
//! namespace would not stop that: the kernel confines moves to the namespace only when the
//! hierarchy is mounted with `nsdelegate`, which the server cannot choose. So the server lives
//! in a leaf of its own ([`super::subtree`]), where nothing but itself and what it starts
//! belongs, and every time a command's containment ends, whatever sits in that leaf or at the
//! subtree's top and does not descend from the server (its parent chain does not lead to the
//! server: the command that moved it has ended) is killed. A moved process of a command still
//! running still descends from the server through that command, and is killed once it ends.
//!
//! This covers the server's own cgroups. A root command can still move a process to any other
//! cgroup of the machine; only the sandbox (whose commands own nothing) prevents that.

use std::path::Path;

use rustix::process::{pidfd_open, pidfd_send_signal, Pid, PidfdFlags, Signal};

use super::hierarchy::has_member;
use super::subtree::Subtree;

/// How many parents are followed at most before a process is taken for a stranger.
const MAX_ANCESTRY: usize = 4096;

/// Kills the processes in `subtree`'s leaf and top that do not descend from this process.
pub(super) fn kill_escapees(subtree: &Subtree) {
    let own = std::process::id();
    for dir in [subtree.leaf(), subtree.dir()] {
        let Ok(members) = std::fs::read_to_string(dir.join("cgroup.procs")) else {
            continue;
        };
        for pid in members
            .lines()
            .filter_map(|line| line.trim().parse::<u32>().ok())
        {
            if pid != own {
                kill_if_stranger(dir, pid, own);
            }
        }
    }
}

/// Kills `pid` if it is still a member of `dir` and does not descend from `own`. The process
/// is pinned by a pidfd first, so that a pid reused meanwhile is never signalled.
fn kill_if_stranger(dir: &Path, pid: u32, own: u32) {
    let Some(raw) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return;
    };
    let Ok(pidfd) = pidfd_open(raw, PidfdFlags::empty()) else {
        return;
    };
    // Checked after pinning: the pinned process is the member, not a later holder of the pid.
    if !has_member(dir, pid) || descends_from(pid, own) {
        return;
    }
    tracing::info!(pid, cgroup = %dir.display(), "killing a process that left its command's cgroup");
    // ESRCH: it died meanwhile.
    let _ = pidfd_send_signal(&pidfd, Signal::KILL);
}

/// Whether following parents from `pid` leads to `ancestor`.
fn descends_from(pid: u32, ancestor: u32) -> bool {
    let mut current = pid;
    for _ in 0..MAX_ANCESTRY {
        match parent_of(current) {
            Some(parent) if parent == ancestor => return true,
            Some(parent) if parent > 1 => current = parent,
            _ => return false,
        }
    }
    false
}

/// The parent pid from `/proc/<pid>/stat` (the fourth field, after the parenthesised name,
/// which may itself hold spaces and parentheses).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::{descends_from, parent_of};

    #[test]
    fn parents_are_read_from_proc() {
        let own = std::process::id();
        assert_eq!(parent_of(own), Some(std::os::unix::process::parent_id()));
        let child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("sleep starts");
        let child = Reaped(child);
        assert!(descends_from(child.0.id(), own));
        assert!(!descends_from(own, child.0.id()));
    }

    struct Reaped(std::process::Child);

    impl Drop for Reaped {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}
