//! Transports: where a server's connections come from.
//!
//! A [`Connection`] is one peer: opened, it gives the runtime a [`FrameSource`] of payloads in
//! and a sink of payloads out. A byte stream (an `AsyncRead` and an `AsyncWrite`) becomes one
//! through [`ByteStream`], which puts the `Content-Length` codec on both sides; a transport
//! that carries whole messages implements [`Connection`] itself. A [`Listener`] yields
//! connections, any number of them.
//!
//! Built in, one file each: [`stdio`] (this process's stdin and stdout), [`unix`] (a Unix
//! stream, and a Unix listener accepting many) and [`duplex`] (an in-memory pair, for tests
//! and in-process clients).

mod boxed;
pub mod duplex;
mod slots;
pub mod stdio;
pub mod unix;
#[cfg(feature = "websocket")]
pub mod websocket;

use std::future::Future;
use std::io;

use bytes::Bytes;
use futures::Sink;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::codec::FramedRead;
use wsp_middleware::Extensions;
pub use wsp_protocol::results::TransportName;

pub use boxed::{BoxConnection, BoxInput, BoxListener, BoxOutput};
pub use slots::{ConnectionSlot, ConnectionSlots, HoldingSlot};

use crate::codec::{FrameCodec, FrameWriter};
use crate::runtime::{FairRead, FrameSource};

/// Bytes read per system call at most.
const IO_CHUNK: usize = 64 * 1024;

/// One peer of a server.
pub trait Connection: Send + 'static {
    /// The payloads read from the peer (and the codec's reports of dropped input).
    type Input: FrameSource + Send;
    /// Where the payloads for the peer go.
    type Output: Sink<Bytes, Error = io::Error> + Unpin + Send;

    /// Opens the connection; no payload larger than `max_frame_bytes` is accepted.
    fn open(self, max_frame_bytes: usize) -> (Self::Input, Self::Output);

    /// Leaves what is known about the peer (its [`TransportName`], its credentials, its
    /// address) in `facts`, which every handler of the connection sees in its
    /// [`Context::facts`](wsp_middleware::Context::facts). Nothing by default.
    fn describe(&self, facts: &mut Extensions) {
        let _ = facts;
    }
}

/// What `connection` says about its peer (see [`Connection::describe`]).
pub(crate) fn facts_of(connection: &impl Connection) -> Extensions {
    let mut facts = Extensions::new();
    connection.describe(&mut facts);
    facts
}

/// Yields connections, any number of them.
pub trait Listener: Send + 'static {
    /// What it yields.
    type Connection: Connection;

    /// The next connection; an error is about that one attempt (the listener goes on).
    fn accept(&mut self) -> impl Future<Output = io::Result<Self::Connection>> + Send;
}

/// A byte stream as a [`Connection`]: `Content-Length` framing both ways.
#[derive(Debug)]
pub struct ByteStream<R, W> {
    reader: R,
    writer: W,
    kind: Option<TransportName>,
    drained: Option<fn(&W) -> bool>,
    early_bytes_from: Option<fn(&W) -> usize>,
}

impl<R, W> ByteStream<R, W> {
    /// The connection that reads `reader` and writes `writer`.
    pub fn new(reader: R, writer: W) -> Self {
        ByteStream {
            reader,
            writer,
            kind: None,
            drained: None,
            early_bytes_from: None,
        }
    }

    /// Says how to tell that the peer has taken everything written: the output then also
    /// writes small answers early (see [`FrameWriter::with_early_writes`]).
    pub fn with_drain_probe(mut self, drained: fn(&W) -> bool) -> Self {
        self.drained = Some(drained);
        self
    }

    /// Says how many bytes of answers to let wait before asking the drain probe (asked anew
    /// each time; default: a fixed KiB, see [`FrameWriter::with_early_bytes_from`]).
    pub fn with_early_bytes_from(mut self, bytes_from: fn(&W) -> usize) -> Self {
        self.early_bytes_from = Some(bytes_from);
        self
    }

    /// Says what kind of transport it is (`initialize` reports it as `transport`).
    pub fn of_kind(mut self, kind: TransportName) -> Self {
        self.kind = Some(kind);
        self
    }
}

impl<R, W> Connection for ByteStream<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Input = FramedRead<FairRead<R>, FrameCodec>;
    type Output = FrameWriter<W>;

    fn open(self, max_frame_bytes: usize) -> (Self::Input, Self::Output) {
        let (input, output) = frame_bytes(self.reader, self.writer, max_frame_bytes);
        match self.drained {
            Some(drained) => {
                let output = output.with_early_writes(EARLY_WRITE_BYTES, drained);
                match self.early_bytes_from {
                    Some(bytes_from) => (input, output.with_early_bytes_from(bytes_from)),
                    None => (input, output),
                }
            }
            None => (input, output),
        }
    }

    fn describe(&self, facts: &mut Extensions) {
        if let Some(kind) = self.kind {
            facts.insert(kind);
        }
    }
}

/// Answers waiting past which a byte stream with a drain probe writes them before a page is
/// full, unless it says otherwise ([`ByteStream::with_early_bytes_from`]): about twenty small
/// answers (`environment/list` of an empty store is 45 bytes).
pub const EARLY_WRITE_BYTES: usize = 1024;

/// `Content-Length` framing over a byte stream, both ways.
pub(crate) fn frame_bytes<R: AsyncRead, W: AsyncWrite>(
    reader: R,
    writer: W,
    max_frame_bytes: usize,
) -> (FramedRead<FairRead<R>, FrameCodec>, FrameWriter<W>) {
    let codec = FrameCodec::with_max_frame_bytes(max_frame_bytes);
    let input = FramedRead::with_capacity(FairRead::new(reader), codec, IO_CHUNK);
    (input, FrameWriter::new(writer))
}
