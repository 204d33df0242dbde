//! A Unix stream socket as a [`Connection`](super::Connection), and a Unix listener that accepts many.

use std::io;
use std::path::Path;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use super::{ByteStream, Listener};

/// One Unix stream, `Content-Length` framed.
pub type UnixConnection = ByteStream<UnixReader, OwnedWriteHalf>;

impl From<tokio::net::UnixStream> for UnixConnection {
    fn from(stream: tokio::net::UnixStream) -> Self {
        let (reader, writer) = stream.into_split();
        ByteStream::new(UnixReader(reader), writer)
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

/// A Unix stream's read half that reads the socket even when the reactor has not reported
/// input since the last read found none, as a busy-polling session asks before the reactor
/// looks again (see [`RuntimeOptions::busy_poll`](crate::runtime::RuntimeOptions::busy_poll)).
#[derive(Debug)]
pub struct UnixReader(OwnedReadHalf);

impl AsyncRead for UnixReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let stream: &tokio::net::UnixStream = self.0.as_ref();
        let mut tried = false;
        loop {
            match stream.poll_read_ready(cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Ready(Err(error)) => return Poll::Ready(Err(error)),
                Poll::Pending if tried => return Poll::Pending,
                // The waker is registered, so input that comes after this read is not missed.
                Poll::Pending => return read_now(stream, buf).map_or(Poll::Pending, Poll::Ready),
            }
            match stream.try_io(tokio::io::Interest::READABLE, || read_unfilled(stream, buf)) {
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => tried = true,
                read => return Poll::Ready(read.map(|read| advance(buf, read))),
            }
        }
    }
}

/// A read that bypasses the reactor's readiness: `None` when there is nothing to read.
fn read_now(stream: &tokio::net::UnixStream, buf: &mut ReadBuf<'_>) -> Option<io::Result<()>> {
    match read_unfilled(stream, buf) {
        Err(error) if error.kind() == io::ErrorKind::WouldBlock => None,
        read => Some(read.map(|read| advance(buf, read))),
    }
}

/// Reads straight into the unfilled part of `buf`, with no zeroing first.
fn read_unfilled(stream: &tokio::net::UnixStream, buf: &mut ReadBuf<'_>) -> io::Result<usize> {
    // SAFETY: `read(2)` only writes into these bytes; nothing de-initializes them.
    let unfilled = unsafe { buf.unfilled_mut() };
    rustix::io::read(stream, unfilled)
        .map(|(filled, _)| filled.len())
        .map_err(io::Error::from)
}

fn advance(buf: &mut ReadBuf<'_>, read: usize) {
    // SAFETY: `read(2)` initialized the first `read` bytes of the unfilled part.
    unsafe { buf.assume_init(read) };
    buf.advance(read);
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
    async fn a_read_finds_input_the_reactor_has_not_reported_yet() {
        let (ours, mut peer) = tokio::net::UnixStream::pair().expect("a socket pair");
        let (reader, _writer) = ours.into_split();
        let mut reader = UnixReader(reader);
        let mut taken = [0; 9];
        assert!(futures::poll!(Box::pin(reader.read(&mut taken))).is_pending());
        peer.write_all(b"a request").await.expect("write");
        // Polled again at once, before the reactor has had a turn to see the input.
        let read = futures::poll!(Box::pin(reader.read(&mut taken)));
        assert!(matches!(read, Poll::Ready(Ok(9))), "{read:?}");
        assert_eq!(&taken, b"a request");
        drop(peer);
        assert_eq!(reader.read(&mut taken).await.expect("EOF"), 0);
    }

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
