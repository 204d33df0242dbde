//! The server's own subtree of a cgroup hierarchy, and the removal of dead servers' subtrees.
//!
//! ```text
//! <home>/                  the cgroup this process started in
//! <home>/wsp-<pid>/        this process's subtree
//! <home>/wsp-<pid>/server/ this process itself, moved here when the subtree is made
//! <home>/wsp-<pid>/<n>/    one cgroup per command
//! ```
//!
//! Living in a leaf of its own keeps the server's `cgroup.procs` from being its commands'
//! parent (see [`super::escapees`]).
//!
//! Which subtrees belong to dead servers is told without trusting a pid: a server holds an
//! exclusive `flock` on its subtree's directory from before it moves in until it dies, when
//! the kernel releases it, and a subtree whose lock can be taken belongs to no live server.
//! A reused pid changes nothing, and neither does a server that is still making its subtree:
//! the sweeper that takes the lock first removes the directory, and the server, finding its
//! directory gone once it holds the lock, makes it again. (The flat `wsp-<pid>-<n>` cgroups of
//! earlier versions, which have no lock, count as alive while `<pid>` is a member of `<home>`.)
//!
//! A server that dies without dissolving its subtree has its commands killed at once by its
//! guardian (module [`super::guardian`]), in v2.
//!
//! At start, before making its own subtree, a server kills (`cgroup.kill`) every process left
//! in a dead server's subtree, waits until it is empty and removes it. In the v1 `pids`
//! hierarchy, which has nothing to kill with, the dead subtrees are only removed; their
//! processes are those of the v2 or PID-namespace containment, which kills them.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rustix::fs::{flock, FlockOperation, Mode, OFlags};

use super::guardian::Guardian;
use super::hierarchy::{has_member, lists, Kind};
use crate::dir_lock::{lock_if_unheld, open_dir, still_at};
use crate::remove_tree::remove_cgroup_tree;

/// Prefix of the subtrees this crate creates.
const PREFIX: &str = "wsp-";

/// The leaf the server moves itself into.
const LEAF: &str = "server";

/// How long a start waits, in all, for dead servers' killed processes to be gone.
const SWEEP_WAIT: Duration = Duration::from_secs(5);

/// How often making the subtree is tried when sweepers keep removing it first.
const ATTEMPTS: usize = 8;

/// This process's subtree in one hierarchy.
#[derive(Debug)]
pub(super) struct Subtree {
    kind: Kind,
    home: PathBuf,
    dir: PathBuf,
    leaf: PathBuf,
    /// Kills the subtree should this process die without dissolving it (v2 only).
    guardian: Option<Guardian>,
    /// The subtree's directory, locked exclusively while this process lives.
    _lock: OwnedFd,
}

impl Subtree {
    /// Removes dead servers' subtrees under `home`, then makes this process's own and moves
    /// this process into its leaf. In v2, the `pids` controller is enabled for the commands'
    /// cgroups where `home` can delegate it.
    pub(super) fn establish(kind: Kind, home: PathBuf) -> io::Result<Subtree> {
        sweep_dead(kind, &home);
        let pid = std::process::id();
        let dir = home.join(format!("{PREFIX}{pid}"));
        let leaf = dir.join(LEAF);
        let lock = lock_own(&dir)?;
        match std::fs::create_dir(&leaf) {
            Ok(()) => {}
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
            Err(error) => return Err(error),
        }
        if let Err(error) = std::fs::write(leaf.join("cgroup.procs"), pid.to_string()) {
            let _ = remove_cgroup_tree(&dir);
            return Err(error);
        }
        let mut guardian = None;
        if kind == Kind::V2 {
            enable_pids(&home, &dir);
            guardian = Guardian::start(&dir)
                .inspect_err(|error| {
                    tracing::warn!(%error, "no guardian: commands may outlive a crashed server until the next one starts");
                })
                .ok();
        }
        Ok(Subtree {
            kind,
            home,
            dir,
            leaf,
            guardian,
            _lock: lock,
        })
    }

    /// `<home>/wsp-<pid>`: where the commands' cgroups are made.
    pub(super) fn dir(&self) -> &Path {
        &self.dir
    }

    /// `<home>/wsp-<pid>/server`: this process's own cgroup.
    pub(super) fn leaf(&self) -> &Path {
        &self.leaf
    }

    /// Whether the commands' cgroups have `pids.max`.
    pub(super) fn limits_pids(&self) -> bool {
        self.kind == Kind::V1Pids || lists(&self.dir, "cgroup.subtree_control", "pids")
    }

    /// Moves this process back where it started and removes the subtree (whose commands must
    /// be gone): for a server about to exit. What cannot be done stays for the next server's
    /// sweep.
    pub(super) fn dissolve(&self) {
        if let Some(guardian) = &self.guardian {
            guardian.stop();
        }
        let pid = std::process::id().to_string();
        if std::fs::write(self.home.join("cgroup.procs"), pid).is_ok() {
            let _ = remove_cgroup_tree(&self.dir);
        }
    }
}

/// Makes `dir` and takes its lock; retried while a sweeper removes it first.
fn lock_own(dir: &Path) -> io::Result<OwnedFd> {
    let mut last = None;
    for _ in 0..ATTEMPTS {
        match std::fs::create_dir(dir) {
            Ok(()) => {}
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
            Err(error) => return Err(error),
        }
        let lock = match open_dir(dir) {
            Ok(lock) => lock,
            Err(error) => {
                last = Some(error);
                continue;
            }
        };
        // Held only briefly by a sweeper that found it unlocked before this process locked it.
        flock(&lock, FlockOperation::LockExclusive)?;
        if still_at(&lock, dir)? {
            return Ok(lock);
        }
        // Removed (and maybe made again) by a sweeper meanwhile.
        last = Some(io::Error::other("the subtree was removed while being made"));
    }
    Err(last.unwrap_or_else(|| io::Error::other("cannot make the subtree")))
}

/// Enables `pids` in `home` (possible once this process left it, when nothing else is in it,
/// or when it is the root) and then in `dir`, for the commands' cgroups. Failing leaves the
/// commands without `pids.max`.
fn enable_pids(home: &Path, dir: &Path) {
    if lists(home, "cgroup.controllers", "pids") && !lists(home, "cgroup.subtree_control", "pids") {
        let _ = std::fs::write(home.join("cgroup.subtree_control"), "+pids");
    }
    if lists(dir, "cgroup.controllers", "pids") {
        let _ = std::fs::write(dir.join("cgroup.subtree_control"), "+pids");
    }
}

/// Whose subtree an entry of `<home>` is.
enum Owner {
    /// `wsp-<pid>`.
    Subtree,
    /// `wsp-<pid>-<n>`, the layout of earlier versions.
    Flat(u32),
}

fn owner(name: &str) -> Option<Owner> {
    let rest = name.strip_prefix(PREFIX)?;
    match rest.split_once('-') {
        None => rest.parse::<u32>().ok().map(|_| Owner::Subtree),
        Some((pid, n)) => {
            n.parse::<u64>().ok()?;
            pid.parse().ok().map(Owner::Flat)
        }
    }
}

/// Kills what dead servers left under `home` and removes their cgroups.
fn sweep_dead(kind: Kind, home: &Path) {
    let Ok(entries) = std::fs::read_dir(home) else {
        return;
    };
    // Each dead subtree with its lock, held until it is removed.
    let dead: Vec<(PathBuf, Option<OwnedFd>)> = entries
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
        .filter_map(|entry| {
            let path = entry.path();
            match owner(entry.file_name().to_str()?)? {
                Owner::Subtree => {
                    // Held: a live server's (or a sweeper's, which removes it).
                    let lock = lock_if_unheld(&path)?;
                    Some((path, Some(lock)))
                }
                Owner::Flat(pid) => (!has_member(home, pid)).then_some((path, None)),
            }
        })
        .collect();
    if kind == Kind::V2 {
        for (dir, _) in &dead {
            // Kills every process in it and below it; fails only once it is gone.
            let _ = std::fs::write(dir.join("cgroup.kill"), "1");
        }
    }
    let deadline = Instant::now() + SWEEP_WAIT;
    for (dir, _lock) in dead {
        if kind == Kind::V2 && !wait_empty(&dir, deadline) {
            tracing::warn!(dir = %dir.display(), "a dead server's killed commands are still dying; their cgroup stays");
            continue;
        }
        match remove_cgroup_tree(&dir) {
            Ok(()) => tracing::info!(dir = %dir.display(), "removed the cgroup of a dead server"),
            Err(error) => {
                tracing::warn!(dir = %dir.display(), %error, "cannot remove the cgroup of a dead server")
            }
        }
    }
}

/// Waits until the v2 cgroup `dir` has no process in it or below it, until `deadline`.
pub(super) fn wait_empty(dir: &Path, deadline: Instant) -> bool {
    let Ok(events) = rustix::fs::open(
        dir.join("cgroup.events"),
        OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        // Gone already.
        return true;
    };
    wait_events_empty(&events, deadline)
}

/// Waits on an open `cgroup.events` until it says `populated 0`, until `deadline`; `false`
/// on timeout or error.
pub(super) fn wait_events_empty(events: &OwnedFd, deadline: Instant) -> bool {
    loop {
        match populated(events) {
            Ok(false) => return true,
            Ok(true) => {}
            Err(_) => return false,
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        let mut poll = libc::pollfd {
            fd: events.as_raw_fd(),
            events: libc::POLLPRI,
            revents: 0,
        };
        let millis = libc::c_int::try_from(left.as_millis().max(1)).unwrap_or(i32::MAX);
        // SAFETY: one valid pollfd. cgroup.events signals each change as POLLPRI.
        unsafe { libc::poll(&mut poll, 1, millis) };
    }
}

/// Whether the cgroup of an open `cgroup.events` has any process in it or below it.
pub(super) fn populated(events: &OwnedFd) -> io::Result<bool> {
    let mut buffer = [0u8; 256];
    let read = rustix::io::pread(events, &mut buffer, 0)?;
    let text = std::str::from_utf8(&buffer[..read]).unwrap_or("");
    Ok(!text.lines().any(|line| line.trim() == "populated 0"))
}

#[cfg(test)]
mod tests {
    use super::{owner, Owner};

    #[test]
    fn names_of_subtrees_and_flat_cgroups() {
        assert!(matches!(owner("wsp-42"), Some(Owner::Subtree)));
        assert!(matches!(owner("wsp-42-7"), Some(Owner::Flat(42))));
        for other in ["wsp-", "wsp-x", "wsp-42-x", "other-42", "wsp-42-7-1"] {
            assert!(owner(other).is_none(), "{other}");
        }
    }
}
