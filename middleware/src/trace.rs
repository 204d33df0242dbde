//! Request tracing: one `tracing` span per request, and one event when it completes.
//!
//! [`Trace`] is the outermost layer of the stack, so its span covers everything below it and
//! records what the client actually receives (a caught panic or a drain cancellation included).
//! The span is named `request` and carries `method` and `id` from the start; when the response
//! is ready it records `duration_ms`, `outcome` (`"ok"` or `"error"`) and, for errors, `code`,
//! then emits one event: at debug for results, at warn for `-32603` (the server's fault) and at
//! info for other errors (the client's). Notifications are logged at debug as they pass.

use std::convert::Infallible;
use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use pin_project::pin_project;
use tower::{Layer, Service};
use tracing::field::Empty;
use tracing::Span;
use wsp_protocol::error::INTERNAL_ERROR;
use wsp_protocol::{Notification, Response};

use crate::call::Call;

use crate::notify::{ExitStatus, Notify};

/// Wraps a service in [`Trace`].
#[derive(Debug, Clone, Copy, Default)]
pub struct TraceLayer;

impl TraceLayer {
    /// A tracing layer.
    pub fn new() -> Self {
        TraceLayer
    }
}

impl<S> Layer<S> for TraceLayer {
    type Service = Trace<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Trace { inner }
    }
}

/// Opens a `request` span around each request and records its outcome.
#[derive(Debug, Clone)]
pub struct Trace<S> {
    inner: S,
}

impl<S> Service<Call> for Trace<S>
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
        let span = tracing::info_span!(
            "request",
            method = %request.method,
            id = %request.id,
            duration_ms = Empty,
            outcome = Empty,
            code = Empty,
        );
        let started = Instant::now();
        let future = span.in_scope(|| self.inner.call(request));
        ResponseFuture {
            future,
            span,
            started,
        }
    }
}

impl<S: Notify> Notify for Trace<S> {
    fn notify(&mut self, notification: &Notification) -> ControlFlow<ExitStatus> {
        let flow = self.inner.notify(notification);
        tracing::debug!(method = %notification.method, ends_session = flow.is_break(), "notification");
        flow
    }

    fn input_ended(&mut self) -> Option<Instant> {
        tracing::debug!("input ended");
        self.inner.input_ended()
    }
}

/// The response of a [`Trace`]: the inner future, polled inside the request's span.
#[pin_project]
#[derive(Debug)]
pub struct ResponseFuture<F> {
    #[pin]
    future: F,
    span: Span,
    started: Instant,
}

impl<F> Future for ResponseFuture<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let _entered = this.span.enter();
        let Ok(response) = std::task::ready!(this.future.poll(cx));
        record_outcome(this.span, *this.started, &response);
        Poll::Ready(Ok(response))
    }
}

fn record_outcome(span: &Span, started: Instant, response: &Response) {
    let code = response.error_code();
    // A success under the default filter (span and debug events off) records nothing, so it
    // does not read the clock again.
    if code.is_none() && span.is_disabled() && !tracing::enabled!(tracing::Level::DEBUG) {
        return;
    }
    let duration_ms = started.elapsed().as_secs_f64() * 1000.0;
    span.record("duration_ms", duration_ms);
    match code {
        None => {
            span.record("outcome", "ok");
            tracing::debug!(duration_ms, outcome = "ok", "request completed");
        }
        Some(code) => {
            span.record("outcome", "error");
            span.record("code", code);
            if code == INTERNAL_ERROR {
                tracing::warn!(duration_ms, outcome = "error", code, "request failed");
            } else {
                tracing::info!(duration_ms, outcome = "error", code, "request failed");
            }
        }
    }
}
