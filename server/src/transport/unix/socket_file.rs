//! Where a [`UnixListener`](super::UnixListener) binds: a private directory, no live server's
//! socket, mode 0600, and the file removed again when the listener drops.

use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rustix::fs::Mode;

/// Binds `path` after checking where it goes: its directory must be writable by its owner
/// only, and a socket file already there must be one no server listens on (it is replaced).
/// The socket is created with mode 0600.
pub(super) fn bind(path: &Path) -> io::Result<(tokio::net::UnixListener, SocketFile)> {
    check_directory(path)?;
    clear_stale_socket(path)?;
    // The file is created by bind(2) with the process's umask: no one else may connect
    // between the bind and the chmod below.
    let previous = rustix::process::umask(Mode::from_raw_mode(0o177));
    let bound = tokio::net::UnixListener::bind(path);
    rustix::process::umask(previous);
    let listener = bound.map_err(|e| with_path(e, "cannot bind", path))?;
    let file = SocketFile::new(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok((listener, file))
}

fn with_path(error: io::Error, doing: &str, path: &Path) -> io::Error {
    io::Error::new(error.kind(), format!("{doing} {}: {error}", path.display()))
}

/// The socket's directory must exist and be writable by its owner only: anyone else who can
/// write there could replace the socket with one of their own.
fn check_directory(path: &Path) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let metadata = std::fs::metadata(dir).map_err(|e| with_path(e, "cannot use", dir))?;
    let mode = metadata.mode();
    if mode & 0o022 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is writable by group or others (mode {:o}); put the socket in a private \
                 directory such as $XDG_RUNTIME_DIR",
                dir.display(),
                mode & 0o7777
            ),
        ));
    }
    Ok(())
}

/// Removes a socket file no server listens on any more; refuses anything else at `path`.
fn clear_stale_socket(path: &Path) -> io::Result<()> {
    let Ok(existing) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    if !existing.file_type().is_socket() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} exists and is not a socket", path.display()),
        ));
    }
    if std::os::unix::net::UnixStream::connect(path).is_ok() {
        return Err(io::Error::new(
            io::ErrorKind::AddrInUse,
            format!("another server listens on {}", path.display()),
        ));
    }
    std::fs::remove_file(path).map_err(|e| with_path(e, "cannot remove the stale socket", path))
}

/// The socket file, removed when dropped (if it is still the one bound).
#[derive(Debug)]
pub(super) struct SocketFile {
    path: PathBuf,
    identity: (u64, u64),
}

impl SocketFile {
    fn new(path: &Path) -> io::Result<Self> {
        let metadata = std::fs::symlink_metadata(path)?;
        Ok(SocketFile {
            path: path.to_owned(),
            identity: (metadata.dev(), metadata.ino()),
        })
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        let ours = std::fs::symlink_metadata(&self.path)
            .is_ok_and(|m| (m.dev(), m.ino()) == self.identity);
        if ours {
            if let Err(error) = std::fs::remove_file(&self.path) {
                tracing::warn!(%error, path = %self.path.display(), "cannot remove the socket");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn private_dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))
            .expect("chmod");
        dir
    }

    #[tokio::test]
    async fn a_socket_is_made_0600_and_removed_when_its_listener_drops() {
        let dir = private_dir();
        let path = dir.path().join("wsp.sock");
        let (listener, file) = bind(&path).expect("bind");
        let mode = std::fs::metadata(&path).expect("the socket").mode();
        assert_eq!(mode & 0o777, 0o600);
        drop((listener, file));
        assert!(!path.exists());
    }

    #[tokio::test]
    async fn a_directory_others_may_write_is_refused() {
        let dir = private_dir();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777))
            .expect("chmod");
        let error = bind(&dir.path().join("wsp.sock")).expect_err("refused");
        assert_eq!(error.kind(), io::ErrorKind::PermissionDenied);
        assert!(
            error.to_string().contains("writable by group or others"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn a_stale_socket_is_replaced_and_a_live_one_refused() {
        let dir = private_dir();
        let path = dir.path().join("wsp.sock");
        drop(std::os::unix::net::UnixListener::bind(&path).expect("a stale socket"));
        let live = bind(&path).expect("the stale socket replaced");
        let error = bind(&path).expect_err("a live socket refused");
        assert_eq!(error.kind(), io::ErrorKind::AddrInUse);
        drop(live);
        std::fs::write(&path, b"a file").expect("a file");
        let error = bind(&path).expect_err("a file refused");
        assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
    }
}
