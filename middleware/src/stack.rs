//! The session stack, built in one place: [`standard_stack`].
//!
//! Every request first gets its **read-time step**, run by the stack itself, synchronously and
//! in read order, before any future is polled (see [`crate::call`]):
//!
//! 1. the read-time part of each custom layer ([`SessionLayer::admit`]), in the order added;
//! 2. the lifecycle: `-32002` before `initialize`, `-32600` after `shutdown`;
//! 3. the router: `-32601` for unknown methods, `-32602` for invalid params, then the
//!    handler's read-time part, and its future is made.
//!
//! The first that answers settles the call; the rest don't run. Then the call goes through
//! the layers' services, outermost first:
//!
//! | service | requests | notifications and end of input |
//! | --- | --- | --- |
//! | [`Trace`] | one span each | logged at debug |
//! | [`CatchPanic`] | a panic answers `-32603` | a panic is logged |
//! | [`DrainService`] | counted in flight; cancelled at the deadline | end of input starts the drain |
//! | [`Cancel`] | cancellable by id | `$/cancelRequest` cancels |
//! | *the custom layers* | whatever they do | whatever they do |
//! | [`HandlerLimit`] | at most N handlers run at once; not ready while the requests waiting for a slot hold its queue's bytes | |
//! | [`Dispatch`] | the handler's future, or the read-time answer | |
//!
//! `exit` ends the session with the lifecycle's status; other notifications go through the
//! services, then to the router's handlers. Because every decision read order makes is taken
//! in the read-time step, a layer's service may do anything in `call`: await first, box an
//! `async move`, call its inner service later. The stack keeps the order.
//!
//! Every service but the handler limit is always ready, and the handler limit is ready unless
//! the requests waiting for a slot hold its queue's bytes (64 MiB by default,
//! [`StackConfig::max_queued_bytes`]). Without custom layers nothing is boxed but the
//! handler's future.

use std::convert::Infallible;
use std::future::Future;
use std::ops::ControlFlow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use pin_project::pin_project;
use tower::{Layer, Service};
use wsp_protocol::{error, methods, Notification, Request, Response};

use crate::call::Call;
use crate::notify::{BoxResponseFuture, BoxSession, ExitStatus, Notify, RequestsOnly};
use crate::router::{Dispatch, Router};
use crate::{
    Cancel, CancelLayer, CatchPanic, CatchPanicLayer, Drain, DrainService, HandlerLimit,
    HandlerLimitLayer, Lifecycle, StartGate, Trace, TraceLayer,
};

/// A service of the session stack: calls in, responses out (failures are error responses),
/// notifications and the end of input through [`Notify`].
pub trait SessionService:
    Service<Call, Response = Response, Error = Infallible, Future: Send + 'static>
    + Notify
    + Clone
    + Send
    + 'static
{
}

impl<S> SessionService for S where
    S: Service<Call, Response = Response, Error = Infallible, Future: Send + 'static>
        + Notify
        + Clone
        + Send
        + 'static
{
}

/// A layer of the session stack: an optional read-time part and a service around the rest.
///
/// [`SessionLayer::admit`] is where a layer's decisions go (answering a request itself
/// included): the stack runs it for every request in read order, before the lifecycle and the
/// router decide. [`SessionLayer::layer`] wraps the services below; what that service does
/// in `call` changes no read-order decision. A stock tower layer goes in through
/// [`TowerLayer`].
pub trait SessionLayer: Send + 'static {
    /// The read-time part: may answer the call ([`Call::answer`]) or leave values for the
    /// handler ([`Call::extensions_mut`]). Nothing by default.
    fn admit(&self, call: &mut Call) {
        let _ = call;
    }

    /// Wraps the services below this layer.
    fn layer(&self, inner: BoxSession) -> BoxSession;
}

/// A stock tower layer (`tower::timeout::TimeoutLayer`, `tower::limit::RateLimitLayer`, ...)
/// as a [`SessionLayer`]: its service sees every call, notifications bypass it, and an `Err`
/// it returns (a timeout, say) is answered as `-32603` with the error's text.
#[derive(Debug, Clone)]
pub struct TowerLayer<L> {
    layer: L,
}

impl<L> TowerLayer<L> {
    /// Puts `layer` into the session stack.
    pub fn new(layer: L) -> Self {
        TowerLayer { layer }
    }
}

impl<L> SessionLayer for TowerLayer<L>
where
    L: Layer<BoxSession> + Send + Sync + 'static,
    L::Service: Service<Call, Response = Response> + Clone + Send + 'static,
    <L::Service as Service<Call>>::Error: std::fmt::Display,
    <L::Service as Service<Call>>::Future: Send + 'static,
{
    fn layer(&self, inner: BoxSession) -> BoxSession {
        let requests = ErrorsAnswered {
            inner: self.layer.layer(inner.clone()),
            not_ready: None,
        };
        BoxSession::new(RequestsOnly::new(requests, inner))
    }
}

/// A service whose `Err`s become `-32603` answers.
#[derive(Debug, Clone)]
struct ErrorsAnswered<S> {
    inner: S,
    not_ready: Option<String>,
}

impl<S> Service<Call> for ErrorsAnswered<S>
where
    S: Service<Call, Response = Response>,
    S::Error: std::fmt::Display,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = BoxResponseFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        match std::task::ready!(self.inner.poll_ready(cx)) {
            Ok(()) => {}
            // The session's services don't fail: the next call is answered with the error.
            Err(e) => self.not_ready = Some(e.to_string()),
        }
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: Call) -> BoxResponseFuture {
        let id = call.id().clone();
        if let Some(message) = self.not_ready.take() {
            let response = Response::error(id, error::internal_error(message));
            return Box::pin(std::future::ready(Ok(response)));
        }
        let future = self.inner.call(call);
        Box::pin(async move {
            Ok(match future.await {
                Ok(response) => response,
                Err(e) => Response::error(id, error::internal_error(e.to_string())),
            })
        })
    }
}

/// What [`standard_stack`] builds: its settings and the tool author's layers.
pub struct StackConfig {
    drain_deadline: Duration,
    handler_limit: usize,
    max_queued_bytes: usize,
    layers: Vec<Box<dyn SessionLayer>>,
    lifecycle: Lifecycle,
}

impl Default for StackConfig {
    fn default() -> Self {
        StackConfig {
            lifecycle: Lifecycle::new(),
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

    /// Keeps the session's state in `lifecycle` (a fresh one by default).
    pub fn lifecycle(mut self, lifecycle: Lifecycle) -> Self {
        self.lifecycle = lifecycle;
        self
    }

    /// Adds a layer (see [`SessionLayer`]). Its read-time part runs after those of the layers
    /// added before it; its service wraps theirs.
    pub fn layer(&mut self, layer: impl SessionLayer) {
        self.layers.push(Box::new(layer));
    }
}

/// The handles of a built stack, for a caller that wants to look at its state.
#[derive(Debug)]
pub struct StackHandles {
    /// The lifecycle the read-time step keeps.
    pub lifecycle: Lifecycle,
    /// The drain that counts what is in flight.
    pub drain: Drain,
    /// The gate that holds back requests waiting for a handler slot, for the runtime to close
    /// while its client is not taking the answers.
    pub start_gate: StartGate,
}

/// The services of the standard stack, outermost first.
pub type StandardServices = Trace<CatchPanic<DrainService<Cancel<Slot<HandlerLimit<Dispatch>>>>>>;

/// The standard session stack (see the [module docs](self)): the read-time step, then the
/// services. What the runtime serves.
pub struct StandardStack {
    layers: Vec<Box<dyn SessionLayer>>,
    lifecycle: Lifecycle,
    router: Router,
    services: StandardServices,
}

/// Builds the standard stack around `router` (see the [module docs](self)).
pub fn standard_stack(router: Router, config: StackConfig) -> (StandardStack, StackHandles) {
    let lifecycle = config.lifecycle;
    let drain = Drain::with_deadline(config.drain_deadline);
    let limit =
        HandlerLimitLayer::new(config.handler_limit).max_queued_bytes(config.max_queued_bytes);
    let start_gate = limit.start_gate();
    let limited = limit.layer(Dispatch);
    let custom = if config.layers.is_empty() {
        Slot::Plain(limited)
    } else {
        let mut service = BoxSession::new(limited);
        for layer in config.layers.iter().rev() {
            service = layer.layer(service);
        }
        Slot::Layered(service)
    };
    let services = TraceLayer::new()
        .layer(CatchPanicLayer::new().layer(drain.layer().layer(CancelLayer::new().layer(custom))));
    let stack = StandardStack {
        layers: config.layers,
        lifecycle: lifecycle.clone(),
        router,
        services,
    };
    let handles = StackHandles {
        lifecycle,
        drain,
        start_gate,
    };
    (stack, handles)
}

impl StandardStack {
    /// The read-time step of one call (see the [module docs](self)).
    fn admit(&mut self, call: &mut Call) {
        for layer in &self.layers {
            layer.admit(call);
            if call.is_answered() {
                return;
            }
        }
        if let Err(rejection) = self.lifecycle.admit(call.request()) {
            tracing::debug!(method = %call.method, code = rejection.code(), "lifecycle: rejected");
            return call.reject(rejection);
        }
        self.router.admit(call);
    }
}

impl Service<Request> for StandardStack {
    type Response = Response;
    type Error = Infallible;
    type Future = <StandardServices as Service<Call>>::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        std::task::ready!(self.router.poll_ready(cx));
        self.services.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let mut call = Call::new(request);
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| self.admit(&mut call))) {
            let response = crate::catch_panic::panic_response(
                call.id().clone(),
                &call.method,
                payload.as_ref(),
            );
            call.answer(response);
        }
        self.services.call(call)
    }
}

impl Notify for StandardStack {
    /// Only the router's flow handlers hold notifications back (the layers never do).
    fn poll_notify_ready(
        &mut self,
        notification: &Notification,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<()> {
        self.router.poll_notify_ready(notification, cx)
    }

    fn notify(&mut self, notification: &Notification) -> ControlFlow<ExitStatus> {
        if notification.method == methods::EXIT {
            tracing::debug!("exit");
            return ControlFlow::Break(self.lifecycle.exit());
        }
        self.services.notify(notification)?;
        let routed = catch_unwind(AssertUnwindSafe(|| self.router.notify(notification)));
        routed.unwrap_or_else(|payload| {
            tracing::error!(
                method = %notification.method,
                panic = crate::catch_panic::panic_message(payload.as_ref()),
                "notification handler panicked"
            );
            ControlFlow::Continue(())
        })
    }

    fn input_ended(&mut self) -> Option<Instant> {
        self.services.input_ended()
    }
}

/// Where the custom layers go: the services below as they are, or boxed under the layers.
#[derive(Debug, Clone)]
pub enum Slot<S> {
    /// No custom layer.
    Plain(S),
    /// The services below, type-erased, under the custom layers.
    Layered(BoxSession),
}

impl<S> Service<Call> for Slot<S>
where
    S: Service<Call, Response = Response, Error = Infallible>,
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

    fn call(&mut self, call: Call) -> Self::Future {
        match self {
            Slot::Plain(service) => SlotFuture::Plain(service.call(call)),
            Slot::Layered(service) => SlotFuture::Layered(service.call(call)),
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
