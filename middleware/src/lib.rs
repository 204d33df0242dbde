//! Tower layers of a WSP server.
//!
//! Every service here is a `tower::Service<Call, Response = Response, Error = Infallible>`:
//! failures are JSON-RPC error responses, never `Err`. Backpressure travels through `poll_ready`,
//! which each layer forwards to the service it wraps.
//!
//! A session is one tower stack: requests go through `Service<Call>::call`, notifications
//! through [`Notify::notify`], and the end of input through [`Notify::input_ended`]; every layer
//! here implements both halves. Every layer is ready unless the requests waiting for a handler
//! slot hold the handler limit's queue (64 MiB by default), so reading waits for a handler only
//! then.
//!
//! What the stack is and in which order it decides is in [`stack`]; the read-time step that
//! keeps every read-order decision out of the layers' and handlers' futures is in [`call`];
//! the one handler shape is in [`handler`].
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod call;
pub mod cancel;
pub mod catch_panic;
pub mod concurrency;
pub mod context;
pub mod drain;
pub mod handler;
pub mod lifecycle;
pub mod notifier;
pub mod notify;
pub mod router;
pub mod stack;
pub mod trace;
pub mod validation;

pub use call::{Call, Extensions, ReadTime};
pub use cancel::{Cancel, CancelLayer, CANCEL_REQUEST};
pub use catch_panic::{CatchPanic, CatchPanicLayer};
pub use concurrency::{
    HandlerLimit, HandlerLimitLayer, StartGate, DEFAULT_HANDLER_LIMIT, DEFAULT_MAX_QUEUED_BYTES,
};
pub use context::{Cancelled, Connection, ConnectionId, Context};
pub use drain::{Drain, DrainLayer, DrainReport, DrainService, DEFAULT_DRAIN_DEADLINE};
pub use handler::{handler_fn, read_ordered, Handler, IntoHandler};
pub use lifecycle::{Lifecycle, LifecycleState};
pub use notifier::Notifier;
pub use notify::{BoxSession, ExitStatus, Notify, RequestsOnly};
pub use router::{Dispatch, FlowHandler, Router};
pub use stack::{
    standard_stack, SessionLayer, SessionService, Slot, StackConfig, StackHandles, StandardStack,
    TowerLayer,
};
pub use trace::{Trace, TraceLayer};

use wsp_protocol::{error, Id, Response};

/// What a response future answers if it is polled again after completing (a caller bug; it must
/// not panic the server).
pub fn polled_after_completion() -> Response {
    Response::error(
        Id::Null,
        error::internal_error("response future polled after completion"),
    )
}
