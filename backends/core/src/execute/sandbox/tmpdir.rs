//! The private temporary directory of one sandboxed run: `<temp>/wsp-sandbox-<uid>/<random>`,
//! mode 0700, removed when the run ends.
//!
//! All of them lie in one base directory per user, which every sandbox hides, so that no run
//! reads another's. The base must be a real directory of this user that no one else can
//! enter; one that some other user planted in the shared temporary directory is refused.

use std::fs::DirBuilder;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rand::Rng;

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
    /// Makes a fresh directory in this user's base directory.
    pub(super) fn create() -> io::Result<Self> {
        let base = base_dir()?;
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

/// `<temp>/wsp-sandbox-<uid>`, made if missing, checked to be this user's private directory.
fn base_dir() -> io::Result<PathBuf> {
    let uid = rustix::process::geteuid().as_raw();
    let base = std::env::temp_dir()
        .canonicalize()?
        .join(format!("wsp-sandbox-{uid}"));
    match DirBuilder::new().mode(0o700).create(&base) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(error),
    }
    let metadata = std::fs::symlink_metadata(&base)?;
    if !metadata.is_dir() || metadata.uid() != uid || metadata.mode() & 0o077 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is not a directory that only this user can enter",
                base.display()
            ),
        ));
    }
    Ok(base)
}

/// Removes the tree at `path`, however deep, following nothing (see [`crate::remove_tree`]);
/// a directory the command made unwritable or unreadable is given back its owner's rights
/// first.
fn remove(path: &Path) -> io::Result<()> {
    crate::remove_tree::remove_tree(path)
}
