//! Panic containment: a handler that panics answers `-32603` and the server keeps serving.
//!
//! [`CatchPanic`] sits just inside the trace layer, so the span records the `-32603` the client
//! receives. It catches a panic raised while the inner service's `call` runs and while its
//! future is polled, answers the request with `-32603` (naming the panic message when the payload
//! is a string), logs it at error, and drops the panicked future at once so the resources it held
//! (in-flight slots, concurrency permits, child processes) are released. The service itself
//! stays usable for the next request. A panicking notification handler is logged and
//! ignored.

use std::any::Any;
use std::convert::Infallible;
use std::future::Future;
use std::ops::ControlFlow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use pin_project::pin_project;
use tower::{Layer, Service};
use wsp_protocol::{error, Id, Notification, Response};

use crate::call::Call;

use crate::notify::{ExitStatus, Notify};

/// Wraps a service in [`CatchPanic`].
#[derive(Debug, Clone, Copy, Default)]
pub struct CatchPanicLayer;

impl CatchPanicLayer {
    /// A panic-catching layer.
    pub fn new() -> Self {
        CatchPanicLayer
    }
}

impl<S> Layer<S> for CatchPanicLayer {
    type Service = CatchPanic<S>;

    fn layer(&self, inner: S) -> Self::Service {
        CatchPanic { inner }
    }
}

/// Turns panics of the inner service into `-32603` responses.
#[derive(Debug, Clone)]
pub struct CatchPanic<S> {
    inner: S,
}

impl<S> Service<Call> for CatchPanic<S>
where
    S: Service<Call, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Call) -> Self::Future {
        let id = request.id.clone();
        let method = request.method.clone();
        match catch_unwind(AssertUnwindSafe(|| self.inner.call(request))) {
            Ok(future) => ResponseFuture::Running {
                future,
                id: Some(id),
                method,
            },
            Err(payload) => ResponseFuture::Done {
                response: Some(panic_response(id, &method, payload.as_ref())),
            },
        }
    }
}

impl<S: Notify> Notify for CatchPanic<S> {
    /// A panicking notification handler is logged and the session goes on.
    fn notify(&mut self, notification: &Notification) -> ControlFlow<ExitStatus> {
        match catch_unwind(AssertUnwindSafe(|| self.inner.notify(notification))) {
            Ok(flow) => flow,
            Err(payload) => {
                tracing::error!(
                    method = %notification.method,
                    panic = panic_message(payload.as_ref()),
                    "notification handler panicked"
                );
                ControlFlow::Continue(())
            }
        }
    }

    fn input_ended(&mut self) -> Option<Instant> {
        catch_unwind(AssertUnwindSafe(|| self.inner.input_ended())).unwrap_or_else(|payload| {
            tracing::error!(
                panic = panic_message(payload.as_ref()),
                "end-of-input handler panicked"
            );
            None
        })
    }
}

/// The response of a [`CatchPanic`]: the inner future, or `-32603` after a panic.
#[pin_project(project = ResponseFutureProj, project_replace = ResponseFutureOwn)]
#[derive(Debug)]
pub enum ResponseFuture<F> {
    /// The inner future is running.
    Running {
        /// The inner service's future.
        #[pin]
        future: F,
        /// The request's id, for the `-32603` answer.
        id: Option<Id>,
        /// The method, for the log.
        method: String,
    },
    /// The response is known; it is taken on the first poll.
    Done {
        /// The response, `None` once returned.
        response: Option<Response>,
    },
}

impl<F> Future for ResponseFuture<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = Result<Response, Infallible>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let (payload, id, method) = match self.as_mut().project() {
            ResponseFutureProj::Done { response } => {
                return Poll::Ready(Ok(response
                    .take()
                    .unwrap_or_else(crate::polled_after_completion)));
            }
            ResponseFutureProj::Running { future, id, method } => {
                match catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
                    Ok(poll) => return poll,
                    Err(payload) => (payload, id.take(), std::mem::take(method)),
                }
            }
        };
        let response = panic_response(id.unwrap_or(Id::Null), &method, payload.as_ref());
        // Drop the panicked future now; its destructor may panic too, and that one is contained
        // as well.
        let replaced = catch_unwind(AssertUnwindSafe(|| {
            self.as_mut()
                .project_replace(ResponseFuture::Done { response: None });
        }));
        if let Err(payload) = replaced {
            tracing::error!(
                method = %method,
                panic = panic_message(payload.as_ref()),
                "dropping a panicked handler panicked as well"
            );
        }
        Poll::Ready(Ok(response))
    }
}

pub(crate) fn panic_response(id: Id, method: &str, payload: &(dyn Any + Send)) -> Response {
    let message = panic_message(payload);
    tracing::error!(method = %method, id = %id, panic = message, "handler panicked");
    Response::error(
        id,
        error::internal_error(format!("handler panicked: {message}")),
    )
}

/// The panic message when the payload is a string (as `panic!` makes it), else a placeholder.
pub fn panic_message(payload: &(dyn Any + Send)) -> &str {
    if let Some(message) = payload.downcast_ref::<&'static str>() {
        message
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message
    } else {
        "(non-string panic payload)"
    }
}

#[cfg(test)]
mod tests {
    use super::panic_message;

    #[test]
    fn a_payload_that_is_not_a_string_still_says_something() {
        assert_eq!(panic_message(&"static"), "static");
        assert_eq!(panic_message(&String::from("owned")), "owned");
        assert_eq!(panic_message(&42_u32), "(non-string panic payload)");
    }
}
