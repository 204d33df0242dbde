//! Building a WSP server: bind methods, method groups and layers, then serve any number of
//! connections of any transport.
//!
//! ```no_run
//! use wsp_server::ServerBuilder;
//! let status = ServerBuilder::new().build().run_stdio();
//! std::process::exit(status);
//! ```
//!
//! A [`Server`] is a cheap handle: clone it to serve any number of connections at once, each
//! its own session (its own lifecycle, notifier, cancellations and drain) over the same bound
//! methods and whatever state they share. [`Server::run_stdio`] runs a stdio server to
//! completion, signals and the groups' shutdown hooks included.
//!
//! The builder binds `initialize` and `shutdown` unless the tool author does; everything else
//! is up to the tool author. Each session runs through the stack
//! [`wsp_middleware::standard_stack`] builds, with the builder's layers in it (see
//! [`wsp_middleware::stack`]); the server never assembles a stack of its own.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::Sink;
use serde::Serialize;
use tokio::io::{AsyncRead, AsyncWrite};
use wsp_middleware::{
    standard_stack, BoxSession, Call, ExitStatus, Extensions, Handler, IntoHandler, SessionLayer,
    StackConfig,
};
use wsp_protocol::method::Method;
use wsp_protocol::results::ServerInfo;
use wsp_protocol::{Notification, Params};

use crate::codec::DEFAULT_MAX_FRAME_BYTES;
use wsp_middleware::notifier::Notifier;
use wsp_middleware::router::Router;

use crate::broadcast::Broadcast;
use crate::capabilities::{self, Facts, MethodGroup};
use crate::runtime::{self, FrameSource, RuntimeOptions};
use crate::transport::{self, Connection, Listener};

/// A change to the stack configuration, made again for every connection's stack.
type StackEdit = Arc<dyn Fn(StackConfig) -> StackConfig + Send + Sync>;

/// Assembles a [`Server`].
pub struct ServerBuilder {
    router: Router,
    stack: Vec<StackEdit>,
    info: ServerInfo,
    facts: Facts,
    groups: Vec<Arc<dyn MethodGroup>>,
    broadcasts: Vec<Broadcast>,
    max_frame_bytes: usize,
    runtime: RuntimeOptions,
}

impl Default for ServerBuilder {
    fn default() -> Self {
        ServerBuilder::new()
    }
}

impl ServerBuilder {
    /// A builder with no methods besides `initialize` and `shutdown`.
    pub fn new() -> Self {
        ServerBuilder {
            router: Router::new(),
            stack: Vec::new(),
            info: ServerInfo {
                name: "wsp".to_owned(),
                version: env!("CARGO_PKG_VERSION").to_owned(),
            },
            facts: Facts::default(),
            groups: Vec::new(),
            broadcasts: Vec::new(),
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            runtime: RuntimeOptions::default(),
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

    /// Adds a method group: its methods, its `initialize` facts and its shutdown hook (see
    /// [`MethodGroup`]).
    pub fn group(mut self, group: impl MethodGroup) -> Self {
        self.router = group.bind(self.router);
        self.groups.push(Arc::new(group));
        self
    }

    /// Sends what `broadcast` sends to every initialized session of this server (see
    /// [`Broadcast`]).
    pub fn broadcast(mut self, broadcast: Broadcast) -> Self {
        self.broadcasts.push(broadcast);
        self
    }

    /// Adds a layer to every session's stack (see [`SessionLayer`]; a stock tower layer goes
    /// in through [`wsp_middleware::TowerLayer`]). Its read-time part sees every request the
    /// session reads, `initialize` included, before the lifecycle decides; its service wraps
    /// the handler limit and what is below. Layers added later wrap those added earlier.
    pub fn layer<L: SessionLayer + Sync>(self, layer: L) -> Self {
        let layer = Arc::new(layer);
        self.edit_stack(move |mut stack| {
            stack.layer(SharedLayer(Arc::clone(&layer)));
            stack
        })
    }

    /// The server's name in `initialize`'s `server_info` (default `wsp`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.info.name = name.into();
        self
    }

    /// The server's version in `initialize`'s `server_info` (default this crate's).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.info.version = version.into();
        self
    }

    /// Sets a fact `initialize` reports, over whatever the framework and the method groups
    /// set for `key` (see [`Facts`]).
    pub fn fact(mut self, key: &str, value: impl Serialize) -> Self {
        self.facts.set(key, value);
        self
    }

    /// The largest accepted payload (default 64 MiB).
    pub fn max_frame_bytes(mut self, max: usize) -> Self {
        self.max_frame_bytes = max;
        self
    }

    /// How long a session with nothing to do keeps reading after it wrote answers, before its
    /// thread sleeps (default 150 µs; `Duration::ZERO` never). A client that sends its next
    /// request as soon as it read an answer is then read without a wake-up of the server's
    /// thread; a session whose client does not come back that fast stops doing it (see
    /// [`runtime::MISSES_TO_REST`](crate::runtime::MISSES_TO_REST)).
    pub fn busy_poll(mut self, window: Duration) -> Self {
        self.runtime.busy_poll = window;
        self
    }

    /// How long the drain waits for in-flight requests (default 5 s).
    pub fn drain_timeout(self, timeout: Duration) -> Self {
        self.edit_stack(move |stack| stack.drain_deadline(timeout))
    }

    /// How many handlers of one session run at once (default 64, at least 1). Requests past
    /// it wait for a slot; reading goes on while they hold less than
    /// [`ServerBuilder::max_queued_bytes`].
    pub fn concurrency_limit(self, limit: usize) -> Self {
        self.edit_stack(move |stack| stack.handler_limit(limit))
    }

    /// How many bytes the requests of one session waiting for a handler slot may hold
    /// (default 64 MiB, at least 1); once they hold that many, reading pauses until one of
    /// them starts. A request counts its size in memory (see
    /// [`wsp_middleware::HandlerLimitLayer::max_queued_bytes`]).
    pub fn max_queued_bytes(self, bytes: usize) -> Self {
        self.edit_stack(move |stack| stack.max_queued_bytes(bytes))
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

    fn edit_stack(
        mut self,
        edit: impl Fn(StackConfig) -> StackConfig + Send + Sync + 'static,
    ) -> Self {
        self.stack.push(Arc::new(edit));
        self
    }

    /// Binds `initialize` and `shutdown` (unless bound already) and freezes the method list.
    pub fn build(self) -> Server {
        let (router, facts) = capabilities::bind_lifecycle_methods(
            self.router,
            &self.info,
            &self.groups,
            &self.facts,
        );
        Server {
            shared: Arc::new(ServerState {
                methods: router.methods(),
                router,
                groups: self.groups,
                broadcasts: self.broadcasts,
                stack: self.stack,
                facts,
                max_frame_bytes: self.max_frame_bytes,
                runtime: self.runtime,
            }),
        }
    }
}

/// A layer the builder keeps once and puts into every connection's stack.
struct SharedLayer<L>(Arc<L>);

impl<L: SessionLayer + Sync> SessionLayer for SharedLayer<L> {
    fn admit(&self, call: &mut Call) {
        self.0.admit(call);
    }

    fn layer(&self, inner: BoxSession) -> BoxSession {
        self.0.layer(inner)
    }
}

/// A server: clone it to serve any number of connections, at once.
#[derive(Clone)]
pub struct Server {
    shared: Arc<ServerState>,
}

struct ServerState {
    /// Everything bound, `initialize` and `shutdown` included.
    router: Router,
    groups: Vec<Arc<dyn MethodGroup>>,
    broadcasts: Vec<Broadcast>,
    stack: Vec<StackEdit>,
    facts: Facts,
    methods: Vec<String>,
    max_frame_bytes: usize,
    runtime: RuntimeOptions,
}

impl Server {
    fn state(&self) -> &ServerState {
        &self.shared
    }

    /// What `initialize` answers.
    pub fn capabilities(&self) -> &Facts {
        &self.state().facts
    }

    /// The bound request methods, sorted, each once.
    pub fn methods(&self) -> &[String] {
        &self.state().methods
    }

    /// The JSON Schema document of this server's methods, notifications and errors; its
    /// canonical SHA-256 is the `schema.fingerprint` `initialize` reports.
    pub fn schema_document(&self) -> serde_json::Value {
        self.state().router.schema_document()
    }

    /// Serves one connection over a byte stream until the session ends; returns the exit
    /// status the process should end with (0 at EOF or after `shutdown`, 1 for `exit` without
    /// `shutdown`).
    pub async fn serve<R, W>(self, reader: R, writer: W) -> ExitStatus
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        self.serve_connection(transport::ByteStream::new(reader, writer))
            .await
    }

    /// Serves one connection of any transport until its session ends (see [`Server::serve`]).
    pub async fn serve_connection<C: Connection>(self, connection: C) -> ExitStatus {
        let facts = transport::facts_of(&connection);
        let (input, output) = connection.open(self.state().max_frame_bytes);
        self.serve_transport_with(input, output, facts).await
    }

    /// Serves every connection `listener` yields, each in a task of its own, until accepting
    /// fails for a reason other than one peer's (that error is returned).
    pub async fn serve_listener<L: Listener>(self, mut listener: L) -> io::Result<()> {
        loop {
            match listener.accept().await {
                Ok(connection) => {
                    tokio::spawn(self.clone().serve_connection(connection));
                }
                Err(error) if is_about_one_peer(&error) => {
                    tracing::debug!(%error, "a connection failed while being accepted");
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// Serves this process's stdin and stdout (on the reactor when they are pipes, see
    /// [`crate::stdio`]) until the session ends. `SIGTERM` and `SIGINT` end the input as EOF
    /// does: the drain runs, and the exit status is 0.
    pub async fn serve_stdio(self) -> ExitStatus {
        let connection = transport::stdio::stdio();
        let facts = transport::facts_of(&connection);
        let (input, output) = connection.open(self.state().max_frame_bytes);
        let input = crate::stdio::UntilTerminated::new(input);
        self.serve_transport_with(input, output, facts).await
    }

    /// Runs every method group's start hook (see [`MethodGroup::start`]); inside the runtime.
    pub fn start(&self) {
        for group in &self.state().groups {
            group.start();
        }
    }

    /// Runs every method group's [`MethodGroup::shutdown`], in the runtime, once serving has
    /// ended: whatever the groups keep or left running ends here.
    pub async fn shutdown(&self) {
        for group in &self.state().groups {
            group.shutdown().await;
        }
    }

    /// Serves a message transport: payloads in (with the codec's reports of dropped input),
    /// payloads out.
    pub async fn serve_transport<I, O>(self, input: I, output: O) -> ExitStatus
    where
        I: FrameSource,
        O: Sink<Bytes, Error = io::Error> + Unpin,
    {
        self.serve_transport_with(input, output, Extensions::new())
            .await
    }

    /// Serves a message transport whose connection is described by `facts` (every handler's
    /// [`Context::facts`](wsp_middleware::Context::facts)).
    pub async fn serve_transport_with<I, O>(
        self,
        input: I,
        output: O,
        facts: Extensions,
    ) -> ExitStatus
    where
        I: FrameSource,
        O: Sink<Bytes, Error = io::Error> + Unpin,
    {
        let (notifier, notifications) = Notifier::channel();
        let state = self.state();
        let router = state
            .router
            .clone()
            .with_connection(notifier.clone(), facts);
        let config = state
            .stack
            .iter()
            .fold(StackConfig::default(), |config, edit| edit(config));
        let (stack, handles) = standard_stack(router, config);
        for broadcast in &state.broadcasts {
            broadcast.forward(notifier.clone(), handles.lifecycle.clone());
        }
        let options = state.runtime.clone();
        let gate = Some(handles.start_gate);
        runtime::serve(stack, input, output, notifications, options, gate).await
    }

    pub(crate) fn max_frame_bytes(&self) -> usize {
        self.state().max_frame_bytes
    }

    pub(crate) fn name(&self) -> &str {
        self.state()
            .facts
            .get("server_info")
            .and_then(|info| info.get("name"))
            .and_then(serde_json::Value::as_str)
            .unwrap_or("wsp")
    }
}

/// Whether an accept error is about the one connection being accepted.
pub(crate) fn is_about_one_peer(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
    )
}
