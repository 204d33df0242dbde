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
//! A [`Server`] is a cheap handle: clone it to serve any number of connections at once, each
//! its own session (its own lifecycle, notifier, cancellations and drain) over the same bound
//! methods and whatever state they share. [`Server::run_stdio`] runs a stdio server to
//! completion, signals and the groups' shutdown hooks included.
//!
//! The builder binds `initialize` and `shutdown` unless the tool author does; everything else
//! is up to the tool author. The session runs through the stack [`wsp_middleware::standard_stack`] builds, with
//! the builder's own layers at the positions they were given (see
//! [`wsp_middleware::stack`]); the server never assembles a stack of its own.

use std::convert::Infallible;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::Sink;
use schemars::JsonSchema;
use serde::Serialize;
use tokio::io::{AsyncRead, AsyncWrite};
use tower::{Layer, Service};
use wsp_middleware::{standard_stack, BoxSession, ExitStatus, LayerPosition, Notify, StackConfig};
use wsp_protocol::method::Method;
use wsp_protocol::results::ServerInfo;
use wsp_protocol::schema::MethodSchema;
use wsp_protocol::{ErrorObjectOwned, Notification, Params, Request, Response};

use crate::codec::DEFAULT_MAX_FRAME_BYTES;
use wsp_middleware::notifier::Notifier;
use wsp_middleware::router::Router;

use crate::capabilities::{self, BindFn, Facts, MethodGroup};
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
    max_frame_bytes: usize,
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
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
        }
    }

    /// Binds the typed method `M` (see [`Router::method`]).
    pub fn method<M, S>(mut self, service: S) -> Self
    where
        M: Method,
        S: Service<M::Params, Response = M::Result, Error = ErrorObjectOwned>
            + Clone
            + Send
            + Sync
            + 'static,
        S::Future: Send + 'static,
        M::Result: Send + 'static,
    {
        self.router = self.router.method::<M, S>(service);
        self
    }

    /// Binds `method` to a service of validated params `P` (see [`Router::route`]).
    pub fn route<P, S, R>(mut self, method: &str, service: S) -> Self
    where
        P: Params,
        S: Service<P, Response = R, Error = ErrorObjectOwned> + Clone + Send + Sync + 'static,
        S::Future: Send + 'static,
        R: Serialize + JsonSchema + Send + 'static,
    {
        self.router = self.router.route(method, service);
        self
    }

    /// Binds `method` to an untyped service (see [`Router::route_raw`]).
    pub fn route_raw<S>(mut self, method: &str, service: S, schema: MethodSchema) -> Self
    where
        S: Service<Request, Response = Response, Error = Infallible>
            + Clone
            + Send
            + Sync
            + 'static,
        S::Future: Send + 'static,
    {
        self.router = self.router.route_raw(method, service, schema);
        self
    }

    /// Applies `f` to the router: for binding a group of methods at once.
    pub fn with_router(mut self, f: impl FnOnce(Router) -> Router) -> Self {
        self.router = f(self.router);
        self
    }

    /// Adds a plain tower layer on the request path, in front of the lifecycle gate: it sees
    /// every request the session reads and may answer it itself or pass it on; notifications
    /// bypass it. Layers added later wrap those added earlier. A layer that calls its inner
    /// service synchronously from `call` keeps the lifecycle's read-order decisions intact.
    pub fn layer<L>(self, layer: L) -> Self
    where
        L: Layer<BoxSession> + Clone + Send + Sync + 'static,
        L::Service:
            Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
        <L::Service as Service<Request>>::Future: Send + 'static,
    {
        self.request_layer_at(LayerPosition::BeforeLifecycle, layer)
    }

    /// Adds a plain tower layer on the request path at `position`.
    pub fn request_layer_at<L>(self, position: LayerPosition, layer: L) -> Self
    where
        L: Layer<BoxSession> + Clone + Send + Sync + 'static,
        L::Service:
            Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
        <L::Service as Service<Request>>::Future: Send + 'static,
    {
        self.edit_stack(move |mut stack| {
            stack.request_layer(position, layer.clone());
            stack
        })
    }

    /// Adds a layer that sees requests, notifications and the end of input (its service
    /// implements [`Notify`]) at `position`.
    pub fn session_layer<L>(self, position: LayerPosition, layer: L) -> Self
    where
        L: Layer<BoxSession> + Clone + Send + Sync + 'static,
        L::Service: Service<Request, Response = Response, Error = Infallible>
            + Notify
            + Clone
            + Send
            + 'static,
        <L::Service as Service<Request>>::Future: Send + 'static,
    {
        self.edit_stack(move |mut stack| {
            stack.layer(position, layer.clone());
            stack
        })
    }

    /// Binds methods for each connection with that connection's notifier, which sends
    /// notifications to its client (a handler keeps a clone).
    pub fn with_notifier(
        self,
        bind: impl Fn(Router, &Notifier) -> Router + Send + Sync + 'static,
    ) -> Self {
        self.group(BindFn(bind))
    }

    /// Adds a method group: its methods, bound for each connection, its `initialize` facts
    /// and its shutdown hook (see [`MethodGroup`]).
    pub fn group(mut self, group: impl MethodGroup) -> Self {
        self.groups.push(Arc::new(group));
        self
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

    /// How long the drain waits for in-flight requests (default 5 s).
    pub fn drain_timeout(self, timeout: Duration) -> Self {
        self.edit_stack(move |stack| stack.drain_deadline(timeout))
    }

    /// How many handlers run at once (default 64, at least 1). Requests past it wait for a
    /// slot; reading goes on while they hold less than [`ServerBuilder::max_queued_bytes`].
    pub fn concurrency_limit(self, limit: usize) -> Self {
        self.edit_stack(move |stack| stack.handler_limit(limit))
    }

    /// How many bytes the requests waiting for a handler slot may hold (default 64 MiB, at
    /// least 1); once they hold that many, reading pauses until one of them starts. A request
    /// counts its size in memory (see [`wsp_middleware::HandlerLimitLayer::max_queued_bytes`]).
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
        let (unused, _queue) = Notifier::channel();
        let listed = bind_groups(self.router.clone(), &self.groups, &unused);
        let (router, facts) = capabilities::bind_lifecycle_methods(
            self.router,
            listed,
            &self.info,
            &self.groups,
            &self.facts,
        );
        let listed = bind_groups(router.clone(), &self.groups, &unused);
        Server {
            shared: Arc::new(Shared {
                router,
                listed,
                groups: self.groups,
                stack: self.stack,
                methods: facts.methods(),
                facts,
                max_frame_bytes: self.max_frame_bytes,
            }),
        }
    }
}

fn bind_groups(router: Router, groups: &[Arc<dyn MethodGroup>], notifier: &Notifier) -> Router {
    groups
        .iter()
        .fold(router, |router, group| group.bind(router, notifier))
}

/// A server: clone it to serve any number of connections, at once.
#[derive(Clone)]
pub struct Server {
    shared: Arc<Shared>,
}

struct Shared {
    /// Everything bound but the groups' methods.
    router: Router,
    /// Everything bound, for the schema document.
    listed: Router,
    groups: Vec<Arc<dyn MethodGroup>>,
    stack: Vec<StackEdit>,
    facts: Facts,
    methods: Vec<String>,
    max_frame_bytes: usize,
}

impl Server {
    /// What `initialize` answers.
    pub fn capabilities(&self) -> &Facts {
        &self.shared.facts
    }

    /// The bound request methods, sorted, each once.
    pub fn methods(&self) -> &[String] {
        &self.shared.methods
    }

    /// The JSON Schema document of this server's methods, notifications and errors; its
    /// canonical SHA-256 is the `schema.fingerprint` `initialize` reports.
    pub fn schema_document(&self) -> serde_json::Value {
        self.shared.listed.schema_document()
    }

    /// Serves one connection over a byte stream until the session ends; returns the exit
    /// status the process should end with (0 at EOF or after `shutdown`, 1 for `exit` without
    /// `shutdown`).
    pub async fn serve<R, W>(self, reader: R, writer: W) -> ExitStatus
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        let (input, output) = transport::frame_bytes(reader, writer, self.shared.max_frame_bytes);
        self.serve_transport(input, output).await
    }

    /// Serves one connection of any transport until its session ends (see [`Server::serve`]).
    pub async fn serve_connection<C: Connection>(self, connection: C) -> ExitStatus {
        let (input, output) = connection.open(self.shared.max_frame_bytes);
        self.serve_transport(input, output).await
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
        let (input, output) = transport::stdio::stdio().open(self.shared.max_frame_bytes);
        let input = crate::stdio::UntilTerminated::new(input);
        self.serve_transport(input, output).await
    }

    /// Runs a stdio server to completion on a runtime of its own: serves stdin and stdout
    /// (see [`Server::serve_stdio`]), then runs the method groups' shutdown hooks (see
    /// [`Server::shutdown`]); returns the exit status the process should end with (2 when
    /// no runtime can be started).
    pub fn run_stdio(self) -> ExitStatus {
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(error) => {
                tracing::error!(%error, "cannot start the async runtime");
                eprintln!(
                    "{}: cannot start the async runtime: {error}",
                    self.shared.facts_name()
                );
                return 2;
            }
        };
        let status = runtime.block_on(self.clone().serve_stdio());
        self.shutdown();
        // A stdin that is not a pipe is read on the blocking pool, whose thread may still be
        // blocked in read(2); don't wait for it.
        runtime.shutdown_background();
        status
    }

    /// Runs every method group's shutdown hook: whatever their work left running (nothing
    /// should be, after a drain) ends here. For a process that is about to exit.
    pub fn shutdown(&self) {
        for group in &self.shared.groups {
            group.shutdown();
        }
    }

    /// Serves a message transport: payloads in (with the codec's reports of dropped input),
    /// payloads out. A stream of whole messages goes in through [`runtime::Messages`].
    pub async fn serve_transport<I, O>(self, input: I, output: O) -> ExitStatus
    where
        I: FrameSource,
        O: Sink<Bytes, Error = io::Error> + Unpin,
    {
        let (notifier, notifications) = Notifier::channel();
        let router = bind_groups(self.shared.router.clone(), &self.shared.groups, &notifier);
        let config = self
            .shared
            .stack
            .iter()
            .fold(StackConfig::default(), |config, edit| edit(config));
        let (stack, _handles) = standard_stack(router, config);
        let options = RuntimeOptions::default();
        runtime::serve(stack, input, output, notifications, options).await
    }
}

impl Shared {
    fn facts_name(&self) -> &str {
        self.facts
            .get("server_info")
            .and_then(|info| info.get("name"))
            .and_then(serde_json::Value::as_str)
            .unwrap_or("wsp")
    }
}

/// Whether an accept error is about the one connection being accepted.
fn is_about_one_peer(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
    )
}
