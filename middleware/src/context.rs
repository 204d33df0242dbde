//! What a handler's async part works with besides its params: [`Context`].

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::time::Instant;

use tokio::sync::oneshot;
use wsp_protocol::{Id, Request};

use crate::call::Extensions;
use crate::Notifier;

/// One connection's identity, unique in this process: what a request's id is scoped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnectionId(u64);

impl Default for ConnectionId {
    /// A new identity, never given before in this process.
    fn default() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        ConnectionId(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// What every request of one connection shares: its identity, its notifier and the
/// connection's facts.
#[derive(Debug, Default)]
pub struct Connection {
    /// This connection's identity.
    pub id: ConnectionId,
    /// Sends notifications to this connection's client; `None` for a router served without
    /// one.
    pub notifier: Option<Notifier>,
    /// Facts about the connection (its peer, its transport), one value per type.
    pub facts: Extensions,
}

/// A request's context: its id, the connection's notifier and facts, what the read-time step
/// left for it, and a signal for when its work is dropped. Made at read time and moved into
/// the handler's async part.
#[derive(Debug)]
pub struct Context {
    id: Id,
    received: Option<Instant>,
    connection: Arc<Connection>,
    extensions: Extensions,
    dropped: Option<oneshot::Sender<()>>,
}

impl Context {
    pub(crate) fn new(
        request: &Request,
        connection: Arc<Connection>,
        extensions: Extensions,
    ) -> Self {
        Context {
            id: request.id.clone(),
            received: request.received,
            connection,
            extensions,
            dropped: None,
        }
    }

    /// The request's id (what its `environment/output` notifications name).
    pub fn id(&self) -> &Id {
        &self.id
    }

    /// An instant no earlier than the transport's read of this request, when the runtime knows
    /// one ([`Request::received`]): whatever finished before the client sent the request had
    /// finished before it.
    pub fn received(&self) -> Option<Instant> {
        self.received
    }

    /// The connection's identity (a notification naming this request comes on it).
    pub fn connection_id(&self) -> ConnectionId {
        self.connection.id
    }

    /// The connection's notifier, if it has one.
    pub fn notifier(&self) -> Option<&Notifier> {
        self.connection.notifier.as_ref()
    }

    /// The connection's facts.
    pub fn facts(&self) -> &Extensions {
        &self.connection.facts
    }

    /// What the layers' read-time steps left for this request.
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// A future that completes once this request's work is dropped: cancelled by the client
    /// (`$/cancelRequest`), cancelled by the drain, or over because the handler returned. Work
    /// the handler hands to a task of its own can stop on it. Costs nothing until asked for.
    pub fn cancelled(&mut self) -> Cancelled {
        let (dropped, signal) = oneshot::channel();
        self.dropped = Some(dropped);
        Cancelled { signal }
    }
}

/// Completes when the request's work is dropped (see [`Context::cancelled`]).
#[derive(Debug)]
pub struct Cancelled {
    signal: oneshot::Receiver<()>,
}

impl Future for Cancelled {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<()> {
        // The sender is never used: only its drop, with the context, completes the signal.
        Pin::new(&mut self.signal).poll(cx).map(|_| ())
    }
}
