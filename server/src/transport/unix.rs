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
        ByteStream::new(reader, writer).of_kind(super::TransportName::Unix)
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
