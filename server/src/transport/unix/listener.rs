//! [`UnixListener`]: a bound Unix socket whose every admitted peer is a connection.

use std::io;
use std::path::Path;

use super::socket_file::{self, SocketFile};
use super::UnixConnection;
use crate::non_blocking::EarlyReads;
use crate::transport::{ConnectionSlots, Listener};

/// A Unix socket bound where only its owner can reach it, serving only its own user (and the
/// users [`allow_uids`](UnixListener::allow_uids) names), at most as many connections at once
/// as its slots hold. Its socket file is removed when it drops.
#[derive(Debug)]
pub struct UnixListener {
    listener: tokio::net::UnixListener,
    file: SocketFile,
    allowed_uids: Vec<u32>,
    slots: ConnectionSlots,
}

impl UnixListener {
    /// Binds `path`, mode 0600. Refused: a directory that group or others may write (anyone
    /// who can write there could replace the socket), a file at `path` that is not a socket,
    /// and a socket another server listens on; a socket no one listens on any more is
    /// replaced. No bound on the connections until [`with_slots`](Self::with_slots). Must be
    /// called inside a tokio runtime.
    pub fn bind(path: impl AsRef<Path>) -> io::Result<Self> {
        let (listener, file) = socket_file::bind(path.as_ref())?;
        Ok(UnixListener {
            listener,
            file,
            allowed_uids: vec![rustix::process::geteuid().as_raw()],
            slots: ConnectionSlots::new(usize::MAX),
        })
    }

    /// Also serves the peers of these users (the server's own is always served).
    pub fn allow_uids(mut self, uids: impl IntoIterator<Item = u32>) -> Self {
        self.allowed_uids.extend(uids);
        self
    }

    /// Serves at most as many connections at once as `slots` has room for (shared with other
    /// listeners, say); a peer past them is closed at once.
    pub fn with_slots(mut self, slots: ConnectionSlots) -> Self {
        self.slots = slots;
        self
    }

    /// Where the socket is bound.
    pub fn path(&self) -> &Path {
        self.file.path()
    }
}

impl Listener for UnixListener {
    type Connection = UnixConnection;

    async fn accept(&mut self) -> io::Result<UnixConnection> {
        loop {
            let (stream, _) = self.listener.accept().await?;
            let uid = match stream.peer_cred() {
                Ok(credentials) => credentials.uid(),
                Err(error) => {
                    tracing::warn!(%error, "a Unix peer without credentials was closed");
                    continue;
                }
            };
            if !self.allowed_uids.contains(&uid) {
                tracing::warn!(
                    uid,
                    "a Unix peer of another user was closed (not an allowed uid)"
                );
                continue;
            }
            let Some(slot) = self.slots.take() else {
                let max = self.slots.max();
                tracing::warn!(
                    max,
                    "a Unix peer was closed: every connection slot is taken"
                );
                continue;
            };
            let early_reads = EarlyReads::WhileAlone(self.slots.clone());
            match UnixConnection::new(stream, early_reads) {
                Ok(connection) => return Ok(connection.holding(slot).of_peer(uid)),
                Err(error) => tracing::warn!(%error, "an accepted Unix peer was closed"),
            }
        }
    }
}
