//! The sandbox's own view of the mounts: the whole system read-only (and `nosuid`), except
//! the trees the command may write, which are bind-mounted onto themselves and stay writable.
//!
//! Landlock (ABI ≤ 7) confines opening and changing the tree, not metadata: without this,
//! a sandboxed command could still `chmod`, `chown`, `utime` and `setxattr` every file its
//! user owns anywhere. On a read-only mount all of those fail with `EROFS`, whoever owns the
//! file. The mount namespace is private, so nothing done here reaches the host's.
//!
//! Runs between fork and exec in the child, after it entered its user and mount namespaces:
//! plain system calls on paths prepared before the fork, no allocation.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x0000_0001;
const MOUNT_ATTR_NOSUID: u64 = 0x0000_0002;

/// The trees that stay writable, as paths ready for the system calls.
#[derive(Debug)]
pub(super) struct MountPlan {
    writable: Vec<CString>,
}

impl MountPlan {
    /// Keeps `writable` (absolute, canonical directories) writable.
    pub(super) fn new(writable: &[&Path]) -> io::Result<Self> {
        let writable = writable
            .iter()
            .map(|path| CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other))
            .collect::<io::Result<_>>()?;
        Ok(MountPlan { writable })
    }

    /// Makes every mount private to this namespace, bind-mounts each writable tree onto
    /// itself, makes everything read-only and `nosuid`, then the writable trees writable
    /// again.
    ///
    /// # Safety
    /// Call only in a freshly forked, single-threaded child, inside its own mount namespace.
    pub(super) unsafe fn apply(&self) -> io::Result<()> {
        check(libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ))?;
        for path in &self.writable {
            check(libc::mount(
                path.as_ptr(),
                path.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND,
                std::ptr::null(),
            ))?;
        }
        set_attributes(
            c"/",
            libc::AT_RECURSIVE,
            MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID,
            0,
        )?;
        for path in &self.writable {
            set_attributes(path, 0, 0, MOUNT_ATTR_RDONLY)?;
        }
        Ok(())
    }
}

/// Opens the null device again, inside the namespace, as stdin: the one the parent opened
/// belongs to the host's `/dev` mount, which is writable there (`fchmod` of it would change
/// the host's `/dev/null`).
///
/// # Safety
/// Call only in a freshly forked, single-threaded child.
pub(super) unsafe fn reopen_null_stdin() -> io::Result<()> {
    let fd = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
    if fd == -1 {
        return Err(io::Error::last_os_error());
    }
    let duplicated = libc::dup2(fd, libc::STDIN_FILENO);
    let error = io::Error::last_os_error();
    libc::close(fd);
    if duplicated == -1 {
        return Err(error);
    }
    Ok(())
}

unsafe fn set_attributes(
    path: &std::ffi::CStr,
    flags: libc::c_int,
    set: u64,
    clear: u64,
) -> io::Result<()> {
    let attributes = MountAttr {
        attr_set: set,
        attr_clr: clear,
        propagation: 0,
        userns_fd: 0,
    };
    let result = libc::syscall(
        libc::SYS_mount_setattr,
        libc::AT_FDCWD,
        path.as_ptr(),
        flags as libc::c_uint,
        &attributes as *const MountAttr,
        std::mem::size_of::<MountAttr>(),
    );
    if result == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn check(result: libc::c_int) -> io::Result<()> {
    if result == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}
