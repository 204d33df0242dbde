//! A Unix stream socket as a [`Connection`](super::Connection), and a Unix listener that accepts many.

use std::io;
use std::path::Path;

use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use super::{ByteStream, Listener};

/// One Unix stream, `Content-Length` framed.
pub type UnixConnection = ByteStream<OwnedReadHalf, OwnedWriteHalf>;

impl From<tokio::net::UnixStream> for UnixConnection {
    fn from(stream: tokio::net::UnixStream) -> Self {
        let (reader, writer) = stream.into_split();
        ByteStream::new(reader, writer)
            .of_kind(super::TransportName::Unix)
            .with_drain_probe(is_drained)
    }
}

/// Whether the peer has read everything written: none of the bytes sent on the socket wait in
/// the peer's queue (`SIOCOUTQ`, which for a Unix stream counts them until they are read).
fn is_drained(writer: &OwnedWriteHalf) -> bool {
    let stream: &tokio::net::UnixStream = writer.as_ref();
    #[cfg(target_os = "linux")]
    {
        use rustix::ioctl::{ioctl, Getter, Opcode};
        // SAFETY: `SIOCOUTQ` (`TIOCOUTQ`) is a getter opcode that gets a `c_int`.
        let unsent = unsafe {
            ioctl(
                stream,
                Getter::<{ libc::TIOCOUTQ as Opcode }, libc::c_int>::new(),
            )
        };
        unsent.is_ok_and(|unsent| unsent == 0)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = stream;
        false
    }
}

/// A bound Unix socket; every accepted stream is a connection.
#[derive(Debug)]
pub struct UnixListener {
    listener: tokio::net::UnixListener,
}

impl UnixListener {
    /// Binds `path` (which must not exist). Must be called inside a tokio runtime.
    pub fn bind(path: impl AsRef<Path>) -> io::Result<Self> {
        Ok(UnixListener {
            listener: tokio::net::UnixListener::bind(path)?,
        })
    }
}

impl From<tokio::net::UnixListener> for UnixListener {
    fn from(listener: tokio::net::UnixListener) -> Self {
        UnixListener { listener }
    }
}

impl Listener for UnixListener {
    type Connection = UnixConnection;

    async fn accept(&mut self) -> io::Result<UnixConnection> {
        let (stream, _peer) = self.listener.accept().await?;
        Ok(stream.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn a_socket_is_drained_once_its_peer_took_every_byte() {
        let (ours, mut peer) = tokio::net::UnixStream::pair().expect("a socket pair");
        let (_reader, mut writer) = ours.into_split();
        assert!(is_drained(&writer));
        writer.write_all(b"an answer").await.expect("write");
        assert!(!is_drained(&writer));
        let mut taken = [0; 9];
        peer.read_exact(&mut taken).await.expect("read");
        assert!(is_drained(&writer));
    }
}
