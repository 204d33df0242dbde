//! Graceful drain: count requests in flight, wait for them at the end, cancel the stragglers.
//!
//! [`DrainService`] sits inside the panic catcher and outside the concurrency limit, so it sees
//! every request the runtime has read, including those still waiting for a concurrency slot. A
//! request is in flight from `call` until its future completes or is dropped.
//!
//! When the input ends (`exit`, EOF or a termination signal) the runtime calls
//! [`Notify::input_ended`], and the service starts [`Drain::drain`] on a task of its own with
//! the drain's deadline. It waits, woken by each completion, until nothing is in flight or the
//! deadline passes. Then it cancels the rest:
//! every cancelled [`ResponseFuture`] drops its inner future at once — so whatever the handler
//! owns (child processes included) is torn down by its own destructors — and resolves to a
//! `-32603` "request cancelled: drain deadline passed" response that the runtime can still write.
//! A future whose inner work completes in the same poll as the cancellation keeps its result.
//!
//! The deadline bounds the whole exit, writing included: `input_ended` returns the deadline
//! plus [`WRITE_GRACE`], past which the runtime closes the session whether or not the client
//! has read what was written.

use std::convert::Infallible;
use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use pin_project::pin_project;
use tokio::sync::watch;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};
use tower::{Layer, Service};
use wsp_protocol::error::{self, INTERNAL_ERROR};
use wsp_protocol::{Id, Notification, Request, Response};

use crate::notify::{earliest, ExitStatus, Notify};

/// How long the session-end drain waits before cancelling what is left: five seconds.
pub const DEFAULT_DRAIN_DEADLINE: Duration = Duration::from_secs(5);

/// How long after the drain deadline the runtime may still write the cancelled requests'
/// answers before it closes the session regardless.
pub const WRITE_GRACE: Duration = Duration::from_millis(250);

/// The message of the `-32603` a cancelled request is answered with.
pub const CANCELLED_MESSAGE: &str = "request cancelled: drain deadline passed";

/// What a [`Drain::drain`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DrainReport {
    /// Requests that completed on their own while the drain waited.
    pub finished: usize,
    /// Requests cancelled when the deadline passed.
    pub cancelled: usize,
}

#[derive(Debug)]
struct Shared {
    in_flight: watch::Sender<usize>,
    finished: AtomicUsize,
    cancelled: AtomicUsize,
    cancel: CancellationToken,
    deadline: Duration,
    armed: AtomicBool,
}

/// The drain handle: shared by the runtime and every [`DrainService`] it layered.
#[derive(Debug, Clone)]
pub struct Drain {
    shared: Arc<Shared>,
}

impl Default for Drain {
    fn default() -> Self {
        Self::new()
    }
}

impl Drain {
    /// A drain with nothing in flight and the [`DEFAULT_DRAIN_DEADLINE`].
    pub fn new() -> Self {
        Self::with_deadline(DEFAULT_DRAIN_DEADLINE)
    }

    /// A drain whose end-of-input deadline is `deadline`.
    pub fn with_deadline(deadline: Duration) -> Self {
        Drain {
            shared: Arc::new(Shared {
                in_flight: watch::Sender::new(0),
                finished: AtomicUsize::new(0),
                cancelled: AtomicUsize::new(0),
                cancel: CancellationToken::new(),
                deadline,
                armed: AtomicBool::new(false),
            }),
        }
    }

    /// A layer whose services report to this drain.
    pub fn layer(&self) -> DrainLayer {
        DrainLayer {
            drain: self.clone(),
        }
    }

    /// Requests called and not yet completed or dropped.
    pub fn in_flight(&self) -> usize {
        *self.shared.in_flight.borrow()
    }

    /// Waits until nothing is in flight or `deadline` passes, then cancels what is left and
    /// waits until every cancelled request has observed its cancellation.
    pub async fn drain(&self, deadline: Duration) -> DrainReport {
        let finished_before = self.shared.finished.load(Ordering::SeqCst);
        let cancelled_before = self.shared.cancelled.load(Ordering::SeqCst);
        let mut in_flight = self.shared.in_flight.subscribe();
        let idle = tokio::time::timeout(deadline, wait_idle(&mut in_flight)).await;
        if idle.is_err() {
            tracing::warn!(
                in_flight = self.in_flight(),
                deadline_ms = deadline.as_millis(),
                "drain deadline passed: cancelling what is left"
            );
            self.shared.cancel.cancel();
            wait_idle(&mut in_flight).await;
        }
        let report = DrainReport {
            finished: self.shared.finished.load(Ordering::SeqCst) - finished_before,
            cancelled: self.shared.cancelled.load(Ordering::SeqCst) - cancelled_before,
        };
        tracing::debug!(
            finished = report.finished,
            cancelled = report.cancelled,
            "drained"
        );
        report
    }

    /// Starts the end-of-input drain once (later calls do nothing) and returns when the
    /// session must be over.
    fn start(&self) -> Option<Instant> {
        let deadline = self.shared.deadline;
        let ends = Instant::now() + deadline + WRITE_GRACE;
        if self.shared.armed.swap(true, Ordering::SeqCst) {
            return Some(ends);
        }
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                let drain = self.clone();
                runtime.spawn(async move { drain.drain(deadline).await });
            }
            Err(_) => tracing::error!("the drain needs a tokio runtime; nothing will be cancelled"),
        }
        Some(ends)
    }

    fn register(&self) -> InFlight {
        self.shared.in_flight.send_modify(|n| *n += 1);
        InFlight {
            shared: Arc::clone(&self.shared),
        }
    }
}

async fn wait_idle(in_flight: &mut watch::Receiver<usize>) {
    // The sender lives in `Shared`, which the caller holds, so this can't see a closed channel.
    let _ = in_flight.wait_for(|n| *n == 0).await;
}

/// One request in flight; released on drop.
#[derive(Debug)]
struct InFlight {
    shared: Arc<Shared>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.shared
            .in_flight
            .send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// Wraps a service in a [`DrainService`] reporting to one [`Drain`].
#[derive(Debug, Clone)]
pub struct DrainLayer {
    drain: Drain,
}

impl<S> Layer<S> for DrainLayer {
    type Service = DrainService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        DrainService {
            inner,
            drain: self.drain.clone(),
        }
    }
}

/// Counts each request in flight and makes it cancellable by the drain.
#[derive(Debug, Clone)]
pub struct DrainService<S> {
    inner: S,
    drain: Drain,
}

impl<S> Service<Request> for DrainService<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let guard = self.drain.register();
        let id = request.id.clone();
        // Registered before the inner call, so a panicking call releases its slot on unwind.
        let future = self.inner.call(request);
        ResponseFuture {
            inner: Some(future),
            cancelled: self.drain.shared.cancel.clone().cancelled_owned(),
            id: Some(id),
            guard: Some(guard),
        }
    }
}

impl<S: Notify> Notify for DrainService<S> {
    fn notify(&mut self, notification: &Notification) -> ControlFlow<ExitStatus> {
        self.inner.notify(notification)
    }

    fn input_ended(&mut self) -> Option<Instant> {
        earliest(self.drain.start(), self.inner.input_ended())
    }
}

/// The response of a [`DrainService`]: the inner future raced against the drain's cancellation.
#[pin_project]
#[derive(Debug)]
pub struct ResponseFuture<F> {
    #[pin]
    inner: Option<F>,
    #[pin]
    cancelled: WaitForCancellationFutureOwned,
    id: Option<Id>,
    guard: Option<InFlight>,
}

impl<F> Future for ResponseFuture<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        let Some(inner) = this.inner.as_mut().as_pin_mut() else {
            return Poll::Ready(Ok(crate::polled_after_completion()));
        };
        if let Poll::Ready(output) = inner.poll(cx) {
            this.inner.set(None);
            if let Some(guard) = this.guard.take() {
                guard.shared.finished.fetch_add(1, Ordering::SeqCst);
            }
            return Poll::Ready(output);
        }
        std::task::ready!(this.cancelled.poll(cx));
        this.inner.set(None);
        if let Some(guard) = this.guard.take() {
            guard.shared.cancelled.fetch_add(1, Ordering::SeqCst);
        }
        let id = this.id.take().unwrap_or(Id::Null);
        tracing::debug!(id = %id, "request cancelled by the drain");
        Poll::Ready(Ok(Response::error(
            id,
            error::error(INTERNAL_ERROR, CANCELLED_MESSAGE, None),
        )))
    }
}
