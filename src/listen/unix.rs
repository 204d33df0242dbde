//! `--listen unix:PATH`: a Unix domain socket, mode 0600, in a directory no other user may
//! write, serving only the server's own user (and `--allow-uid` users).

use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rustix::fs::Mode;
use wsp_middleware::Extensions;
use wsp_server::non_blocking::EarlyReads;
use wsp_server::transport::unix::UnixConnection;
use wsp_server::transport::{BoxListener, Connection, ConnectionSlots, Listener};

use super::ListenConfig;

/// Binds the socket at `path` after checking where it goes (see the module docs).
pub(super) fn bind(
    path: &Path,
    config: &ListenConfig,
    slots: ConnectionSlots,
) -> io::Result<BoxListener> {
    check_directory(path)?;
    clear_stale_socket(path)?;
    let previous = rustix::process::umask(Mode::from_raw_mode(0o177));
    let bound = tokio::net::UnixListener::bind(path);
    rustix::process::umask(previous);
    let listener = bound.map_err(|e| with_path(e, "cannot bind", path))?;
    let file = SocketFile::new(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    let mut allowed = config.allowed_uids.clone();
    allowed.push(rustix::process::geteuid().as_raw());
    let name = format!("unix:{}", path.display());
    Ok(BoxListener::new(
        name,
        UnixSockets {
            listener,
            allowed,
            slots,
            _file: file,
        },
    ))
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

/// The socket file, removed when the listener is dropped (if it is still the one bound).
struct SocketFile {
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

struct UnixSockets {
    listener: tokio::net::UnixListener,
    allowed: Vec<u32>,
    slots: ConnectionSlots,
    _file: SocketFile,
}

impl Listener for UnixSockets {
    type Connection = UnixPeer;

    async fn accept(&mut self) -> io::Result<UnixPeer> {
        loop {
            let (stream, _) = self.listener.accept().await?;
            let uid = match stream.peer_cred() {
                Ok(credentials) => credentials.uid(),
                Err(error) => {
                    tracing::warn!(%error, "a Unix peer without credentials was closed");
                    continue;
                }
            };
            if !self.allowed.contains(&uid) {
                tracing::warn!(
                    uid,
                    "a Unix peer of another user was closed (see --allow-uid)"
                );
                continue;
            }
            let Some(slot) = self.slots.take() else {
                tracing::warn!(
                    max = self.slots.max(),
                    "a Unix peer was closed: --max-connections are served"
                );
                continue;
            };
            let early_reads = EarlyReads::WhileAlone(self.slots.clone());
            match UnixConnection::new(stream, early_reads) {
                Ok(connection) => {
                    return Ok(UnixPeer {
                        connection: connection.holding(slot),
                        uid,
                    })
                }
                Err(error) => tracing::warn!(%error, "an accepted Unix peer was closed"),
            }
        }
    }
}

/// The uid of a Unix connection's peer, in every handler's `Context::facts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerUid(pub u32);

/// One accepted, admitted Unix connection, holding its connection slot while it is served.
pub(crate) struct UnixPeer {
    connection: UnixConnection,
    uid: u32,
}

impl Connection for UnixPeer {
    type Input = <UnixConnection as Connection>::Input;
    type Output = <UnixConnection as Connection>::Output;

    fn open(self, max_frame_bytes: usize) -> (Self::Input, Self::Output) {
        self.connection.open(max_frame_bytes)
    }

    fn describe(&self, facts: &mut Extensions) {
        self.connection.describe(facts);
        facts.insert(PeerUid(self.uid));
    }
}
