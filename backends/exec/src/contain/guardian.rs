//! The guardian: kills the commands of a server that dies without cleaning up (`SIGKILL`, the
//! OOM killer), at once rather than when the next server starts.
//!
//! In `cgroup` mode the commands are the server's own children, and nothing in the kernel kills
//! them when it dies. So, once the server has made its v2 subtree, it forks a guardian: a
//! process that keeps only two descriptors, the read end of the server's lifeline (a pipe whose
//! write end only the server holds, see [`super::pidns`]) and the subtree's `cgroup.kill`, and
//! waits. When the lifeline hangs up, the server is gone, and the guardian writes `1` to
//! `cgroup.kill`, which kills every process of every command (and the guardian itself, which
//! lives in the server's leaf). A server that exits in order stops its guardian first, since a
//! cgroup with a process in it can't be removed.
//!
//! The guardian is forked as the server starts, while its memory is small: the pages it shares
//! with the server stay with it as the server changes them.
//!
//! Everything here after `fork` runs in a copy of a multithreaded process: only
//! async-signal-safe calls, no allocation.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicI32, Ordering};

use rustix::fs::{Mode, OFlags};

use super::pidns::{lifeline, shed_inheritance};

/// The name the guardian shows in `ps` (at most 15 bytes and a NUL).
const NAME: &[u8] = b"wsp-guardian\0";

/// A running guardian of the subtree `dir`.
#[derive(Debug)]
pub(super) struct Guardian {
    /// Its pid; 0 once stopped.
    pid: AtomicI32,
}

impl Guardian {
    /// Forks the guardian of the subtree `dir`.
    pub(super) fn start(dir: &Path) -> io::Result<Guardian> {
        let lifeline = lifeline().ok_or_else(|| io::Error::other("no lifeline"))?;
        // Closed in this process on return; the guardian keeps its copy.
        let kill_file: OwnedFd = rustix::fs::open(
            dir.join("cgroup.kill"),
            OFlags::WRONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let kill = kill_file.as_raw_fd();
        // SAFETY: the child runs only `watch`, which makes async-signal-safe calls and never
        // returns.
        match unsafe { libc::fork() } {
            -1 => Err(io::Error::last_os_error()),
            // SAFETY: in the freshly forked child.
            0 => unsafe { watch(lifeline, kill) },
            pid => Ok(Guardian {
                pid: AtomicI32::new(pid),
            }),
        }
    }

    /// Kills the guardian and reaps it, for a server about to exit in order. Later calls do
    /// nothing.
    pub(super) fn stop(&self) {
        let pid = self.pid.swap(0, Ordering::SeqCst);
        if pid <= 0 {
            return;
        }
        // SAFETY: `pid` is this process's child, not yet reaped (only this call reaps it).
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            while libc::waitpid(pid, std::ptr::null_mut(), 0) == -1
                && *libc::__errno_location() == libc::EINTR
            {}
        }
    }
}

/// The guardian's life: waits until the lifeline hangs up, then kills the subtree.
///
/// # Safety
/// Call only in a freshly forked child, with `lifeline` the read end of the server's lifeline
/// and `kill` the subtree's open `cgroup.kill`; it never returns.
unsafe fn watch(lifeline: libc::c_int, kill: libc::c_int) -> ! {
    shed_inheritance([lifeline, kill]);
    // A terminal's ^C or hang-up, and a SIGTERM sent to the whole process group or cgroup, are
    // for the server: it drains, then stops the guardian itself. Until then it guards.
    for signal in [libc::SIGINT, libc::SIGHUP, libc::SIGTERM] {
        libc::signal(signal, libc::SIG_IGN);
    }
    libc::prctl(libc::PR_SET_NAME, NAME.as_ptr() as libc::c_ulong, 0, 0, 0);
    loop {
        let mut watched = libc::pollfd {
            fd: lifeline,
            events: libc::POLLIN,
            revents: 0,
        };
        if libc::poll(&mut watched, 1, -1) == -1 {
            if *libc::__errno_location() == libc::EINTR {
                continue;
            }
            // Watching cannot go on; the server may well be alive, so nothing is killed.
            libc::_exit(1)
        }
        // Nothing is ever written to the lifeline: a wake-up is its hang-up (POLLHUP, with
        // POLLIN for the end of file).
        if watched.revents & (libc::POLLHUP | libc::POLLIN | libc::POLLERR) != 0 {
            break;
        }
    }
    // Kills every process of every command, and this one (it lives in the server's leaf).
    libc::write(kill, b"1".as_ptr().cast(), 1);
    libc::_exit(0)
}
