//! A Unix stream socket as a [`Connection`], and a Unix listener that accepts many.

use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;

use wsp_middleware::Extensions;

use super::{ByteStream, Connection, ConnectionSlot, ConnectionSlots, HoldingSlot, Listener};
use crate::codec::{EarlyAt, FrameCodec, FrameWriter};
use crate::non_blocking::{EarlyReads, NonBlocking};
use crate::runtime::FairRead;

/// A socket's early writes: after two dozen answers, since every write costs the kernel an
/// allocation, a memory charge and a queued buffer (BENCHMARKS.md, "Unix sockets: reading
/// early while alone").
const SOCKET_EARLY_WRITE_AT: EarlyAt = EarlyAt::frames(24);

/// One Unix stream, `Content-Length` framed; it may hold a slot of its listener's
/// [`ConnectionSlots`] for as long as its session writes.
#[derive(Debug)]
pub struct UnixConnection {
    bytes: ByteStream<NonBlocking, NonBlocking>,
    slot: Option<ConnectionSlot>,
}

impl UnixConnection {
    /// `stream`, read early as `early_reads` says (see [`crate::non_blocking`]): a listener
    /// passes [`EarlyReads::WhileAlone`] with its slots. Must be called inside a tokio runtime.
    pub fn new(stream: tokio::net::UnixStream, early_reads: EarlyReads) -> io::Result<Self> {
        let reader = OwnedFd::from(stream.into_std()?);
        let writer = reader.try_clone()?;
        let bytes = ByteStream::new(
            NonBlocking::socket_reader(reader, early_reads)?,
            NonBlocking::socket_writer(writer)?,
        )
        .of_kind(super::TransportName::Unix)
        .with_drain_probe(NonBlocking::is_drained)
        .with_early_writes_at(SOCKET_EARLY_WRITE_AT);
        Ok(UnixConnection { bytes, slot: None })
    }

    /// The connection, keeping `slot` taken until its session's output drops.
    pub fn holding(mut self, slot: ConnectionSlot) -> Self {
        self.slot = Some(slot);
        self
    }
}

impl Connection for UnixConnection {
    type Input = tokio_util::codec::FramedRead<FairRead<NonBlocking>, FrameCodec>;
    type Output = HoldingSlot<FrameWriter<NonBlocking>>;

    fn open(self, max_frame_bytes: usize) -> (Self::Input, Self::Output) {
        let (input, output) = self.bytes.open(max_frame_bytes);
        (input, HoldingSlot::new(output, self.slot))
    }

    fn describe(&self, facts: &mut Extensions) {
        self.bytes.describe(facts);
    }
}

/// A bound Unix socket; every accepted stream is a connection, counted in its slots.
#[derive(Debug)]
pub struct UnixListener {
    listener: tokio::net::UnixListener,
    slots: ConnectionSlots,
}

impl UnixListener {
    /// Binds `path` (which must not exist), with no bound on its connections. Must be called
    /// inside a tokio runtime.
    pub fn bind(path: impl AsRef<Path>) -> io::Result<Self> {
        Ok(tokio::net::UnixListener::bind(path)?.into())
    }

    /// Serves at most as many connections at once as `slots` has room for (shared with other
    /// listeners, say); a peer past them is closed at once.
    pub fn with_slots(mut self, slots: ConnectionSlots) -> Self {
        self.slots = slots;
        self
    }
}

impl From<tokio::net::UnixListener> for UnixListener {
    fn from(listener: tokio::net::UnixListener) -> Self {
        UnixListener {
            listener,
            slots: ConnectionSlots::new(usize::MAX),
        }
    }
}

impl Listener for UnixListener {
    type Connection = UnixConnection;

    async fn accept(&mut self) -> io::Result<UnixConnection> {
        loop {
            let (stream, _peer) = self.listener.accept().await?;
            let Some(slot) = self.slots.take() else {
                tracing::warn!(
                    max = self.slots.max(),
                    "a Unix peer was closed: all slots taken"
                );
                continue;
            };
            let early_reads = EarlyReads::WhileAlone(self.slots.clone());
            match UnixConnection::new(stream, early_reads) {
                Ok(connection) => return Ok(connection.holding(slot)),
                Err(error) => tracing::warn!(%error, "an accepted Unix peer was closed"),
            }
        }
    }
}
