//! What the child does between fork and exec: join its containment, enter its sandbox's
//! namespaces, its working directory, take its resource limits, and restrict itself to its
//! sandbox's rules last (nothing after that needs a right the rules may not grant).

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{BorrowedFd, RawFd};

use rustix::process::{Resource, Rlimit};

use super::contain::NamespacePlan;
use super::sandbox::ChildSandbox;

/// Everything the child needs, prepared before the fork so that nothing is allocated after it.
#[derive(Debug, Default)]
pub(super) struct ChildSetup {
    /// `cgroup.procs` of the cgroups the child joins: its containment's (unless it was started
    /// inside it), its v1 `pids` cgroup's.
    pub(super) cgroup_procs: [Option<RawFd>; 2],
    /// The PID namespace to enter.
    pub(super) namespace: Option<NamespacePlan>,
    /// The working directory, as an open directory.
    pub(super) cwd: Option<RawFd>,
    /// The working directory's path, entered by path inside a sandbox's mount namespace (the
    /// open directory belongs to the host's mounts), and checked to be the same directory.
    pub(super) cwd_path: Option<CString>,
    /// Stdin is the null device (a sandbox opens it again inside its namespace).
    pub(super) null_stdin: bool,
    /// The child's stdin is a terminal's slave, to become its controlling terminal in a
    /// session of its own.
    pub(super) pty_session: bool,
    /// Resource limits, soft and hard alike.
    pub(super) limits: Vec<(Resource, u64)>,
    /// The sandbox: its user and network namespaces are entered before the PID namespace
    /// (which then nests inside them), its rules enforced after everything else.
    pub(super) sandbox: Option<ChildSandbox>,
}

impl ChildSetup {
    /// Runs the setup in the child.
    ///
    /// # Safety
    /// Call only between fork and exec (as a `pre_exec` hook): every step is a plain system
    /// call, or a fork that only the exec'ing process returns from.
    pub(super) unsafe fn apply(&mut self) -> io::Result<()> {
        for procs in self.cgroup_procs.into_iter().flatten() {
            // Writing 0 moves the writer itself, before it can start anything.
            if libc::write(procs, b"0".as_ptr().cast(), 1) != 1 {
                return Err(io::Error::last_os_error());
            }
        }
        if let Some(sandbox) = &self.sandbox {
            sandbox.enter_namespaces()?;
        }
        if let Some(namespace) = &self.namespace {
            namespace.enter()?;
        }
        if self.pty_session {
            // The command itself (not a PID namespace's forwarder, which keeps its own process
            // group outside the terminal's session, so the terminal's Ctrl-C never reaches
            // it) leads a new session, whose controlling terminal is its stdin.
            rustix::process::setsid()?;
            rustix::process::ioctl_tiocsctty(BorrowedFd::borrow_raw(0))?;
        }
        if let Some(sandbox) = &self.sandbox {
            sandbox.confine_mounts(self.null_stdin)?;
        }
        if let Some(cwd) = self.cwd {
            let cwd = BorrowedFd::borrow_raw(cwd);
            match &self.cwd_path {
                Some(path) => enter_same_directory(path, cwd)?,
                None => rustix::process::fchdir(cwd)?,
            }
        }
        for &(resource, value) in &self.limits {
            rustix::process::setrlimit(
                resource,
                Rlimit {
                    current: Some(value),
                    maximum: Some(value),
                },
            )?;
        }
        if let Some(sandbox) = &mut self.sandbox {
            sandbox.restrict()?;
        }
        Ok(())
    }
}

/// Enters `path`, which must be the directory `expected` is open on (the same device and
/// inode): a directory swapped in at that path since it was resolved is refused.
fn enter_same_directory(path: &CStr, expected: BorrowedFd<'_>) -> io::Result<()> {
    rustix::process::chdir(path)?;
    let entered = rustix::fs::stat(c".")?;
    let wanted = rustix::fs::fstat(expected)?;
    if entered.st_dev != wanted.st_dev || entered.st_ino != wanted.st_ino {
        return Err(io::Error::from_raw_os_error(libc::ESTALE));
    }
    Ok(())
}
