//! Building a WSP server: bind methods and layers, then serve any transport.
//!
//! ```no_run
//! # async fn run() {
//! use wsp_server::ServerBuilder;
//! let server = ServerBuilder::new().build();
//! let status = server.serve(tokio::io::stdin(), tokio::io::stdout()).await;
//! std::process::exit(status);
//! # }
//! ```
//!
//! The builder always binds `initialize` and `shutdown`; everything else is up to the tool
//! author. The session runs through the stack [`wsp_middleware::standard_stack`] builds, with
//! the builder's own layers at the positions they were given (see
//! [`wsp_middleware::stack`]); the server never assembles a stack of its own.

use std::io;
use std::time::Duration;

use bytes::Bytes;
use futures::Sink;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::codec::FramedRead;
use wsp_middleware::{standard_stack, ExitStatus, Handler, IntoHandler, SessionLayer, StackConfig};
use wsp_protocol::method::Method;
use wsp_protocol::{Capabilities, Notification, Params};

use crate::codec::{FrameCodec, FrameWriter, DEFAULT_MAX_FRAME_BYTES};
use wsp_middleware::notifier::{NotificationQueue, Notifier};
use wsp_middleware::router::Router;

use crate::capabilities::{self, ServerFacts};
use crate::runtime::{self, FairRead, FrameSource, RuntimeOptions};

/// Bytes read per system call at most.
const IO_CHUNK: usize = 64 * 1024;

/// Assembles a [`Server`].
pub struct ServerBuilder {
    router: Router,
    stack: StackConfig,
    facts: ServerFacts,
    max_frame_bytes: usize,
    notifier: Notifier,
    notifications: NotificationQueue,
}

impl Default for ServerBuilder {
    fn default() -> Self {
        ServerBuilder::new()
    }
}

impl ServerBuilder {
    /// A builder with no methods besides `initialize` and `shutdown`.
    pub fn new() -> Self {
        let (notifier, notifications) = Notifier::channel();
        ServerBuilder {
            router: Router::new(),
            stack: StackConfig::default(),
            facts: ServerFacts::default(),
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            notifier,
            notifications,
        }
    }

    /// Binds the typed method `M` to a handler (see [`Router::method`] and
    /// [`wsp_middleware::handler`]).
    pub fn method<M: Method, K>(
        mut self,
        handler: impl IntoHandler<M::Params, K, Handler: Handler<M::Params, Output = M::Result>>,
    ) -> Self
    where
        M::Params: Send + 'static,
    {
        self.router = self.router.method::<M, K>(handler);
        self
    }

    /// Binds `method` to a handler of params `P` (see [`Router::route`]).
    pub fn route<P: Params + Send + 'static, K>(
        mut self,
        method: &str,
        handler: impl IntoHandler<P, K>,
    ) -> Self {
        self.router = self.router.route(method, handler);
        self
    }

    /// Applies `f` to the router: for binding a group of methods at once.
    pub fn with_router(mut self, f: impl FnOnce(Router) -> Router) -> Self {
        self.router = f(self.router);
        self
    }

    /// Adds a layer to the session stack (see [`SessionLayer`]; a stock tower layer goes in
    /// through [`wsp_middleware::TowerLayer`]). Its read-time part sees every request the
    /// session reads, `initialize` included, before the lifecycle decides; its service wraps
    /// the handler limit and what is below. Layers added later wrap those added earlier.
    pub fn layer(mut self, layer: impl SessionLayer) -> Self {
        self.stack.layer(layer);
        self
    }

    /// A handle for sending notifications to the client of the session this server will
    /// serve.
    pub fn notifier(&self) -> Notifier {
        self.notifier.clone()
    }

    /// Sets the facts `initialize` reports.
    pub fn facts(mut self, facts: ServerFacts) -> Self {
        self.facts = facts;
        self
    }

    /// The largest accepted payload (default 64 MiB).
    pub fn max_frame_bytes(mut self, max: usize) -> Self {
        self.max_frame_bytes = max;
        self
    }

    /// How long the drain waits for in-flight requests (default 5 s).
    pub fn drain_timeout(mut self, timeout: Duration) -> Self {
        self.stack = self.stack.drain_deadline(timeout);
        self
    }

    /// How many handlers run at once (default 64, at least 1). Requests past it wait for a
    /// slot; reading goes on while they hold less than [`ServerBuilder::max_queued_bytes`].
    pub fn concurrency_limit(mut self, limit: usize) -> Self {
        self.stack = self.stack.handler_limit(limit);
        self
    }

    /// How many bytes the requests waiting for a handler slot may hold (default 64 MiB, at
    /// least 1); once they hold that many, reading pauses until one of them starts. A request
    /// counts its size in memory (see [`wsp_middleware::HandlerLimitLayer::max_queued_bytes`]).
    pub fn max_queued_bytes(mut self, bytes: usize) -> Self {
        self.stack = self.stack.max_queued_bytes(bytes);
        self
    }

    /// Handles notifications no layer or bound handler takes, in the order they are read.
    pub fn on_notification(
        mut self,
        handler: impl Fn(Notification) + Send + Sync + 'static,
    ) -> Self {
        self.router = self
            .router
            .other_notifications(move |notification| handler(notification.clone()));
        self
    }

    /// Binds `initialize` and `shutdown` and freezes the method list.
    pub fn build(self) -> Server {
        let (router, capabilities) = capabilities::bind_lifecycle_methods(self.router, &self.facts);
        Server {
            router: router.with_notifier(self.notifier),
            stack: self.stack,
            capabilities,
            max_frame_bytes: self.max_frame_bytes,
            notifications: self.notifications,
        }
    }
}

/// A server ready to serve one connection.
pub struct Server {
    router: Router,
    stack: StackConfig,
    capabilities: Capabilities,
    max_frame_bytes: usize,
    notifications: NotificationQueue,
}

impl Server {
    /// What `initialize` answers.
    pub fn capabilities(&self) -> &Capabilities {
        &self.capabilities
    }

    /// The JSON Schema document of this server's methods, notifications and errors; its
    /// canonical SHA-256 is the `schema.fingerprint` `initialize` reports.
    pub fn schema_document(&self) -> serde_json::Value {
        self.router.schema_document()
    }

    /// Serves one connection over a byte stream until the session ends; returns the exit
    /// status the process should end with (0 at EOF or after `shutdown`, 1 for `exit` without
    /// `shutdown`).
    pub async fn serve<R, W>(self, reader: R, writer: W) -> ExitStatus
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        let codec = FrameCodec::with_max_frame_bytes(self.max_frame_bytes);
        let input = FramedRead::with_capacity(FairRead::new(reader), codec, IO_CHUNK);
        let output = FrameWriter::new(writer);
        self.serve_transport(input, output).await
    }

    /// Serves this process's stdin and stdout (on the reactor when they are pipes, see
    /// [`crate::stdio`]) until the session ends. `SIGTERM` and `SIGINT` end the input as EOF
    /// does: the drain runs, and the exit status is 0.
    pub async fn serve_stdio(self) -> ExitStatus {
        let (stdin, stdout) = (crate::stdio::stdin(), crate::stdio::stdout());
        tracing::debug!(
            stdin_on_reactor = stdin.is_reactor(),
            stdout_on_reactor = stdout.is_reactor(),
            "serving stdio"
        );
        let codec = FrameCodec::with_max_frame_bytes(self.max_frame_bytes);
        let input = crate::stdio::UntilTerminated::new(FramedRead::with_capacity(
            FairRead::new(stdin),
            codec,
            IO_CHUNK,
        ));
        let output = FrameWriter::new(stdout);
        self.serve_transport(input, output).await
    }

    /// Serves a message transport: payloads in (with the codec's reports of dropped input),
    /// payloads out.
    pub async fn serve_transport<I, O>(self, input: I, output: O) -> ExitStatus
    where
        I: FrameSource,
        O: Sink<Bytes, Error = io::Error> + Unpin,
    {
        let (stack, _handles) = standard_stack(self.router, self.stack);
        let options = RuntimeOptions::default();
        runtime::serve(stack, input, output, self.notifications, options).await
    }
}
