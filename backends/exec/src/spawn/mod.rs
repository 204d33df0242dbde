//! Starting a command: a spawn of wsp's own, so that a command in a cgroup is started inside
//! it (`clone3` with `CLONE_INTO_CGROUP`) instead of moving itself there between fork and exec.
//!
//! The move costs the kernel a wait for an RCU grace period whenever no other move happened
//! shortly before (7–20 ms measured here against 1.5 ms for a start inside the cgroup), and
//! every command paid it. Where `clone3` is refused (a kernel before 5.7, or a seccomp filter
//! that answers `ENOSYS`), or for a command with no cgroup, the child is forked and joins its
//! cgroups itself, as before.
//!
//! Either way the child gets a pidfd (module `process`) and, between fork and exec, only makes
//! system calls on what was prepared before the fork: its standard streams, its own process
//! group, default signal handling, then [`ChildSetup::apply`], then `execve`. A failure before
//! the exec reaches the parent as an errno through a close-on-exec pipe.

mod command_line;
mod process;

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::LazyLock;

pub(crate) use command_line::CommandLine;
use command_line::ExecPointers;
pub(crate) use process::{wait_blocking, ChildProcess};

use super::child::ChildSetup;

/// A command ready to start.
pub(crate) struct Launch {
    /// The program, its arguments and its environment.
    pub(crate) command: CommandLine,
    /// The child's stdin, stdout and stderr.
    pub(crate) stdio: [OwnedFd; 3],
    /// The child leads a process group of its own.
    pub(crate) process_group: bool,
    /// The cgroup v2 directory to start the child in.
    pub(crate) cgroup: Option<RawFd>,
    /// Everything else the child does before it execs.
    pub(crate) setup: ChildSetup,
}

/// A child that has exec'd: its pid and, where the kernel has them, its pidfd.
#[derive(Debug)]
pub(crate) struct Started {
    pub(crate) pid: libc::pid_t,
    pub(crate) pidfd: Option<OwnedFd>,
}

/// Set to `fork`, it makes every command start with a fork and join its cgroup itself, as
/// where `clone3` is refused (a switch for tests, read once).
pub const TEST_SPAWN_VAR: &str = "WSP_TEST_SPAWN";

/// Whether `clone3` was refused once (or [`TEST_SPAWN_VAR`] says `fork`): the fork is used
/// from then on.
static CLONE3_REFUSED: LazyLock<AtomicBool> = LazyLock::new(|| {
    let forced = std::env::var_os(TEST_SPAWN_VAR).is_some_and(|value| value == "fork");
    if forced {
        tracing::info!("commands start with a fork, as {TEST_SPAWN_VAR} says");
    }
    AtomicBool::new(forced)
});

impl Launch {
    /// Starts the command and returns once it has exec'd (or failed to). Blocks the thread.
    pub(crate) fn start(mut self) -> io::Result<Started> {
        for fd in &mut self.stdio {
            move_above_stdio(fd)?;
        }
        let (report_read, mut report_write) =
            rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        move_above_stdio(&mut report_write)?;
        let environment = self.command.environment()?;
        let child = ChildSide {
            exec: self.command.exec_pointers(&environment),
            report: report_write.as_raw_fd(),
        };
        let started = match self.cgroup {
            Some(cgroup) if !CLONE3_REFUSED.load(Ordering::Relaxed) => {
                match self.clone_into(cgroup, &child) {
                    Err(error) if clone3_refused(&error) => {
                        CLONE3_REFUSED.store(true, Ordering::Relaxed);
                        tracing::debug!(%error, "clone3 is refused here; children join their cgroup themselves");
                        self.fork(&child)
                    }
                    started => started,
                }
            }
            _ => self.fork(&child),
        }?;
        drop(report_write);
        match read_report(&report_read) {
            Ok(None) => Ok(started),
            Ok(Some(errno)) => {
                started.reap_blocking();
                Err(io::Error::from_raw_os_error(errno))
            }
            Err(error) => {
                started.kill_and_reap();
                Err(error)
            }
        }
    }

    /// `clone3` into the cgroup whose directory is open as `cgroup`, with a pidfd.
    fn clone_into(&mut self, cgroup: RawFd, child: &ChildSide) -> io::Result<Started> {
        let joined = self.setup.cgroup_procs[0].take();
        let mut pidfd: libc::c_int = -1;
        let args = CloneArgs {
            flags: CLONE_PIDFD | CLONE_INTO_CGROUP,
            pidfd: std::ptr::addr_of_mut!(pidfd) as u64,
            exit_signal: libc::SIGCHLD as u64,
            cgroup: cgroup as u64,
            ..CloneArgs::default()
        };
        // SAFETY: a fork in all but name (no CLONE_VM, no new stack); the child runs only
        // `in_child`, which never returns, and `args` outlives the call.
        let pid = unsafe {
            libc::syscall(
                libc::SYS_clone3,
                std::ptr::addr_of!(args),
                std::mem::size_of::<CloneArgs>(),
            )
        };
        match pid {
            -1 => {
                self.setup.cgroup_procs[0] = joined;
                Err(io::Error::last_os_error())
            }
            // SAFETY: in the child, right after the clone.
            0 => unsafe { self.in_child(child) },
            pid => Ok(Started {
                pid: pid as libc::pid_t,
                // SAFETY: the kernel gave this descriptor to this process, and only it.
                pidfd: Some(unsafe { OwnedFd::from_raw_fd(pidfd) }),
            }),
        }
    }

    /// A plain fork; the child joins its cgroups itself. The pidfd is opened after.
    fn fork(&mut self, child: &ChildSide) -> io::Result<Started> {
        // SAFETY: the child runs only `in_child`, which never returns.
        match unsafe { libc::fork() } {
            -1 => Err(io::Error::last_os_error()),
            // SAFETY: in the child, right after the fork.
            0 => unsafe { self.in_child(child) },
            pid => {
                let pidfd = rustix::process::Pid::from_raw(pid).and_then(|pid| {
                    rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
                });
                Ok(Started { pid, pidfd })
            }
        }
    }

    /// The child's side: sets itself up and execs; on failure reports the errno to `report`
    /// and exits with 127.
    ///
    /// # Safety
    /// Call only in the child of a fork or clone: it makes only async-signal-safe system calls
    /// on what was prepared before.
    unsafe fn in_child(&mut self, child: &ChildSide) -> ! {
        let error = match self.prepare_child() {
            Ok(()) => child.exec.exec(),
            Err(error) => error,
        };
        let errno = error.raw_os_error().unwrap_or(libc::EINVAL).to_ne_bytes();
        libc::write(child.report, errno.as_ptr().cast(), errno.len());
        libc::_exit(127)
    }

    /// # Safety
    /// As [`Launch::in_child`].
    unsafe fn prepare_child(&mut self) -> io::Result<()> {
        for (target, fd) in self.stdio.iter().enumerate() {
            // `dup2` leaves the copy open across the exec; the sources are all above 2.
            if libc::dup2(fd.as_raw_fd(), target as RawFd) == -1 {
                return Err(io::Error::last_os_error());
            }
        }
        if self.process_group && libc::setpgid(0, 0) == -1 {
            return Err(io::Error::last_os_error());
        }
        // The server ignores SIGPIPE, and the blocking thread may mask signals: the command
        // starts with neither.
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        if libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut()) != 0
            || libc::signal(libc::SIGPIPE, libc::SIG_DFL) == libc::SIG_ERR
        {
            return Err(io::Error::last_os_error());
        }
        self.setup.apply()
    }
}

/// Whether `clone3` itself is missing or refused, so that a fork may do instead.
fn clone3_refused(error: &io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(libc::ENOSYS | libc::EPERM | libc::E2BIG)
    )
}

/// Reads the child's report: `None` once it exec'd (the pipe closed empty), else its errno.
fn read_report(report: &OwnedFd) -> io::Result<Option<i32>> {
    let mut errno = [0u8; 4];
    let mut filled = 0;
    while filled < errno.len() {
        match rustix::io::read(report, &mut errno[filled..]) {
            Ok(0) if filled == 0 => return Ok(None),
            Ok(0) => return Err(io::Error::other("the child's start report was cut short")),
            Ok(read) => filled += read,
            Err(rustix::io::Errno::INTR) => {}
            Err(error) => return Err(error.into()),
        }
    }
    Ok(Some(i32::from_ne_bytes(errno)))
}

/// Moves `fd` above the standard streams when it is one of them (a server started with a
/// closed stdin gets pipes numbered 0), so that the child's `dup2` onto 0, 1 and 2 never
/// overwrites a source it still needs.
fn move_above_stdio(fd: &mut OwnedFd) -> io::Result<()> {
    if fd.as_raw_fd() <= 2 {
        *fd = rustix::io::fcntl_dupfd_cloexec(&*fd, 3)?;
    }
    Ok(())
}

/// What the child uses after the fork besides the launch: its exec's pointers, and where it
/// reports a failure.
struct ChildSide {
    exec: ExecPointers,
    report: RawFd,
}

const CLONE_PIDFD: u64 = 0x1000;
const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// The kernel's `struct clone_args` (version 2, with `cgroup`).
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
    cgroup: u64,
}
