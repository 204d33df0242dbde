//! Mapping this process's own uid and gid to themselves in a user namespace just entered: the
//! one copy of that setup, for the PID-namespace containment and for the sandbox.
//!
//! The writes run in a forked child of a multithreaded process: only async-signal-safe calls,
//! no allocation (the map lines are formatted before the fork).

use std::ffi::CStr;
use std::io;

/// The `uid_map` and `gid_map` lines that map this process's ids to themselves.
#[derive(Debug, Clone)]
pub(crate) struct IdMaps {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

impl IdMaps {
    /// The maps for this process's effective uid and gid.
    pub(crate) fn of_this_process() -> Self {
        let uid = rustix::process::geteuid().as_raw();
        let gid = rustix::process::getegid().as_raw();
        IdMaps {
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
        }
    }

    /// Writes the maps for the calling process, which has just unshared its user namespace.
    /// `setgroups` is denied first: without privilege over the parent namespace (which a
    /// process inside the new one never has) `gid_map` cannot be written otherwise. A kernel
    /// older than 3.19 has no `setgroups` file and needs no such step.
    ///
    /// # Safety
    /// Call only in a freshly forked, single-threaded child, after `unshare(CLONE_NEWUSER)`.
    pub(crate) unsafe fn write(&self) -> io::Result<()> {
        match write_file(c"/proc/self/setgroups", b"deny") {
            Err(error) if error.raw_os_error() == Some(libc::ENOENT) => {}
            denied => denied?,
        }
        write_file(c"/proc/self/uid_map", &self.uid_map)?;
        write_file(c"/proc/self/gid_map", &self.gid_map)
    }
}

/// Writes `data` to the file at `path` in one `write`. The error is the `open`'s or the
/// `write`'s own, read before `close` can change `errno`; a short write is `EIO`.
///
/// # Safety
/// Async-signal-safe; meant for a forked child before exec.
unsafe fn write_file(path: &CStr, data: &[u8]) -> io::Result<()> {
    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
    if fd == -1 {
        return Err(io::Error::last_os_error());
    }
    let written = libc::write(fd, data.as_ptr().cast(), data.len());
    let outcome = match usize::try_from(written) {
        Ok(written) if written == data.len() => Ok(()),
        Ok(_) => Err(io::Error::from_raw_os_error(libc::EIO)),
        Err(_) => Err(io::Error::last_os_error()),
    };
    libc::close(fd);
    outcome
}
