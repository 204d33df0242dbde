//! What a sandboxed child does between fork and exec: enter its namespaces (user, mount, IPC,
//! and network unless the run may use the network), make every mount read-only but the
//! writable trees, and, last, restrict itself with the ruleset the parent built.
//!
//! Everything here runs in a copy of a multithreaded process: plain system calls only, no
//! allocation. A step that fails reports itself through a close-on-exec pipe before the
//! spawn fails, so that the parent can answer `sandbox-unavailable` with the reason.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

use super::mounts::{reopen_null_stdin, MountPlan};
use super::seccomp;
use crate::user_namespace::IdMaps;

use landlock::{RestrictSelfError, RulesetCreated, RulesetError, RulesetStatus};

/// The step of the child's sandboxing that failed, as reported through the pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
enum Step {
    Namespaces = 1,
    Restrict = 2,
    NotEnforced = 3,
    Mounts = 4,
    Seccomp = 5,
}

/// The child's half of a sandbox, prepared before the fork.
#[derive(Debug)]
pub(crate) struct ChildSandbox {
    id_maps: IdMaps,
    network: bool,
    mounts: MountPlan,
    ruleset: Option<RulesetCreated>,
    filter: seccomp::Filter,
    report: OwnedFd,
}

impl ChildSandbox {
    /// A child that maps this process's own uid and gid to themselves in its user namespace,
    /// keeps only `writable` writable (every other mount read-only), keeps the host's network
    /// when `network` (else a network namespace of its own), then enforces `ruleset`,
    /// reporting failures to `report`.
    pub(super) fn new(
        ruleset: RulesetCreated,
        writable: &[&Path],
        network: bool,
        report: OwnedFd,
    ) -> io::Result<Self> {
        Ok(ChildSandbox {
            id_maps: IdMaps::of_this_process(),
            network,
            mounts: MountPlan::new(writable)?,
            ruleset: Some(ruleset),
            filter: seccomp::Filter::new(),
            report,
        })
    }

    /// Unshares the user, mount and IPC namespaces (and the network namespace unless the run
    /// keeps the network), and maps the ids.
    ///
    /// # Safety
    /// Call only in a freshly forked, single-threaded child, before exec.
    pub(crate) unsafe fn enter_namespaces(&self) -> io::Result<()> {
        let entered = self.unshare_and_map();
        if let Err(error) = &entered {
            self.report(Step::Namespaces, error.raw_os_error().unwrap_or(0));
        }
        entered
    }

    /// Makes every mount but the writable trees read-only (after everything else that writes
    /// to `/proc`). With `reopen_stdin`, stdin (the null device) is opened again inside, so
    /// that no descriptor of a writable host mount is left to the command.
    ///
    /// # Safety
    /// Call only in the child, after [`Self::enter_namespaces`], before exec.
    pub(crate) unsafe fn confine_mounts(&self, reopen_stdin: bool) -> io::Result<()> {
        let mounted = self.mounts.apply().and_then(|()| {
            if reopen_stdin {
                reopen_null_stdin()
            } else {
                Ok(())
            }
        });
        if let Err(error) = &mounted {
            self.report(Step::Mounts, error.raw_os_error().unwrap_or(0));
        }
        mounted
    }

    unsafe fn unshare_and_map(&self) -> io::Result<()> {
        let mut flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWIPC;
        if !self.network {
            flags |= libc::CLONE_NEWNET;
        }
        if libc::unshare(flags) == -1 {
            return Err(io::Error::last_os_error());
        }
        self.id_maps.write()
    }

    /// Enforces the ruleset (with `no_new_privs`), anything short of full enforcement failing,
    /// then the seccomp filter against privileged files.
    ///
    /// # Safety
    /// Call only in a freshly forked, single-threaded child, before exec, once.
    pub(crate) unsafe fn restrict(&mut self) -> io::Result<()> {
        let Some(ruleset) = self.ruleset.take() else {
            self.report(Step::Restrict, libc::EINVAL);
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        };
        match ruleset.restrict_self() {
            Ok(status) if status.ruleset == RulesetStatus::FullyEnforced && status.no_new_privs => {
                let filtered = self.filter.install();
                if let Err(error) = &filtered {
                    self.report(Step::Seccomp, error.raw_os_error().unwrap_or(0));
                }
                filtered
            }
            Ok(_) => {
                self.report(Step::NotEnforced, 0);
                Err(io::Error::from_raw_os_error(libc::EPERM))
            }
            Err(error) => {
                let errno = match &error {
                    RulesetError::RestrictSelf(
                        RestrictSelfError::RestrictSelfCall { source, .. }
                        | RestrictSelfError::SetNoNewPrivsCall { source, .. },
                    ) => source.raw_os_error().unwrap_or(libc::EPERM),
                    _ => libc::EPERM,
                };
                self.report(Step::Restrict, errno);
                Err(io::Error::from_raw_os_error(errno))
            }
        }
    }

    unsafe fn report(&self, step: Step, errno: i32) {
        let mut message = [0u8; 8];
        message[..4].copy_from_slice(&(step as u32).to_ne_bytes());
        message[4..].copy_from_slice(&errno.to_ne_bytes());
        libc::write(
            self.report.as_raw_fd(),
            message.as_ptr().cast(),
            message.len(),
        );
    }
}

/// A close-on-exec, non-blocking pipe: (read end, write end).
pub(super) fn failure_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut ends = [0; 2];
    // SAFETY: `ends` has room for the two descriptors.
    if unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])) })
}

/// The failure the child reported, if it reported one.
pub(super) fn read_failure(failures: &OwnedFd) -> Option<String> {
    let mut message = [0u8; 8];
    // SAFETY: `message` is a valid buffer of its length.
    let read = unsafe {
        libc::read(
            failures.as_raw_fd(),
            message.as_mut_ptr().cast(),
            message.len(),
        )
    };
    if read != 8 {
        return None;
    }
    let step = u32::from_ne_bytes([message[0], message[1], message[2], message[3]]);
    let errno = i32::from_ne_bytes([message[4], message[5], message[6], message[7]]);
    let error = io::Error::from_raw_os_error(errno);
    Some(match step {
        s if s == Step::Namespaces as u32 => {
            format!("cannot enter new user, mount, IPC and network namespaces: {error}")
        }
        s if s == Step::Mounts as u32 => {
            format!("cannot make the system read-only around the writable trees: {error}")
        }
        s if s == Step::Seccomp as u32 => {
            format!("cannot install the seccomp filter against setuid files: {error}")
        }
        s if s == Step::NotEnforced as u32 => {
            "Landlock did not enforce the whole ruleset".to_owned()
        }
        _ => format!("Landlock cannot restrict the command: {error}"),
    })
}
