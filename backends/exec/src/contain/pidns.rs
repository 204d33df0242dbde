//! A PID namespace per command, entered between fork and exec.
//!
//! The child the server spawns (the *forwarder*) unshares a PID namespace, then forks its
//! first process, which is the namespace's init. The init forks the command and reaps every
//! process the namespace reparents to it until the command exits; it then reports the
//! command's wait status to the forwarder through a pipe and exits, at which point the kernel
//! kills whatever is left in the namespace. The forwarder ends the same way as the command
//! (the same exit code, or the same signal), so the server sees the command's own status.
//! Killing the forwarder's process group kills the init, and with it the namespace.
//!
//! The forwarder also dies with the server, however the server ends (`SIGKILL` and the OOM
//! killer included): it watches a *lifeline*, a pipe whose write end only the server process
//! holds (every child closes it: the forwarder and the init at once, the command at exec).
//! When the server process is gone the pipe hangs up, and the forwarder kills the init, which
//! takes the namespace with it. A server already gone when the forwarder starts watching is
//! seen the same way, since the pipe is already hung up then. (`PR_SET_PDEATHSIG` would follow
//! the *thread* that forked, which a multithreaded server may end long before itself; the
//! init, forked by the single-threaded forwarder, does use it.)
//!
//! Everything here after `fork` runs in a copy of a multithreaded process: only
//! async-signal-safe calls, no allocation.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

use crate::user_namespace::IdMaps;

/// What the child needs to enter its namespace, prepared before the fork.
#[derive(Debug, Clone)]
pub(crate) struct NamespacePlan {
    /// The id maps, when a user namespace is made too.
    user_maps: Option<IdMaps>,
    /// The read end of the server's lifeline, when it could be made.
    lifeline: Option<RawFd>,
}

/// The read end of this process's lifeline: a pipe whose write end it keeps open, close-on-exec,
/// until it dies.
pub(super) fn lifeline() -> Option<RawFd> {
    static LIFELINE: OnceLock<Option<(OwnedFd, OwnedFd)>> = OnceLock::new();
    LIFELINE
        .get_or_init(|| {
            let mut ends = [0; 2];
            // SAFETY: `ends` is a valid out-array of two descriptors.
            if unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) } == -1 {
                let error = io::Error::last_os_error();
                tracing::warn!(%error, "no lifeline: pid-namespace commands may outlive a crashed server");
                return None;
            }
            // SAFETY: pipe2 just made these two descriptors, owned by nothing else.
            Some(unsafe {
                use std::os::fd::FromRawFd;
                (OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1]))
            })
        })
        .as_ref()
        .map(|(read, _write)| read.as_raw_fd())
}

impl NamespacePlan {
    pub(super) fn new(user_namespace: bool) -> Self {
        let user_maps = user_namespace.then(IdMaps::of_this_process);
        NamespacePlan {
            user_maps,
            lifeline: lifeline(),
        }
    }

    /// Enters a new PID namespace. Returns `Ok` only in the process that goes on to exec the
    /// command; the forwarder and the init never return.
    ///
    /// # Safety
    /// Call only in a freshly forked, single-threaded child, before exec.
    pub(crate) unsafe fn enter(&self) -> io::Result<()> {
        let mut flags = libc::CLONE_NEWPID;
        if self.user_maps.is_some() {
            flags |= libc::CLONE_NEWUSER;
        }
        check(libc::unshare(flags))?;
        if let Some(maps) = &self.user_maps {
            maps.write()?;
        }
        let mut pipe = [0; 2];
        check(libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC))?;
        let [status_read, status_write] = pipe;
        match check(libc::fork())? {
            0 => {}
            init => {
                libc::close(status_write);
                forward(init, status_read, self.lifeline.unwrap_or(-1))
            }
        }
        // The namespace's init: it dies with the forwarder.
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        );
        libc::close(status_read);
        match check(libc::fork())? {
            0 => {
                libc::close(status_write);
                Ok(())
            }
            command => reap(command, status_write),
        }
    }
}

/// Whether a PID namespace (inside a user namespace when `user_namespace`) can be entered:
/// a forked child enters one and exits.
pub(super) fn works(user_namespace: bool) -> bool {
    let plan = NamespacePlan::new(user_namespace);
    // SAFETY: the child runs only `enter` and `_exit`.
    unsafe {
        match libc::fork() {
            0 => {
                let code = if plan.enter().is_ok() { 0 } else { 1 };
                libc::_exit(code)
            }
            -1 => false,
            child => {
                let mut status = 0;
                while libc::waitpid(child, &mut status, 0) == -1
                    && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
                {
                }
                libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
            }
        }
    }
}

fn check(result: libc::c_int) -> io::Result<libc::c_int> {
    if result == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(result)
    }
}

/// Leaves only `keep` open (negative entries are ignored), and every signal at its default
/// action: what the server had installed belongs to the server. The lifeline's write end is
/// closed here too.
pub(super) unsafe fn shed_inheritance(keep: [libc::c_int; 2]) {
    let (low, high) = (keep[0].min(keep[1]), keep[0].max(keep[1]));
    let mut next: libc::c_int = 0;
    for fd in [low, high] {
        if fd < next {
            continue;
        }
        if fd > next {
            libc::syscall(libc::SYS_close_range, next, fd - 1, 0);
        }
        next = fd + 1;
    }
    libc::syscall(libc::SYS_close_range, next, libc::c_uint::MAX, 0);
    for signal in 1..libc::SIGRTMAX() {
        libc::signal(signal, libc::SIG_DFL);
    }
}

/// The forwarder: waits for the init, then ends the way the command ended; or, should the
/// server die first, kills the init (and with it the namespace) and dies.
unsafe fn forward(init: libc::pid_t, status_read: libc::c_int, lifeline: libc::c_int) -> ! {
    shed_inheritance([status_read, lifeline]);
    let mut reported: libc::c_int = 0;
    let mut filled = 0usize;
    let size = std::mem::size_of::<libc::c_int>();
    while filled < size {
        let mut watched = [
            libc::pollfd {
                fd: status_read,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: lifeline,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        if libc::poll(watched.as_mut_ptr(), 2, -1) == -1 {
            if *libc::__errno_location() == libc::EINTR {
                continue;
            }
            break;
        }
        if watched[1].revents != 0 {
            // The write end only the server held is closed: the server is gone.
            libc::kill(init, libc::SIGKILL);
            while libc::waitpid(init, std::ptr::null_mut(), 0) == -1
                && *libc::__errno_location() == libc::EINTR
            {}
            libc::_exit(128 + libc::SIGKILL)
        }
        if watched[0].revents == 0 {
            continue;
        }
        let read = libc::read(
            status_read,
            (&mut reported as *mut libc::c_int)
                .cast::<u8>()
                .add(filled)
                .cast(),
            size - filled,
        );
        if read > 0 {
            filled += read as usize;
        } else if read == 0 || *libc::__errno_location() != libc::EINTR {
            break;
        }
    }
    let mut init_status = 0;
    while libc::waitpid(init, &mut init_status, 0) == -1 && *libc::__errno_location() == libc::EINTR
    {
    }
    let status = if filled == size {
        reported
    } else {
        init_status
    };
    if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        let no_core = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &no_core);
        libc::signal(signal, libc::SIG_DFL);
        libc::kill(libc::getpid(), signal);
        libc::_exit(128 + signal)
    }
    libc::_exit(if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        1
    })
}

/// The init: reaps everything until the command exits, reports its status, and exits (which
/// kills the rest of the namespace).
unsafe fn reap(command: libc::pid_t, status_write: libc::c_int) -> ! {
    shed_inheritance([status_write, -1]);
    loop {
        let mut status = 0;
        let reaped = libc::waitpid(-1, &mut status, 0);
        if reaped == command {
            libc::write(
                status_write,
                (&status as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>(),
            );
            libc::_exit(0)
        }
        if reaped == -1 && *libc::__errno_location() != libc::EINTR {
            libc::_exit(1)
        }
    }
}
