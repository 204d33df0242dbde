//! The standard session stack, built in one place: [`standard_stack`].
//!
//! Outermost first, with the places a tool author's layers can go:
//!
//! | layer | requests | notifications and end of input |
//! | --- | --- | --- |
//! | *[`LayerPosition::Outermost`]* | | |
//! | [`Trace`](crate::Trace) | one span each | logged at debug |
//! | [`CatchPanic`](crate::CatchPanic) | a panic answers `-32603` | a panic is logged |
//! | [`DrainService`](crate::DrainService) | counted in flight; cancelled at the deadline | end of input starts the drain |
//! | [`Cancel`](crate::Cancel) | cancellable by id | `$/cancelRequest` cancels |
//! | *[`LayerPosition::BeforeLifecycle`]* (the default) | | |
//! | [`LifecycleGate`](crate::LifecycleGate) | `-32002` before `initialize`, `-32600` after `shutdown` | `exit` ends the session with its status |
//! | [`HandlerLimit`](crate::HandlerLimit) | at most N handlers run at once | |
//! | *[`LayerPosition::BeforeRouter`]* | | |
//! | the router | `-32601` for unknown methods, then params validation | handlers by method; unknown ones ignored |
//!
//! Every layer is always ready, so the runtime never stops reading for handler capacity.

use std::convert::Infallible;
use std::time::Duration;

use tower::{Layer, Service};
use wsp_protocol::{Request, Response};

use crate::notify::{BoxSession, Notify, RequestsOnlyLayer};
use crate::{
    CancelLayer, CatchPanicLayer, Drain, HandlerLimitLayer, Lifecycle, LifecycleLayer, TraceLayer,
};

/// Where a custom layer goes in the standard stack (see the [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerPosition {
    /// Outside everything, tracing included.
    Outermost,
    /// Inside the cancellation layer, in front of the lifecycle gate: sees every request the
    /// session reads, `initialize` included.
    BeforeLifecycle,
    /// Inside the handler limit, in front of the router: sees only admitted requests, each
    /// holding a handler slot.
    BeforeRouter,
}

type Wrap = Box<dyn FnOnce(BoxSession) -> BoxSession + Send>;

/// What [`standard_stack`] builds: its settings and the tool author's layers.
pub struct StackConfig {
    /// How long the drain waits at the end of input before cancelling.
    pub drain_deadline: Duration,
    /// How many handlers run at once.
    pub handler_limit: usize,
    layers: Vec<(LayerPosition, Wrap)>,
}

impl Default for StackConfig {
    fn default() -> Self {
        StackConfig {
            drain_deadline: crate::DEFAULT_DRAIN_DEADLINE,
            handler_limit: crate::DEFAULT_HANDLER_LIMIT,
            layers: Vec::new(),
        }
    }
}

impl StackConfig {
    /// Adds a layer that sees requests and notifications (its service implements [`Notify`]).
    /// At one position, layers added later wrap those added earlier.
    pub fn layer<L>(&mut self, position: LayerPosition, layer: L)
    where
        L: Layer<BoxSession> + Send + 'static,
        L::Service: Service<Request, Response = Response, Error = Infallible>
            + Notify
            + Clone
            + Send
            + 'static,
        <L::Service as Service<Request>>::Future: Send + 'static,
    {
        let wrap: Wrap = Box::new(move |inner| BoxSession::new(layer.layer(inner)));
        self.layers.push((position, wrap));
    }

    /// Adds a plain tower layer on the request path; notifications bypass it.
    pub fn request_layer<L>(&mut self, position: LayerPosition, layer: L)
    where
        L: Layer<BoxSession> + Send + 'static,
        L::Service:
            Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
        <L::Service as Service<Request>>::Future: Send + 'static,
    {
        self.layer(position, RequestsOnlyLayer::new(layer));
    }

    fn wrap(&mut self, position: LayerPosition, mut service: BoxSession) -> BoxSession {
        let (mine, rest) = std::mem::take(&mut self.layers)
            .into_iter()
            .partition(|(at, _)| *at == position);
        self.layers = rest;
        for (_, wrap) in mine {
            service = wrap(service);
        }
        service
    }
}

/// The handles of a built stack, for a caller that wants to look at its state.
#[derive(Debug, Clone)]
pub struct StackHandles {
    /// The lifecycle the gate keeps.
    pub lifecycle: Lifecycle,
    /// The drain that counts what is in flight.
    pub drain: Drain,
}

/// Builds the standard stack around `router` (see the [module docs](self)).
pub fn standard_stack<R>(router: R, mut config: StackConfig) -> (BoxSession, StackHandles)
where
    R: Service<Request, Response = Response, Error = Infallible> + Notify + Clone + Send + 'static,
    R::Future: Send + 'static,
{
    let lifecycle = Lifecycle::new();
    let drain = Drain::with_deadline(config.drain_deadline);

    let routed = config.wrap(LayerPosition::BeforeRouter, BoxSession::new(router));
    let gated = LifecycleLayer::new(lifecycle.clone())
        .layer(HandlerLimitLayer::new(config.handler_limit).layer(routed));
    let gated = config.wrap(LayerPosition::BeforeLifecycle, BoxSession::new(gated));
    let session = TraceLayer::new()
        .layer(CatchPanicLayer::new().layer(drain.layer().layer(CancelLayer::new().layer(gated))));
    let session = config.wrap(LayerPosition::Outermost, BoxSession::new(session));
    (session, StackHandles { lifecycle, drain })
}
