//! The private temporary directory of one sandboxed run:
//! `<temp>/wsp-sandbox-<uid>-<pid>-<random>/<random>`, mode 0700, removed when the run ends.
//! `<temp>` is the system's temporary directory, or the directory the run's policy names
//! ([`SandboxPolicy::private_tmp_in`](crate::SandboxPolicy::private_tmp_in)).
//!
//! All of a server's runs in one `<temp>` have theirs in one base directory of that server
//! process, which every sandbox hides, so that no run reads another's. The base has a name
//! nobody can guess and is made with `mkdir` (which fails on anything already there), mode
//! 0700, so no other user can plant it or enter it; its process holds an exclusive `flock` on
//! it for life. When a new base is made, the bases of servers that are gone are removed: in a
//! directory a policy names, with whatever a server killed during a run left in them (once no
//! process holds the lock); in the system's temporary directory, only empty ones.

use std::collections::BTreeMap;
use std::fs::DirBuilder;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rand::Rng;

use crate::dir_lock::{lock_if_unheld, still_at};

/// How often, and how far apart, a removal that failed (a process still dying inside) is
/// tried again in the background.
const RETRIES: u32 = 20;
const RETRY_PAUSE: Duration = Duration::from_millis(100);

/// One run's private temporary directory; dropping it removes it.
#[derive(Debug)]
pub(super) struct PrivateTmp {
    base: PathBuf,
    path: PathBuf,
}

impl PrivateTmp {
    /// Makes a fresh directory in this process's base directory in `parent` (the system's
    /// temporary directory when `None`).
    pub(super) fn create_in(parent: Option<&Path>) -> io::Result<Self> {
        let base = base_dir(parent)?;
        for _ in 0..16 {
            let nonce: u64 = rand::rng().random();
            let path = base.join(format!("{nonce:016x}"));
            match DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(PrivateTmp { base, path }),
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(error) => return Err(error),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "no fresh name for a temporary directory",
        ))
    }

    /// The directory every run's temporary directory lies in.
    pub(super) fn base(&self) -> &Path {
        &self.base
    }

    /// This run's directory.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }
}

impl PrivateTmp {
    /// Removes the directory, off the async threads, and waits for it to be gone; what cannot
    /// be removed yet (a process still dying inside) is retried in the background.
    pub(super) async fn remove(mut self) {
        let path = std::mem::take(&mut self.path);
        let removed = tokio::task::spawn_blocking(move || match remove(&path) {
            Ok(()) => None,
            Err(_) => Some(path),
        })
        .await;
        if let Ok(Some(path)) = removed {
            remove_in_background(path);
        }
    }
}

impl Drop for PrivateTmp {
    /// A run dropped before its end (cancelled, or the server is exiting): the directory is
    /// removed at once if it can be, so that an exiting server leaves nothing behind, else in
    /// the background once the killed processes are gone.
    fn drop(&mut self) {
        if !self.path.as_os_str().is_empty() && remove(&self.path).is_err() {
            remove_in_background(std::mem::take(&mut self.path));
        }
    }
}

fn remove_in_background(path: PathBuf) {
    let spawned = std::thread::Builder::new()
        .name("wsp-tmp-remover".into())
        .spawn(move || {
            for _ in 0..RETRIES {
                std::thread::sleep(RETRY_PAUSE);
                if remove(&path).is_ok() {
                    return;
                }
            }
            tracing::warn!(path = %path.display(), "a sandboxed run's TMPDIR could not be removed");
        });
    if let Err(error) = spawned {
        tracing::warn!(%error, "cannot start the TMPDIR remover");
    }
}

/// A base directory, and the lock on it its process holds for life: a base nobody holds is
/// a dead server's.
struct Base {
    path: PathBuf,
    _held: OwnedFd,
}

/// This process's base directory in `parent` (the system's temporary directory when
/// `None`), made on first use.
fn base_dir(parent: Option<&Path>) -> io::Result<PathBuf> {
    static BASES: Mutex<BTreeMap<Option<PathBuf>, Base>> = Mutex::new(BTreeMap::new());
    let key = parent.map(Path::to_path_buf);
    let mut bases = BASES.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(base) = bases.get(&key) {
        return Ok(base.path.clone());
    }
    let temp = match parent {
        Some(dir) => dir.to_path_buf(),
        None => std::env::temp_dir(),
    };
    // Only servers that lock their bases make them in a directory a policy names; in the
    // shared temporary directory a server of an older version (or of another PID namespace,
    // whose pid means nothing here) may hold no lock, so only empty bases are removed there.
    let reclaim = match parent {
        Some(_) => Reclaim::WholeTrees,
        None => Reclaim::EmptyOnly,
    };
    let base = make_base_dir(&temp.canonicalize()?, reclaim)?;
    let path = base.path.clone();
    bases.insert(key, base);
    Ok(path)
}

/// What of a dead server's base is removed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reclaim {
    /// The base and what its runs left in it (a server killed during a run), once no process
    /// holds its lock.
    WholeTrees,
    /// An empty base only.
    EmptyOnly,
}

fn make_base_dir(temp: &Path, reclaim: Reclaim) -> io::Result<Base> {
    let uid = rustix::process::geteuid().as_raw();
    let prefix = format!("wsp-sandbox-{uid}-");
    remove_abandoned_bases(temp, &prefix, reclaim);
    let pid = std::process::id();
    for _ in 0..16 {
        let nonce: u64 = rand::rng().random();
        let path = temp.join(format!("{prefix}{pid}-{nonce:016x}"));
        match DirBuilder::new().mode(0o700).create(&path) {
            // A sweeper of another PID namespace may take it for a dead server's before this
            // process locks it: then it is gone (or going), and another name is tried.
            Ok(()) => {
                if let Some(held) = lock_if_unheld(&path) {
                    if still_at(&held, &path)? {
                        return Ok(Base { path, _held: held });
                    }
                }
            }
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(error),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no fresh name for the sandbox's base directory",
    ))
}

/// Removes the bases of this user's servers that are gone, as `reclaim` says (a base of
/// another user is not this user's to remove).
fn remove_abandoned_bases(temp: &Path, prefix: &str, reclaim: Reclaim) {
    let Ok(entries) = std::fs::read_dir(temp) else {
        return;
    };
    let uid = rustix::process::geteuid().as_raw();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix(prefix))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<i32>().ok())
        else {
            continue;
        };
        let ours = std::fs::symlink_metadata(entry.path())
            .is_ok_and(|meta| meta.is_dir() && meta.uid() == uid);
        if !ours || process_exists(pid) {
            continue;
        }
        if reclaim == Reclaim::EmptyOnly {
            let _ = std::fs::remove_dir(entry.path());
            continue;
        }
        // Held while the tree goes, so that no server can take it meanwhile.
        if let Some(_unheld) = lock_if_unheld(&entry.path()) {
            let _ = remove(&entry.path());
        }
    }
}

fn process_exists(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let signalled = unsafe { libc::kill(pid, 0) } == 0;
    signalled || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Removes the tree at `path`, however deep, following nothing (see [`crate::remove_tree`]);
/// a directory the command made unwritable or unreadable is given back its owner's rights
/// first.
fn remove(path: &Path) -> io::Result<()> {
    crate::remove_tree::remove_tree(path)
}
