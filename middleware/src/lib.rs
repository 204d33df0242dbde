//! Tower layers of a WSP server.
//!
//! Every service here is a `tower::Service<Request, Response = Response, Error = Infallible>`:
//! failures are JSON-RPC error responses, never `Err`. Backpressure travels through `poll_ready`,
//! which each layer forwards to the service it wraps.
//!
//! A session is one tower stack: requests go through `Service<Request>::call`, notifications
//! through [`Notify::notify`], and the end of input through [`Notify::input_ended`]; every layer
//! here implements both halves. The runtime calls the stack in read order, so every decision a
//! layer takes in `call` or `notify` (the lifecycle gate's, above all) follows read order, and
//! every layer is ready unless the requests waiting for a handler slot hold the handler limit's
//! queue (64 MiB by default), so reading waits for a handler only then.
//!
//! The stack, outermost first, as [`standard_stack`] builds it:
//!
//! | layer | module | what it does |
//! | --- | --- | --- |
//! | [`TraceLayer`] | [`trace`] | one `request` span per request; records duration and outcome |
//! | [`CatchPanicLayer`] | [`catch_panic`] | a panicking handler answers `-32603` |
//! | [`DrainLayer`] | [`drain`] | counts requests in flight; at the end of input, cancels them at the deadline |
//! | [`CancelLayer`] | [`cancel`] | `$/cancelRequest` cancels a running request (`-32800`) |
//! | [`LifecycleLayer`] | [`lifecycle`] | `-32002` before `initialize`, `-32600` after `shutdown`; `exit` ends the session |
//! | [`HandlerLimitLayer`] | [`concurrency`] | at most N handlers run at once; reading goes on while the requests waiting for a slot hold less than its queue's bytes |
//! | [`Router`] | [`router`] | dispatches by method; `-32601` for unknown methods |
//! | [`ValidateParamsLayer`] | [`validation`] | `-32602` listing every violation; typed handlers |
//!
//! This order is the order of checks the protocol requires: JSON-RPC shape (the runtime), then
//! the lifecycle gate, then method lookup, then params, then the handler.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod cancel;
pub mod catch_panic;
pub mod concurrency;
pub mod drain;
pub mod lifecycle;
pub mod notifier;
pub mod notify;
pub mod router;
pub mod stack;
pub mod trace;
pub mod validation;

pub use cancel::{Cancel, CancelLayer, CANCEL_REQUEST};
pub use catch_panic::{CatchPanic, CatchPanicLayer};
pub use concurrency::{
    HandlerLimit, HandlerLimitLayer, DEFAULT_HANDLER_LIMIT, DEFAULT_MAX_QUEUED_BYTES,
};
pub use drain::{Drain, DrainLayer, DrainReport, DrainService, DEFAULT_DRAIN_DEADLINE};
pub use lifecycle::{Lifecycle, LifecycleGate, LifecycleLayer, LifecycleState};
pub use notifier::Notifier;
pub use notify::{BoxSession, ExitStatus, Notify, RequestsOnly, RequestsOnlyLayer};
pub use router::Router;
pub use stack::{standard_stack, LayerPosition, Slot, StackConfig, StackHandles, StandardStack};
pub use trace::{Trace, TraceLayer};
pub use validation::{handler_fn, typed, ValidateParams, ValidateParamsLayer};

use wsp_protocol::{error, Id, Response};

/// What a response future answers if it is polled again after completing (a caller bug; it must
/// not panic the server).
pub fn polled_after_completion() -> Response {
    Response::error(
        Id::Null,
        error::internal_error("response future polled after completion"),
    )
}
