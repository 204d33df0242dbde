//! Tower layers of a WSP server.
//!
//! Every service here is a `tower::Service<Request, Response = Response, Error = Infallible>`:
//! failures are JSON-RPC error responses, never `Err`. Backpressure travels through `poll_ready`,
//! which each layer forwards to the service it wraps.
//!
//! The runtime reads frames in order and, for each request, awaits `ready()` and then `call`s
//! the stack in read order before spawning the returned future, so requests overlap while every
//! decision taken in `call` (the lifecycle gate's, above all) follows read order. Notifications
//! don't go through the stack; the runtime handles `exit` with [`Lifecycle::exit`].
//!
//! The stack, outermost first:
//!
//! | layer | module | what it does |
//! | --- | --- | --- |
//! | [`TraceLayer`] | [`trace`] | one `request` span per request; records duration and outcome |
//! | [`CatchPanicLayer`] | [`catch_panic`] | a panicking handler answers `-32603` |
//! | [`DrainLayer`] | [`drain`] | counts requests in flight; cancels them at the drain deadline |
//! | [`ConcurrencyLimitLayer`] | (tower) | at most N requests run at once; `poll_ready` waits |
//! | [`LifecycleLayer`] | [`lifecycle`] | `-32002` before `initialize`, `-32600` after `shutdown` |
//! | router | (the server's) | dispatches by method; `-32601` for unknown methods |
//! | [`ValidateParamsLayer`] | [`validation`] | `-32602` listing every violation; typed handlers |
//!
//! This order is the order of checks the protocol requires: JSON-RPC shape (the runtime), then
//! the lifecycle gate, then method lookup, then params, then the handler. [`server_layers`]
//! builds everything above the router in this order.
#![warn(missing_docs)]

pub mod catch_panic;
pub mod drain;
pub mod lifecycle;
pub mod trace;
pub mod validation;

pub use catch_panic::{CatchPanic, CatchPanicLayer};
pub use drain::{Drain, DrainLayer, DrainReport, DrainService, DEFAULT_DRAIN_DEADLINE};
pub use lifecycle::{Lifecycle, LifecycleGate, LifecycleLayer, LifecycleState};
pub use tower::limit::ConcurrencyLimitLayer;
pub use trace::{Trace, TraceLayer};
pub use validation::{handler_fn, typed, ValidateParams, ValidateParamsLayer};

use tower::layer::util::{Identity, Stack};
use tower::ServiceBuilder;
use wsp_protocol::{error, Id, Response};

/// The layers [`server_layers`] returns, outermost last in the type (as `ServiceBuilder` nests
/// them).
pub type ServerLayers = Stack<
    LifecycleLayer,
    Stack<
        ConcurrencyLimitLayer,
        Stack<DrainLayer, Stack<CatchPanicLayer, Stack<TraceLayer, Identity>>>,
    >,
>;

/// The stack above the router: trace → catch-panic → drain → concurrency limit → lifecycle gate.
/// Apply it to the router with `server_layers(..).service(router)`.
pub fn server_layers(
    lifecycle: Lifecycle,
    drain: &Drain,
    max_concurrent_requests: usize,
) -> ServiceBuilder<ServerLayers> {
    ServiceBuilder::new()
        .layer(TraceLayer::new())
        .layer(CatchPanicLayer::new())
        .layer(drain.layer())
        .layer(ConcurrencyLimitLayer::new(max_concurrent_requests))
        .layer(LifecycleLayer::new(lifecycle))
}

/// What a response future answers if it is polled again after completing (a caller bug; it must
/// not panic the server).
pub(crate) fn polled_after_completion() -> Response {
    Response::error(
        Id::Null,
        error::internal_error("response future polled after completion"),
    )
}
