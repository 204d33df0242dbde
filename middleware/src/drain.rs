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
use tokio::sync::Notify as IdleNotify;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};
use tower::{Layer, Service};
use wsp_protocol::error::{self, INTERNAL_ERROR};
use wsp_protocol::{Id, Notification, Response};

use crate::call::Call;

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
    in_flight: AtomicUsize,
    /// Set once a drain waits: only then does the last request out wake it.
    draining: AtomicBool,
    idle: IdleNotify,
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
                in_flight: AtomicUsize::new(0),
                draining: AtomicBool::new(false),
                idle: IdleNotify::new(),
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
        self.shared.in_flight.load(Ordering::SeqCst)
    }

    /// Waits until nothing is in flight or `deadline` passes, then cancels what is left and
    /// waits until every cancelled request has observed its cancellation.
    pub async fn drain(&self, deadline: Duration) -> DrainReport {
        let finished_before = self.shared.finished.load(Ordering::SeqCst);
        let cancelled_before = self.shared.cancelled.load(Ordering::SeqCst);
        self.shared.draining.store(true, Ordering::SeqCst);
        let idle = tokio::time::timeout(deadline, self.wait_idle()).await;
        if idle.is_err() {
            tracing::warn!(
                in_flight = self.in_flight(),
                deadline_ms = deadline.as_millis(),
                "drain deadline passed: cancelling what is left"
            );
            self.shared.cancel.cancel();
            self.wait_idle().await;
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

    async fn wait_idle(&self) {
        loop {
            let notified = self.shared.idle.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            if self.in_flight() == 0 {
                return;
            }
            notified.await;
        }
    }

    fn register(&self) -> InFlight {
        self.shared.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlight {
            shared: Arc::clone(&self.shared),
        }
    }
}

/// One request in flight; released on drop.
#[derive(Debug)]
struct InFlight {
    shared: Arc<Shared>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let before = self.shared.in_flight.fetch_sub(1, Ordering::SeqCst);
        if before == 1 && self.shared.draining.load(Ordering::SeqCst) {
            self.shared.idle.notify_waiters();
        }
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

impl<S> Service<Call> for DrainService<S>
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
        let guard = self.drain.register();
        let id = request.id.clone();
        // Registered before the inner call, so a panicking call releases its slot on unwind.
        let future = self.inner.call(request);
        ResponseFuture {
            inner: Some(future),
            cancelled: None,
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
    /// Made the first time the inner future is pending: a request answered at once never
    /// touches the cancellation token. Boxed, so that the future of every request (moved by
    /// each layer above this one) stays small.
    cancelled: Option<Pin<Box<WaitForCancellationFutureOwned>>>,
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
        if this.cancelled.is_none() {
            if let Some(guard) = this.guard.as_ref() {
                let token = guard.shared.cancel.clone();
                *this.cancelled = Some(Box::pin(token.cancelled_owned()));
            }
        }
        if let Some(cancelled) = this.cancelled.as_mut() {
            std::task::ready!(cancelled.as_mut().poll(cx));
        }
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
