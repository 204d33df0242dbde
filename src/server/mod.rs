//! Building a WSP server: bind methods and layers, then serve any byte stream.
//!
//! ```no_run
//! # async fn run() {
//! use wsp::server::ServerBuilder;
//! let server = ServerBuilder::new().build();
//! let status = server.serve(tokio::io::stdin(), tokio::io::stdout()).await;
//! std::process::exit(status);
//! # }
//! ```
//!
//! The builder always binds `initialize` and `shutdown`; everything else is up to the tool
//! author. The stack a request passes through, outermost first: tracing, catch-panic, drain,
//! concurrency limit, the builder's own layers, the lifecycle gate, the router, params
//! validation, the handler.

mod capabilities;

pub use capabilities::ServerFacts;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tower::{Layer, Service, ServiceBuilder};
use wsp_middleware::{
    CatchPanicLayer, ConcurrencyLimitLayer, Drain, Lifecycle, LifecycleLayer, TraceLayer,
};
use wsp_protocol::{Capabilities, ErrorObjectOwned, Notification, Params, Request, Response};

use crate::codec::DEFAULT_MAX_FRAME_BYTES;
use crate::router::{MethodService, Router};
use crate::runtime::{self, RuntimeOptions};

type WrapFn = Box<dyn FnOnce(MethodService) -> MethodService + Send>;

/// Assembles a [`Server`].
pub struct ServerBuilder {
    router: Router,
    layers: Vec<WrapFn>,
    facts: ServerFacts,
    max_frame_bytes: usize,
    drain_timeout: Duration,
    concurrency_limit: usize,
    on_notification: Option<runtime::NotificationHandler>,
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
            layers: Vec::new(),
            facts: ServerFacts::default(),
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
            drain_timeout: wsp_middleware::drain::DEFAULT_DRAIN_DEADLINE,
            concurrency_limit: 64,
            on_notification: None,
        }
    }

    /// Binds `method` to a service of validated params `P` (see [`Router::route`]).
    pub fn route<P, S, R>(mut self, method: &str, service: S) -> Self
    where
        P: Params,
        S: Service<P, Response = R, Error = ErrorObjectOwned> + Clone + Send + Sync + 'static,
        S::Future: Send + 'static,
        R: Serialize + Send + 'static,
    {
        self.router = self.router.route(method, service);
        self
    }

    /// Binds `method` to an untyped service (see [`Router::route_raw`]).
    pub fn route_raw<S>(mut self, method: &str, service: S, schema: Value) -> Self
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

    /// Adds a tower layer in front of the lifecycle gate: it sees every request (after the
    /// concurrency limit) and may answer it itself or pass it on. Layers added later wrap
    /// those added earlier. A layer that calls its inner service synchronously from `call`
    /// keeps the lifecycle's read-order decisions intact.
    pub fn layer<L>(mut self, layer: L) -> Self
    where
        L: Layer<MethodService> + Send + 'static,
        L::Service: Service<Request, Response = Response, Error = Infallible>
            + Clone
            + Send
            + Sync
            + 'static,
        <L::Service as Service<Request>>::Future: Send + 'static,
    {
        self.layers.push(Box::new(move |inner| {
            MethodService::new(layer.layer(inner))
        }));
        self
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
        self.drain_timeout = timeout;
        self
    }

    /// How many requests run at once before reading pauses (default 64, at least 1).
    pub fn concurrency_limit(mut self, limit: usize) -> Self {
        self.concurrency_limit = limit.max(1);
        self
    }

    /// Handles notifications other than `exit`, in the order they are read.
    pub fn on_notification(
        mut self,
        handler: impl Fn(Notification) + Send + Sync + 'static,
    ) -> Self {
        self.on_notification = Some(Arc::new(handler));
        self
    }

    /// Binds `initialize` and `shutdown` and freezes the method list.
    pub fn build(self) -> Server {
        let capabilities = capabilities::bind_lifecycle_methods(self.router, &self.facts);
        let (router, capabilities) = capabilities;
        Server {
            router,
            layers: self.layers,
            capabilities,
            max_frame_bytes: self.max_frame_bytes,
            drain_timeout: self.drain_timeout,
            concurrency_limit: self.concurrency_limit,
            on_notification: self.on_notification,
        }
    }
}

/// A server ready to serve one connection.
pub struct Server {
    router: Router,
    layers: Vec<WrapFn>,
    capabilities: Capabilities,
    max_frame_bytes: usize,
    drain_timeout: Duration,
    concurrency_limit: usize,
    on_notification: Option<runtime::NotificationHandler>,
}

impl Server {
    /// What `initialize` answers.
    pub fn capabilities(&self) -> &Capabilities {
        &self.capabilities
    }

    /// Serves one connection until EOF or `exit`; returns the exit status the process should
    /// end with (0 at EOF or after `shutdown`, 1 for `exit` without `shutdown`).
    pub async fn serve<R, W>(self, reader: R, writer: W) -> i32
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let lifecycle = Lifecycle::new();
        let drain = Drain::new();
        let gated = LifecycleLayer::new(lifecycle.clone()).layer(self.router);
        let mut inner = MethodService::new(gated);
        for wrap in self.layers {
            inner = wrap(inner);
        }
        let stack = ServiceBuilder::new()
            .layer(TraceLayer::new())
            .layer(CatchPanicLayer::new())
            .layer(drain.layer())
            .layer(ConcurrencyLimitLayer::new(self.concurrency_limit))
            .service(inner);
        let options = RuntimeOptions {
            max_frame_bytes: self.max_frame_bytes,
            drain_timeout: self.drain_timeout,
            on_notification: self.on_notification,
        };
        runtime::serve(stack, lifecycle, drain, options, reader, writer).await
    }
}
