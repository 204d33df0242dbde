//! The standard session stack, built in one place: [`standard_stack`].
//!
//! Outermost first, with the places a tool author's layers can go:
//!
//! | layer | requests | notifications and end of input |
//! | --- | --- | --- |
//! | *[`LayerPosition::Outermost`]* | | |
//! | [`Trace`] | one span each | logged at debug |
//! | [`CatchPanic`] | a panic answers `-32603` | a panic is logged |
//! | [`DrainService`] | counted in flight; cancelled at the deadline | end of input starts the drain |
//! | [`Cancel`] | cancellable by id | `$/cancelRequest` cancels |
//! | *[`LayerPosition::BeforeLifecycle`]* (the default) | | |
//! | [`LifecycleGate`] | `-32002` before `initialize`, `-32600` after `shutdown` | `exit` ends the session with its status |
//! | [`HandlerLimit`] | at most N handlers run at once; not ready while the requests waiting for a slot hold its queue's bytes | |
//! | *[`LayerPosition::BeforeRouter`]* | | |
//! | the router | `-32601` for unknown methods, then params validation | handlers by method; unknown ones ignored |
//!
//! Every layer but the handler limit is always ready, and the handler limit is ready unless the
//! requests waiting for a slot hold its queue's bytes (64 MiB by default,
//! [`StackConfig::max_queued_bytes`]): the runtime stops reading for handler capacity only
//! then. A position without custom layers costs nothing: the stack is one concrete type, and
//! only the part under custom layers is boxed.

use std::convert::Infallible;
use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use pin_project::pin_project;
use tower::{Layer, Service};
use wsp_protocol::{Notification, Request, Response};

use crate::notify::{BoxResponseFuture, BoxSession, ExitStatus, Notify, RequestsOnlyLayer};
use crate::{
    Cancel, CancelLayer, CatchPanic, CatchPanicLayer, Drain, DrainService, HandlerLimit,
    HandlerLimitLayer, Lifecycle, LifecycleGate, LifecycleLayer, Trace, TraceLayer,
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
    drain_deadline: Duration,
    handler_limit: usize,
    max_queued_bytes: usize,
    layers: Vec<(LayerPosition, Wrap)>,
}

impl Default for StackConfig {
    fn default() -> Self {
        StackConfig {
            drain_deadline: crate::DEFAULT_DRAIN_DEADLINE,
            handler_limit: crate::DEFAULT_HANDLER_LIMIT,
            max_queued_bytes: crate::DEFAULT_MAX_QUEUED_BYTES,
            layers: Vec::new(),
        }
    }
}

impl StackConfig {
    /// How long the drain waits at the end of input before cancelling (default 5 s).
    pub fn drain_deadline(mut self, deadline: Duration) -> Self {
        self.drain_deadline = deadline;
        self
    }

    /// How many handlers run at once (default 64, at least 1).
    pub fn handler_limit(mut self, limit: usize) -> Self {
        self.handler_limit = limit.max(1);
        self
    }

    /// The bytes that requests waiting for a handler slot may hold before the stack stops
    /// being ready (default 64 MiB, at least 1; see [`HandlerLimitLayer::max_queued_bytes`]).
    pub fn max_queued_bytes(mut self, bytes: usize) -> Self {
        self.max_queued_bytes = bytes.max(1);
        self
    }

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

    /// Applies the layers at `position`; with none there, `service` stays as it is (no box).
    fn wrap<S>(&mut self, position: LayerPosition, service: S) -> Slot<S>
    where
        S: Service<Request, Response = Response, Error = Infallible>
            + Notify
            + Clone
            + Send
            + 'static,
        S::Future: Send + 'static,
    {
        let (mine, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.layers)
            .into_iter()
            .partition(|(at, _)| *at == position);
        self.layers = rest;
        if mine.is_empty() {
            return Slot::Plain(service);
        }
        let mut service = BoxSession::new(service);
        for (_, wrap) in mine {
            service = wrap(service);
        }
        Slot::Layered(service)
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

/// The stack [`standard_stack`] builds around a router `R`.
pub type StandardStack<R> =
    Slot<Trace<CatchPanic<DrainService<Cancel<Slot<LifecycleGate<HandlerLimit<Slot<R>>>>>>>>>;

/// Builds the standard stack around `router` (see the [module docs](self)).
pub fn standard_stack<R>(router: R, mut config: StackConfig) -> (StandardStack<R>, StackHandles)
where
    R: Service<Request, Response = Response, Error = Infallible> + Notify + Clone + Send + 'static,
    R::Future: Send + 'static,
{
    let lifecycle = Lifecycle::new();
    let drain = Drain::with_deadline(config.drain_deadline);

    let routed = config.wrap(LayerPosition::BeforeRouter, router);
    let limit =
        HandlerLimitLayer::new(config.handler_limit).max_queued_bytes(config.max_queued_bytes);
    let gated = LifecycleLayer::new(lifecycle.clone()).layer(limit.layer(routed));
    let gated = config.wrap(LayerPosition::BeforeLifecycle, gated);
    let session = TraceLayer::new()
        .layer(CatchPanicLayer::new().layer(drain.layer().layer(CancelLayer::new().layer(gated))));
    let session = config.wrap(LayerPosition::Outermost, session);
    (session, StackHandles { lifecycle, drain })
}

/// A place in the stack where custom layers may go: the service as it is, or boxed under the
/// layers put there.
#[derive(Debug, Clone)]
pub enum Slot<S> {
    /// No custom layer here.
    Plain(S),
    /// The service under the custom layers, type-erased.
    Layered(BoxSession),
}

impl<S> Service<Request> for Slot<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = SlotFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        match self {
            Slot::Plain(service) => service.poll_ready(cx),
            Slot::Layered(service) => service.poll_ready(cx),
        }
    }

    fn call(&mut self, request: Request) -> Self::Future {
        match self {
            Slot::Plain(service) => SlotFuture::Plain(service.call(request)),
            Slot::Layered(service) => SlotFuture::Layered(service.call(request)),
        }
    }
}

impl<S: Notify> Notify for Slot<S> {
    fn notify(&mut self, notification: &Notification) -> ControlFlow<ExitStatus> {
        match self {
            Slot::Plain(service) => service.notify(notification),
            Slot::Layered(service) => service.notify(notification),
        }
    }

    fn input_ended(&mut self) -> Option<Instant> {
        match self {
            Slot::Plain(service) => service.input_ended(),
            Slot::Layered(service) => service.input_ended(),
        }
    }
}

/// The response of a [`Slot`].
#[pin_project(project = SlotFutureProj)]
pub enum SlotFuture<F> {
    /// The plain service's future.
    Plain(#[pin] F),
    /// The layered service's future.
    Layered(#[pin] BoxResponseFuture),
}

impl<F> Future for SlotFuture<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            SlotFutureProj::Plain(future) => future.poll(cx),
            SlotFutureProj::Layered(future) => future.poll(cx),
        }
    }
}
