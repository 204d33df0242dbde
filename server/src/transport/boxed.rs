//! Connections and listeners of any kind behind one type: [`BoxConnection`], [`BoxListener`].
//!
//! A server that listens on several kinds of socket at once (a Unix socket and a WebSocket,
//! say) serves them through [`Server::run_listeners`](crate::Server::run_listeners), which
//! takes them boxed.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::{Sink, Stream};
use wsp_middleware::Extensions;

use super::{Connection, Listener};
use crate::codec::Frame;
use crate::runtime::FrameSource;

/// Any connection's input.
pub struct BoxInput(Box<dyn FrameSource + Send>);

impl Stream for BoxInput {
    type Item = io::Result<Frame>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut *self.0).poll_next(cx)
    }
}

impl FrameSource for BoxInput {
    fn has_buffered(&self) -> bool {
        self.0.has_buffered()
    }

    fn poll_terminated(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.0.poll_terminated(cx)
    }

    fn received(&self) -> Option<std::time::Instant> {
        self.0.received()
    }
}

/// Any connection's output.
pub type BoxOutput = Pin<Box<dyn Sink<Bytes, Error = io::Error> + Send>>;

type Opener = Box<dyn FnOnce(usize) -> (BoxInput, BoxOutput) + Send>;

/// A connection of any kind.
pub struct BoxConnection {
    facts: Extensions,
    open: Opener,
}

impl BoxConnection {
    /// Boxes `connection`, asking it to describe itself now.
    pub fn new<C: Connection>(connection: C) -> Self {
        let facts = super::facts_of(&connection);
        BoxConnection {
            facts,
            open: Box::new(move |max_frame_bytes| {
                let (input, output) = connection.open(max_frame_bytes);
                (BoxInput(Box::new(input)), Box::pin(output))
            }),
        }
    }

    /// What the connection said about its peer.
    pub fn facts(&self) -> &Extensions {
        &self.facts
    }

    /// Opens it, taking what it said about its peer along.
    pub(crate) fn open_described(
        self,
        max_frame_bytes: usize,
    ) -> (BoxInput, BoxOutput, Extensions) {
        let (input, output) = (self.open)(max_frame_bytes);
        (input, output, self.facts)
    }
}

type Accepting<'a> = Pin<Box<dyn Future<Output = io::Result<BoxConnection>> + Send + 'a>>;

trait ErasedListener: Send {
    fn accept(&mut self) -> Accepting<'_>;
}

impl<L: Listener> ErasedListener for L {
    fn accept(&mut self) -> Accepting<'_> {
        Box::pin(async move { Listener::accept(self).await.map(BoxConnection::new) })
    }
}

/// A listener of any kind, with a name for the logs (`unix:/run/wsp.sock`, say).
pub struct BoxListener {
    name: String,
    listener: Box<dyn ErasedListener>,
}

impl BoxListener {
    /// Boxes `listener`, named `name`.
    pub fn new<L: Listener>(name: impl Into<String>, listener: L) -> Self {
        BoxListener {
            name: name.into(),
            listener: Box::new(listener),
        }
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The next connection; an error is about that one attempt unless it says otherwise.
    pub async fn accept(&mut self) -> io::Result<BoxConnection> {
        self.listener.accept().await
    }
}
