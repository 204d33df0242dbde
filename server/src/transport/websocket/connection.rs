//! One WebSocket connection as a [`Connection`]: a reader task turns text frames into
//! payloads, a writer task sends answers, pings and the closing frame. Both are bounded: a
//! client that stops reading fills its own queue and pauses its own session only. The answers
//! are bounded by their bytes, not their number, as the stdio writer's are: an answer may be
//! tens of MiB (an execute's output), so a count would let a client that never reads make the
//! server hold that many of them. A peer that reads nothing for the ping interval and the pong
//! timeout together while an answer waits is closed, as one that does not answer a ping is.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures::task::AtomicWaker;
use futures::{Sink, SinkExt, Stream, StreamExt};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::error::{CapacityError, Error as WsError};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};
use tokio_tungstenite::WebSocketStream;
use wsp_middleware::Extensions;

use super::listener::MaybeTls;
use super::WebSocketConfig;
use crate::codec::Frame;
use crate::runtime::FrameSource;
use crate::transport::{Connection, ConnectionSlot, TransportName};

/// Messages read and not yet taken by the session, per connection.
const INBOUND_QUEUE: usize = 16;
/// Bytes of answers handed over and not yet written, per connection, below which the session
/// may hand over another (which may be larger: one answer is always taken).
const OUTBOUND_BYTES: usize = 64 * 1024;

/// The peer's address, in every handler's `Context::facts` of a WebSocket connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerAddress(pub SocketAddr);

/// An upgraded, admitted WebSocket connection.
pub struct WebSocketConnection {
    socket: WebSocketStream<MaybeTls>,
    peer: SocketAddr,
    slot: ConnectionSlot,
    ping_interval: Duration,
    pong_timeout: Duration,
}

impl WebSocketConnection {
    pub(super) fn new(
        socket: WebSocketStream<MaybeTls>,
        peer: SocketAddr,
        slot: ConnectionSlot,
        config: &WebSocketConfig,
    ) -> Self {
        WebSocketConnection {
            socket,
            peer,
            slot,
            ping_interval: config.ping_interval,
            pong_timeout: config.pong_timeout,
        }
    }
}

impl std::fmt::Debug for WebSocketConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSocketConnection")
            .field("peer", &self.peer)
            .finish_non_exhaustive()
    }
}

impl Connection for WebSocketConnection {
    type Input = Inbound;
    type Output = Outbound;

    /// Starts the connection's reader and writer; the message limit was set at the upgrade.
    fn open(self, _max_frame_bytes: usize) -> (Inbound, Outbound) {
        let (sink, stream) = self.socket.split();
        let (inbound, received) = mpsc::channel(INBOUND_QUEUE);
        let (outbound, to_send) = mpsc::unbounded_channel();
        let queued = Arc::new(QueuedBytes::default());
        let (close, closing) = mpsc::channel(1);
        let answered = Arc::new(AtomicBool::new(true));
        tokio::spawn(read(stream, inbound, close, Arc::clone(&answered)));
        let writer = Writer {
            sink,
            to_send,
            queued: Arc::clone(&queued),
            closing,
            answered,
            ping_interval: self.ping_interval,
            pong_timeout: self.pong_timeout,
            _slot: self.slot,
        };
        tokio::spawn(writer.run());
        let outbound = Some(outbound);
        (
            Inbound {
                frames: received,
                last: None,
            },
            Outbound { outbound, queued },
        )
    }

    fn describe(&self, facts: &mut Extensions) {
        facts.insert(TransportName::Websocket);
        facts.insert(PeerAddress(self.peer));
    }
}

type Stream_ = futures::stream::SplitStream<WebSocketStream<MaybeTls>>;
type Sink_ = futures::stream::SplitSink<WebSocketStream<MaybeTls>, Message>;
/// How a send ended: sent, failed, or given up on because the peer took nothing in time.
type Sent = Result<Result<(), WsError>, tokio::time::error::Elapsed>;

async fn read(
    mut stream: Stream_,
    inbound: mpsc::Sender<io::Result<Frame>>,
    close: mpsc::Sender<CloseFrame>,
    answered: Arc<AtomicBool>,
) {
    let refuse = |code: CloseCode, reason: &'static str| CloseFrame {
        code,
        reason: reason.into(),
    };
    while let Some(message) = stream.next().await {
        let closing = match message {
            Ok(Message::Text(text)) => {
                if inbound
                    .send(Ok(Frame::Payload(text.to_string())))
                    .await
                    .is_err()
                {
                    return;
                }
                continue;
            }
            Ok(Message::Pong(_)) => {
                answered.store(true, Ordering::Release);
                continue;
            }
            Ok(Message::Ping(_)) | Ok(Message::Frame(_)) => continue,
            Ok(Message::Close(_)) => return,
            Ok(Message::Binary(_)) => refuse(CloseCode::Unsupported, "text frames only"),
            Err(WsError::Capacity(CapacityError::MessageTooLong { .. })) => {
                refuse(CloseCode::Size, "message too long")
            }
            Err(WsError::Utf8(_)) => refuse(CloseCode::Invalid, "text that is not UTF-8"),
            Err(error) => {
                tracing::debug!(%error, "a WebSocket connection failed");
                return;
            }
        };
        let _ = close.send(closing).await;
        return;
    }
}

struct Writer {
    sink: Sink_,
    to_send: mpsc::UnboundedReceiver<Bytes>,
    queued: Arc<QueuedBytes>,
    closing: mpsc::Receiver<CloseFrame>,
    answered: Arc<AtomicBool>,
    ping_interval: Duration,
    pong_timeout: Duration,
    _slot: ConnectionSlot,
}

impl Writer {
    async fn run(mut self) {
        // How long a peer may take nothing while something waits for it.
        let patience = self.ping_interval + self.pong_timeout;
        let mut ping = tokio::time::interval(self.ping_interval);
        ping.tick().await;
        let mut pong_deadline = None;
        let close = loop {
            let deadline = async {
                match pong_deadline {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                Some(frame) = self.closing.recv() => break frame,
                payload = self.to_send.recv() => match payload {
                    Some(payload) => {
                        let (sent, len) = send_batch(&mut self.sink, &mut self.to_send, payload, patience).await;
                        self.queued.written(len);
                        match sent {
                            Ok(Ok(())) => {}
                            Ok(Err(_)) => return,
                            Err(_) => {
                                tracing::debug!("closing a WebSocket peer that stopped reading");
                                return;
                            }
                        }
                    }
                    // The reader's reason, if it closed the input, goes first.
                    None => break self.closing.try_recv().unwrap_or(CloseFrame {
                        code: CloseCode::Normal,
                        reason: "".into(),
                    }),
                },
                _ = ping.tick() => {
                    if pong_deadline.is_none() {
                        self.answered.store(false, Ordering::Release);
                        pong_deadline = Some(tokio::time::Instant::now() + self.pong_timeout);
                        if self.sink.send(Message::Ping(Bytes::new())).await.is_err() {
                            return;
                        }
                    }
                }
                () = deadline => {
                    if !self.answered.load(Ordering::Acquire) {
                        break CloseFrame { code: CloseCode::Away, reason: "no answer to a ping".into() };
                    }
                    pong_deadline = None;
                }
            }
            if pong_deadline.is_some() && self.answered.load(Ordering::Acquire) {
                pong_deadline = None;
            }
        };
        let _ = tokio::time::timeout(patience, async {
            let _ = self.sink.send(Message::Close(Some(close))).await;
            let _ = self.sink.close().await;
        })
        .await;
    }
}

/// Sends `first` and every answer already queued behind it, then flushes once: answers that
/// wait together leave in one write. Gives up after `patience` if the peer takes nothing
/// meanwhile; the timer is set only when the sending has to wait, as most finishes at once.
/// Also says how many payload bytes it took from the queue.
async fn send_batch(
    sink: &mut Sink_,
    to_send: &mut mpsc::UnboundedReceiver<Bytes>,
    first: Bytes,
    patience: Duration,
) -> (Sent, usize) {
    let mut taken = 0;
    let sent = {
        let send = async {
            let mut next = Some(first);
            while let Some(payload) = next.take() {
                taken += payload.len();
                // Answers are serialized JSON: always UTF-8.
                if let Ok(text) = Utf8Bytes::try_from(payload) {
                    sink.feed(Message::Text(text)).await?;
                }
                next = to_send.try_recv().ok();
            }
            sink.flush().await
        };
        let mut send = std::pin::pin!(send);
        match futures::poll!(send.as_mut()) {
            Poll::Ready(sent) => Ok(sent),
            Poll::Pending => tokio::time::timeout(patience, send).await,
        }
    };
    (sent, taken)
}

impl Drop for Writer {
    /// A session waiting for room learns that the writer is gone.
    fn drop(&mut self) {
        self.queued.room.wake();
    }
}

/// A WebSocket connection's payloads, for the session.
pub struct Inbound {
    frames: mpsc::Receiver<io::Result<Frame>>,
    /// When the session took the last frame: its reader had read it before.
    last: Option<std::time::Instant>,
}

impl Stream for Inbound {
    type Item = io::Result<Frame>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let next = self.frames.poll_recv(cx);
        if let Poll::Ready(Some(Ok(_))) = next {
            self.last = Some(std::time::Instant::now());
        }
        next
    }
}

impl FrameSource for Inbound {
    fn has_buffered(&self) -> bool {
        !self.frames.is_empty()
    }

    fn received(&self) -> Option<std::time::Instant> {
        self.last
    }
}

/// The bytes of a connection's answers handed to its writer and not yet written.
#[derive(Default)]
struct QueuedBytes {
    bytes: AtomicUsize,
    room: AtomicWaker,
}

impl QueuedBytes {
    fn written(&self, len: usize) {
        self.bytes.fetch_sub(len, Ordering::AcqRel);
        self.room.wake();
    }

    fn has_room(&self) -> bool {
        self.bytes.load(Ordering::Acquire) < OUTBOUND_BYTES
    }
}

/// Where a WebSocket connection's answers go, one text frame each.
pub struct Outbound {
    /// `None` once closed: the writer sends the closing frame when the last sender is gone.
    outbound: Option<mpsc::UnboundedSender<Bytes>>,
    queued: Arc<QueuedBytes>,
}

fn gone<T>(_: T) -> io::Error {
    io::ErrorKind::BrokenPipe.into()
}

impl Sink<Bytes> for Outbound {
    type Error = io::Error;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let writer_gone = || {
            self.outbound
                .as_ref()
                .is_none_or(|sender| sender.is_closed())
        };
        if writer_gone() {
            return Poll::Ready(Err(gone(())));
        }
        if self.queued.has_room() {
            return Poll::Ready(Ok(()));
        }
        self.queued.room.register(cx.waker());
        if self.queued.has_room() || writer_gone() {
            Poll::Ready(Ok(()))
        } else {
            Poll::Pending
        }
    }

    fn start_send(self: Pin<&mut Self>, payload: Bytes) -> io::Result<()> {
        let sender = self.outbound.as_ref().ok_or_else(|| gone(()))?;
        self.queued.bytes.fetch_add(payload.len(), Ordering::AcqRel);
        sender.send(payload).map_err(gone)
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.outbound = None;
        Poll::Ready(Ok(()))
    }
}
