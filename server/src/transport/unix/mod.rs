//! Unix stream sockets: a [`UnixConnection`], and a [`UnixListener`] that accepts many, locked
//! down by default (a private directory, mode 0600, only the server's own user).

mod listener;
mod socket_file;

use std::io;
use std::os::fd::OwnedFd;

use wsp_middleware::Extensions;

pub use listener::UnixListener;

use super::{ByteStream, Connection, ConnectionSlot, HoldingSlot};
use crate::codec::{FrameCodec, FrameWriter};
use crate::non_blocking::{EarlyReads, NonBlocking};
use crate::runtime::FairRead;

/// The uid of a Unix connection's peer, in every handler's `Context::facts` (connections a
/// [`UnixListener`] accepted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerUid(pub u32);

/// One Unix stream, `Content-Length` framed; it may hold a slot of its listener's
/// [`ConnectionSlots`](super::ConnectionSlots) for as long as its session writes.
#[derive(Debug)]
pub struct UnixConnection {
    bytes: ByteStream<NonBlocking, NonBlocking>,
    slot: Option<ConnectionSlot>,
    peer_uid: Option<u32>,
}

impl UnixConnection {
    /// `stream`, read early as `early_reads` says (see [`crate::non_blocking`]): a listener
    /// passes [`EarlyReads::WhileAlone`] with its slots. Must be called inside a tokio runtime.
    pub fn new(stream: tokio::net::UnixStream, early_reads: EarlyReads) -> io::Result<Self> {
        let socket = OwnedFd::from(stream.into_std()?);
        let (reader, writer) = NonBlocking::socket_halves(socket, early_reads)?;
        let bytes = ByteStream::new(reader, writer)
            .of_kind(super::TransportName::Unix)
            .with_drain_probe(NonBlocking::is_drained)
            .with_early_bytes_from(NonBlocking::early_write_bytes);
        Ok(UnixConnection {
            bytes,
            slot: None,
            peer_uid: None,
        })
    }

    /// The connection, keeping `slot` taken until its session's output drops.
    pub fn holding(mut self, slot: ConnectionSlot) -> Self {
        self.slot = Some(slot);
        self
    }

    /// The connection, telling its handlers that its peer is user `uid` ([`PeerUid`]).
    pub fn of_peer(mut self, uid: u32) -> Self {
        self.peer_uid = Some(uid);
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
        if let Some(uid) = self.peer_uid {
            facts.insert(PeerUid(uid));
        }
    }
}
