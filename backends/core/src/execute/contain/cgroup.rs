//! A cgroup v2 per command, under this process's own cgroup.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rustix::fs::{Mode, OFlags};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// How long the background remover waits for one killed cgroup to empty.
const REMOVER_WAIT: Duration = Duration::from_secs(30);

/// Prefix of the cgroups this crate creates: `wsp-<pid>-<n>`.
const PREFIX: &str = "wsp-";

/// The directory of this process's cgroup v2, when the hierarchy is mounted and found.
fn base() -> Option<&'static Path> {
    static BASE: OnceLock<Option<PathBuf>> = OnceLock::new();
    BASE.get_or_init(|| {
        let base = find_own_cgroup()?;
        sweep_stale(&base);
        Some(base)
    })
    .as_deref()
}

/// Whether per-command cgroups work here: one is created, a forked child joins it, and it is
/// removed again.
pub(super) fn available() -> bool {
    let Ok(cgroup) = ExecCgroup::create() else {
        return false;
    };
    let procs = cgroup.procs_fd();
    // SAFETY: the child only calls `write` and `_exit`, both async-signal-safe.
    let joined = unsafe {
        match libc::fork() {
            0 => {
                let ok = libc::write(procs, b"0".as_ptr().cast(), 1) == 1;
                libc::_exit(if ok { 0 } else { 1 })
            }
            -1 => false,
            child => wait_exit_code(child) == Some(0),
        }
    };
    let emptied = cgroup.wait_empty_blocking(Duration::from_secs(1));
    cgroup.remove();
    joined && emptied
}

fn wait_exit_code(pid: libc::pid_t) -> Option<i32> {
    let mut status = 0;
    loop {
        // SAFETY: `status` is a valid out-pointer.
        let reaped = unsafe { libc::waitpid(pid, &mut status, 0) };
        if reaped == pid {
            return libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
        }
        if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return None;
        }
    }
}

/// One command's cgroup.
#[derive(Debug)]
pub(super) struct ExecCgroup {
    dir: PathBuf,
    procs: OwnedFd,
    kill: OwnedFd,
    events: OwnedFd,
    removed: AtomicBool,
}

impl ExecCgroup {
    /// Creates `wsp-<pid>-<n>` under this process's cgroup.
    pub(super) fn create() -> io::Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let base = base().ok_or_else(|| io::Error::other("no cgroup v2 hierarchy was found"))?;
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("{PREFIX}{}-{n}", std::process::id()));
        std::fs::create_dir(&dir)?;
        let open = |name: &str, flags: OFlags| -> io::Result<OwnedFd> {
            Ok(rustix::fs::open(
                dir.join(name),
                flags | OFlags::CLOEXEC,
                Mode::empty(),
            )?)
        };
        let files = (|| {
            Ok::<_, io::Error>((
                open("cgroup.procs", OFlags::WRONLY)?,
                open("cgroup.kill", OFlags::WRONLY)?,
                open("cgroup.events", OFlags::RDONLY)?,
            ))
        })();
        match files {
            Ok((procs, kill, events)) => Ok(ExecCgroup {
                dir,
                procs,
                kill,
                events,
                removed: AtomicBool::new(false),
            }),
            Err(error) => {
                let _ = std::fs::remove_dir(&dir);
                Err(error)
            }
        }
    }

    pub(super) fn procs_fd(&self) -> RawFd {
        self.procs.as_raw_fd()
    }

    /// Sends `SIGKILL` to every process in the cgroup and its descendants.
    pub(super) fn kill(&self) {
        if !self.removed.load(Ordering::Acquire) {
            // Fails only once the cgroup is gone, and then there is nothing to kill.
            let _ = rustix::io::write(&self.kill, b"1");
        }
    }

    /// Whether any process is still in the cgroup or below it.
    fn populated(&self) -> io::Result<bool> {
        let mut buffer = [0u8; 256];
        let read = rustix::io::pread(&self.events, &mut buffer, 0)?;
        let text = std::str::from_utf8(&buffer[..read]).unwrap_or("");
        Ok(!text.lines().any(|line| line.trim() == "populated 0"))
    }

    /// Waits until the cgroup is empty; `Ok(false)` when `bound` passed first.
    pub(super) async fn wait_empty(&self, bound: Duration) -> io::Result<bool> {
        let deadline = tokio::time::Instant::now() + bound;
        // cgroup.events signals each change as an exceptional condition (POLLPRI).
        let events = self.events.try_clone()?;
        // SAFETY: the AsyncFd owns this descriptor and nothing else closes it.
        let events = unsafe { AsyncFd::register_with_interest(events, Interest::PRIORITY) }
            .map_err(io::Error::from)?;
        loop {
            if !self.populated()? {
                return Ok(true);
            }
            match tokio::time::timeout_at(deadline, events.ready(Interest::PRIORITY)).await {
                Ok(guard) => guard?.clear_ready(),
                Err(_) => return Ok(false),
            }
        }
    }

    /// Like [`ExecCgroup::wait_empty`], blocking the thread; `false` on timeout or error.
    pub(super) fn wait_empty_blocking(&self, bound: Duration) -> bool {
        let deadline = Instant::now() + bound;
        loop {
            match self.populated() {
                Ok(false) => return true,
                Ok(true) => {}
                Err(_) => return false,
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            let mut poll = libc::pollfd {
                fd: self.events.as_raw_fd(),
                events: libc::POLLPRI,
                revents: 0,
            };
            let millis = libc::c_int::try_from(left.as_millis().max(1)).unwrap_or(i32::MAX);
            // SAFETY: one valid pollfd.
            unsafe { libc::poll(&mut poll, 1, millis) };
        }
    }

    /// Removes the cgroup (and any cgroups a nested server made below it); it must be empty.
    pub(super) fn remove(&self) {
        if !self.removed.swap(true, Ordering::AcqRel) {
            remove_tree(&self.dir);
        }
    }
}

/// Removes `cgroup` now if it is empty, else from a background thread once it is.
pub(super) fn remove_when_empty(cgroup: Arc<ExecCgroup>) {
    if cgroup.removed.load(Ordering::Acquire) {
        return;
    }
    if let Ok(false) = cgroup.populated() {
        cgroup.remove();
        return;
    }
    static REMOVER: OnceLock<Mutex<mpsc::Sender<Arc<ExecCgroup>>>> = OnceLock::new();
    let sender = REMOVER.get_or_init(|| {
        let (sender, receiver) = mpsc::channel::<Arc<ExecCgroup>>();
        let spawned = std::thread::Builder::new()
            .name("wsp-cgroup-remover".into())
            .spawn(move || {
                for cgroup in receiver {
                    if cgroup.wait_empty_blocking(REMOVER_WAIT) {
                        cgroup.remove();
                    }
                }
            });
        if let Err(error) = spawned {
            tracing::warn!(%error, "cannot start the cgroup remover; killed cgroups stay behind");
        }
        Mutex::new(sender)
    });
    let sender = sender
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    // Fails only when the remover could not start; the empty cgroup then stays.
    let _ = sender.send(cgroup);
}

/// Removes a cgroup directory and the cgroups below it, deepest first.
fn remove_tree(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                remove_tree(&entry.path());
            }
        }
    }
    if let Err(error) = std::fs::remove_dir(dir) {
        if error.kind() != io::ErrorKind::NotFound {
            tracing::debug!(dir = %dir.display(), %error, "cannot remove a command's cgroup");
        }
    }
}

/// Removes the empty cgroups left by wsp processes that no longer exist.
fn sweep_stale(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix(PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            remove_tree(&entry.path());
        }
    }
}

/// This process's cgroup v2 directory: its path from `/proc/self/cgroup` under a `cgroup2`
/// mount from `/proc/self/mountinfo`.
fn find_own_cgroup() -> Option<PathBuf> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let own = cgroups.lines().find_map(|line| line.strip_prefix("0::"))?;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    mounts.lines().find_map(|line| {
        let (fields, filesystem) = line.split_once(" - ")?;
        if filesystem.split(' ').next() != Some("cgroup2") {
            return None;
        }
        let mut fields = fields.split(' ').skip(3);
        let root = unescape(fields.next()?);
        let mount_point = unescape(fields.next()?);
        let inside = Path::new(own).strip_prefix(&root).ok()?;
        let dir = Path::new(&mount_point).join(inside);
        dir.join("cgroup.procs").exists().then_some(dir)
    })
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).and_then(|digits| {
            std::str::from_utf8(digits)
                .ok()
                .and_then(|digits| u8::from_str_radix(digits, 8).ok())
        });
        match (bytes[i], octal) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::unescape;

    #[test]
    fn mountinfo_escapes() {
        assert_eq!(unescape(r"/a\040b"), "/a b");
        assert_eq!(unescape(r"/plain"), "/plain");
        assert_eq!(unescape(r"/x\"), r"/x\");
    }
}
