//! A started child: waited for through its pidfd, and killed and reaped if it is dropped
//! before it was waited for.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use rustix::process::{WaitId, WaitIdOptions, WaitIdStatus};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

use super::Started;

impl Started {
    /// Waits for the child to exit, blocking the thread (for a child that exits at once).
    pub(super) fn reap_blocking(self) {
        let _ = wait_blocking(self.pid);
    }

    /// Kills the child and reaps it, blocking the thread.
    pub(super) fn kill_and_reap(self) {
        // SAFETY: the pid is this process's unreaped child.
        unsafe { libc::kill(self.pid, libc::SIGKILL) };
        self.reap_blocking();
    }
}

/// A running child of this process.
#[derive(Debug)]
pub(crate) struct ChildProcess {
    pid: libc::pid_t,
    /// Readable once the child exited; `None` on kernels without pidfds.
    pidfd: Option<AsyncFd<OwnedFd>>,
    status: Option<ExitStatus>,
}

impl ChildProcess {
    /// Takes over `started`; call inside the runtime. Should the pidfd not register, the
    /// child is killed and reaped.
    pub(crate) fn new(started: Started) -> io::Result<Self> {
        let pidfd = match started.pidfd {
            // SAFETY: the `OwnedFd` owns its descriptor for as long as the `AsyncFd` holds it.
            Some(pidfd) => {
                match unsafe { AsyncFd::register_with_interest(pidfd, Interest::READABLE) } {
                    Ok(pidfd) => Some(pidfd),
                    Err(error) => {
                        let (pidfd, error) = error.into_parts();
                        let pidfd = Some(pidfd);
                        Started { pidfd, ..started }.kill_and_reap();
                        return Err(error);
                    }
                }
            }
            None => None,
        };
        Ok(ChildProcess {
            pid: started.pid,
            pidfd,
            status: None,
        })
    }

    /// The child's pid.
    pub(crate) fn id(&self) -> u32 {
        self.pid as u32
    }

    /// Waits for the child to exit and reaps it.
    pub(crate) async fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        let status = match &self.pidfd {
            Some(pidfd) => wait_exit(pidfd).await?,
            None => {
                let pid = self.pid;
                tokio::task::spawn_blocking(move || wait_blocking(pid))
                    .await
                    .map_err(io::Error::other)??
            }
        };
        self.status = Some(status);
        Ok(status)
    }
}

impl Drop for ChildProcess {
    /// A child still running is killed, and reaped in the background.
    fn drop(&mut self) {
        if self.status.is_some() {
            return;
        }
        // SAFETY: the pid is this process's unreaped child, so it names no other process.
        unsafe { libc::kill(self.pid, libc::SIGKILL) };
        let pid = self.pid;
        match (self.pidfd.take(), tokio::runtime::Handle::try_current()) {
            (Some(pidfd), Ok(runtime)) => {
                runtime.spawn(async move {
                    if let Err(error) = wait_exit(&pidfd).await {
                        tracing::warn!(%error, pid, "cannot reap a killed command");
                    }
                });
            }
            _ => {
                let reaper = std::thread::Builder::new()
                    .name("wsp-reaper".into())
                    .spawn(move || wait_blocking(pid));
                if let Err(error) = reaper {
                    tracing::warn!(%error, pid, "cannot reap a killed command; it stays a zombie");
                }
            }
        }
    }
}

/// Waits until the child of `pidfd` exits, and reaps it.
async fn wait_exit(pidfd: &AsyncFd<OwnedFd>) -> io::Result<ExitStatus> {
    loop {
        let mut ready = pidfd.readable().await?;
        let id = WaitId::PidFd(pidfd.get_ref().as_fd());
        match rustix::process::waitid(id, WaitIdOptions::EXITED | WaitIdOptions::NOHANG) {
            Ok(Some(status)) => return Ok(exit_status(status)),
            Ok(None) => ready.clear_ready(),
            Err(rustix::io::Errno::INTR) => {}
            Err(error) => return Err(error.into()),
        }
    }
}

/// Waits for the child `pid` of this process to exit and reaps it, blocking the thread.
pub(crate) fn wait_blocking(pid: libc::pid_t) -> io::Result<ExitStatus> {
    let pid = rustix::process::Pid::from_raw(pid)
        .ok_or_else(|| io::Error::other("a child's pid is not positive"))?;
    loop {
        match rustix::process::waitid(WaitId::Pid(pid), WaitIdOptions::EXITED) {
            Err(rustix::io::Errno::INTR) => {}
            Ok(Some(status)) => return Ok(exit_status(status)),
            Ok(None) => return Err(io::Error::other("waitid returned no status")),
            Err(error) => return Err(error.into()),
        }
    }
}

/// The status as `waitpid` encodes it, which [`ExitStatus`] wraps.
fn exit_status(status: WaitIdStatus) -> ExitStatus {
    let raw = match (status.exit_status(), status.terminating_signal()) {
        (Some(code), _) => (code & 0xff) << 8,
        (None, Some(signal)) if status.dumped() => signal | 0x80,
        (None, Some(signal)) => signal,
        (None, None) => 0,
    };
    ExitStatus::from_raw(raw)
}
