//! Resolving an `environment/execute` request's working directory, once, to an open directory
//! beneath the environment's root.
//!
//! The directory is opened (`O_PATH`) with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`
//! relative to the opened root, and the child enters exactly that handle with `fchdir` before
//! it execs (a sandboxed child, whose mount namespace is not the handle's, enters the path
//! and checks that it is the same directory). A path that a concurrent rename or symlink swap
//! changes after the check therefore cannot move the command elsewhere: it runs in the
//! directory that was checked, or the run fails.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{Mode, OFlags, ResolveFlags};

/// A working directory checked to lie inside an environment, held open.
#[derive(Debug, Clone)]
pub struct WorkingDir {
    path: PathBuf,
    dir: Arc<OwnedFd>,
}

impl WorkingDir {
    /// The directory's path when it was resolved (symlinks resolved).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl AsFd for WorkingDir {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.dir.as_fd()
    }
}

/// The working directory for a command in the environment at `root`; `Err` is the message
/// for a `-32602` `cwd` violation.
///
/// `None` is the root itself. Otherwise the path must be absolute, exist, be a directory and,
/// once every symlink is resolved, lie inside the (equally resolved) root.
pub fn resolve_cwd(root: &Path, cwd: Option<&str>) -> Result<WorkingDir, String> {
    resolve_cwd_in(root, &[], cwd)
}

/// [`resolve_cwd`], where a `cwd` may also lie inside one of `allowed` (directories a server
/// admits besides the environment's root: `wsp serve --allow-cwd`), opened beneath it as
/// strictly as beneath the root.
pub fn resolve_cwd_in(
    root: &Path,
    allowed: &[PathBuf],
    cwd: Option<&str>,
) -> Result<WorkingDir, String> {
    let root = root.canonicalize().map_err(|error| {
        format!(
            "the environment root {} cannot be resolved: {error}",
            root.display()
        )
    })?;
    let Some(cwd) = cwd else {
        let root_dir = open_dir(&root).map_err(|error| {
            format!(
                "the environment root {} cannot be opened: {error}",
                root.display()
            )
        })?;
        return Ok(WorkingDir {
            path: root,
            dir: Arc::new(root_dir),
        });
    };
    let requested = Path::new(cwd);
    if !requested.is_absolute() {
        return Err(format!("cwd must be an absolute path, got `{cwd}`"));
    }
    let resolved = requested
        .canonicalize()
        .map_err(|error| format!("cwd `{cwd}` cannot be resolved: {error}"))?;
    let bases = std::iter::once(root.clone())
        .chain(allowed.iter().filter_map(|dir| dir.canonicalize().ok()));
    for base in bases {
        let Ok(inside) = resolved.strip_prefix(&base) else {
            continue;
        };
        let inside = if inside.as_os_str().is_empty() {
            Path::new(".")
        } else {
            inside
        };
        let place = if base == root {
            format!("the environment root {}", base.display())
        } else {
            format!("the allowed directory {}", base.display())
        };
        let base_dir =
            open_dir(&base).map_err(|error| format!("{place} cannot be opened: {error}"))?;
        let dir =
            open_beneath(&base_dir, &base, inside).map_err(|error| match error.raw_os_error() {
                Some(libc::ENOTDIR) => format!("cwd `{cwd}` is not a directory"),
                Some(libc::EXDEV) | Some(libc::ELOOP) => {
                    format!("cwd `{cwd}` leads outside {place} (it changed while it was resolved)")
                }
                _ => format!("cwd `{cwd}` cannot be opened: {error}"),
            })?;
        return Ok(WorkingDir {
            path: resolved,
            dir: Arc::new(dir),
        });
    }
    let also = if allowed.is_empty() {
        String::new()
    } else {
        let dirs: Vec<String> = allowed.iter().map(|d| d.display().to_string()).collect();
        format!(" and the allowed directories ({})", dirs.join(", "))
    };
    Err(format!(
        "cwd `{cwd}` resolves to {}, which is outside the environment root {}{also}",
        resolved.display(),
        root.display()
    ))
}

fn open_dir(path: &Path) -> io::Result<OwnedFd> {
    Ok(rustix::fs::open(
        path,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// Opens the directory `inside` (relative) beneath `root_dir`, never leaving it.
fn open_beneath(root_dir: &OwnedFd, root: &Path, inside: &Path) -> io::Result<OwnedFd> {
    let opened = rustix::fs::openat2(
        root_dir,
        inside,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
    );
    match opened {
        Err(rustix::io::Errno::NOSYS) => open_and_check(root, inside),
        other => Ok(other?),
    }
}

/// Before Linux 5.6 (no `openat2`): opens the path, then checks where the opened directory
/// really is.
fn open_and_check(root: &Path, inside: &Path) -> io::Result<OwnedFd> {
    let dir = open_dir(&root.join(inside))?;
    let actual = std::fs::read_link(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(&dir)
    ))?;
    if actual.starts_with(root) {
        Ok(dir)
    } else {
        Err(io::Error::from_raw_os_error(libc::EXDEV))
    }
}
