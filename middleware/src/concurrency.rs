//! Handler capacity: at most N handlers run at once, and reading waits for a slot only when
//! the requests already waiting for one hold too many bytes.
//!
//! tower's `ConcurrencyLimit` waits for a permit in `poll_ready`, so a runtime that reads in
//! order stops reading while every slot is busy: it then cannot see a `$/cancelRequest`, an
//! `exit` or EOF, and a batch larger than the limit waits for itself forever. [`HandlerLimit`]
//! is ready instead while there is room in its queue. It calls the service it wraps at once,
//! in read order (so every decision taken in `call` keeps read order), and holds the returned
//! future back until a permit is free: the limit applies to running handlers, not to reading.
//! Requests waiting for a permit are served first come, first served; notifications pass
//! straight through.
//!
//! The queue is bounded by bytes: a request that has to wait counts its size in memory (see
//! [`HandlerLimitLayer::max_queued_bytes`]) until its handler starts, or it is cancelled.
//! While the waiting requests hold the bound or more ([`DEFAULT_MAX_QUEUED_BYTES`] unless set;
//! the last one admitted may take them past it), `poll_ready` is pending, so the runtime stops
//! reading until one of them starts. A request that gets a slot at once counts nothing.
//!
//! A request that had to wait starts only through the [`StartGate`], which the runtime closes
//! while its client is not taking the answers: the answers of requests read but not started
//! are then not made, so what a client that never reads costs is bounded by the handlers
//! running, not by the requests read.

use std::convert::Infallible;
use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use pin_project::pin_project;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::PollSemaphore;
use tower::{Layer, Service};
use wsp_protocol::{Notification, Response};

use crate::call::Call;

use crate::notify::{ExitStatus, Notify};

mod gate;
mod waiting;

use gate::Passage;
pub use gate::StartGate;
use waiting::{request_bytes, Held, WaitingBytes};

/// The default number of handlers that run at once.
pub const DEFAULT_HANDLER_LIMIT: usize = 64;

/// The default bound on the bytes of the requests waiting for a handler slot: 64 MiB.
pub const DEFAULT_MAX_QUEUED_BYTES: usize = 64 * 1024 * 1024;

/// Wraps a service in [`HandlerLimit`]; every service it makes shares the same permits and
/// the same queue.
#[derive(Debug, Clone)]
pub struct HandlerLimitLayer {
    permits: Arc<Semaphore>,
    waiting: Arc<WaitingBytes>,
    gate: Arc<Semaphore>,
}

impl HandlerLimitLayer {
    /// At most `limit` handlers at once (at least one), and a queue of
    /// [`DEFAULT_MAX_QUEUED_BYTES`].
    pub fn new(limit: usize) -> Self {
        HandlerLimitLayer {
            permits: Arc::new(Semaphore::new(limit.max(1))),
            waiting: WaitingBytes::new(DEFAULT_MAX_QUEUED_BYTES),
            gate: Arc::new(Semaphore::new(1)),
        }
    }

    /// The handle that closes and opens the start gate of the services this layer makes: one
    /// per layer, held by the session's runtime.
    pub fn start_gate(&self) -> StartGate {
        StartGate::of(&self.gate)
    }

    /// Bounds the queue at `bytes` (at least one): the services this layer makes are not ready
    /// while the requests waiting for a slot hold that many bytes or more. A request counts
    /// its size in memory, estimated from its parsed form: `size_of::<serde_json::Value>()`
    /// for each JSON value of its `params`, plus the bytes of every string and object key
    /// (and a few words for each object member).
    pub fn max_queued_bytes(mut self, bytes: usize) -> Self {
        self.waiting = WaitingBytes::new(bytes);
        self
    }

    /// The queue's bound, in bytes.
    pub fn queued_bytes_bound(&self) -> usize {
        self.waiting.max()
    }
}

impl<S> Layer<S> for HandlerLimitLayer {
    type Service = HandlerLimit<S>;

    fn layer(&self, inner: S) -> Self::Service {
        HandlerLimit {
            inner,
            permits: self.permits.clone(),
            waiting: self.waiting.clone(),
            gate: self.gate.clone(),
        }
    }
}

/// Runs each request's handler once a permit is free; ready while its queue has room.
#[derive(Debug, Clone)]
pub struct HandlerLimit<S> {
    inner: S,
    permits: Arc<Semaphore>,
    waiting: Arc<WaitingBytes>,
    gate: Arc<Semaphore>,
}

impl<S> Service<Call> for HandlerLimit<S>
where
    S: Service<Call, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        std::task::ready!(self.waiting.poll_room(cx));
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Call) -> Self::Future {
        if request.is_answered() {
            // Answered at read time: no handler runs, so no slot is taken.
            return ResponseFuture {
                future: self.inner.call(request),
                permit: None,
                waiting: None,
            };
        }
        match self.permits.clone().try_acquire_owned() {
            Ok(permit) => ResponseFuture {
                future: self.inner.call(request),
                permit: Some(permit),
                waiting: None,
            },
            Err(_) => {
                let held = self.waiting.hold(request_bytes(&request));
                ResponseFuture {
                    future: self.inner.call(request),
                    permit: None,
                    waiting: Some(Box::new(Waiting {
                        slots: Some(PollSemaphore::new(self.permits.clone())),
                        passage: Passage::through(&self.gate),
                        _held: held,
                    })),
                }
            }
        }
    }
}

impl<S: Notify> Notify for HandlerLimit<S> {
    fn notify(&mut self, notification: &Notification) -> ControlFlow<ExitStatus> {
        self.inner.notify(notification)
    }

    fn input_ended(&mut self) -> Option<Instant> {
        self.inner.input_ended()
    }
}

/// The response of a [`HandlerLimit`]: waits for a permit, then polls the handler's future
/// while holding it.
#[pin_project]
pub struct ResponseFuture<F> {
    #[pin]
    future: F,
    permit: Option<OwnedSemaphorePermit>,
    /// Only for a request that found every slot taken: boxed, so that the future of every
    /// other request (moved by each layer above this one) stays small.
    waiting: Option<Box<Waiting>>,
}

struct Waiting {
    /// `None` once the permit is taken.
    slots: Option<PollSemaphore>,
    /// The start gate, passed after the slot is taken (so requests that got their slots while
    /// the answers were taken still wait once they are not).
    passage: Passage,
    /// The request's share of the queue while it waits.
    _held: Held,
}

impl<F> std::fmt::Debug for ResponseFuture<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseFuture")
            .field("has_permit", &self.permit.is_some())
            .finish_non_exhaustive()
    }
}

impl<F> Future for ResponseFuture<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Some(waiting) = this.waiting.as_mut() {
            if let Some(slots) = waiting.slots.as_mut() {
                // The semaphore is never closed, so `None` cannot happen; it would only mean
                // running without a permit.
                *this.permit = std::task::ready!(slots.poll_acquire(cx));
                waiting.slots = None;
            }
            std::task::ready!(waiting.passage.poll_pass(cx));
            *this.waiting = None;
        }
        let output = std::task::ready!(this.future.poll(cx));
        this.permit.take();
        Poll::Ready(output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::task::Waker;
    use wsp_protocol::{Id, Request};

    fn execute(id: i64, stdin_bytes: usize) -> Call {
        Call::new(Request::new(
            Id::from(id),
            "environment/execute",
            Some(json!({"stdin": "x".repeat(stdin_bytes)})),
        ))
    }

    #[test]
    fn only_requests_that_wait_for_a_slot_fill_the_queue() {
        // Answers that never come: a slot taken stays taken until its future is dropped.
        let never = tower::service_fn(|_: Call| std::future::pending());
        let mut limit = HandlerLimitLayer::new(1)
            .max_queued_bytes(1000)
            .layer(never);
        let mut cx = Context::from_waker(Waker::noop());
        let mut ready = |limit: &mut HandlerLimit<_>| limit.poll_ready(&mut cx).is_ready();

        assert!(ready(&mut limit));
        let mut running = Box::pin(limit.call(execute(1, 5000)));
        assert!(
            ready(&mut limit),
            "a request that got its slot counts nothing"
        );
        let waiting = Box::pin(limit.call(execute(2, 5000)));
        assert!(
            !ready(&mut limit),
            "5 kB wait, past the 1000 bytes of the queue"
        );
        drop(waiting);
        assert!(ready(&mut limit), "a dropped request gives its bytes back");

        let mut small = Box::pin(limit.call(execute(3, 10)));
        assert!(ready(&mut limit), "a small request leaves room");
        let _big = Box::pin(limit.call(execute(4, 5000)));
        assert!(!ready(&mut limit));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(running.as_mut().poll(&mut cx).is_pending());
        drop(running);
        assert!(small.as_mut().poll(&mut cx).is_pending(), "it runs now");
        assert!(
            !limit.poll_ready(&mut cx).is_ready(),
            "the big one still waits"
        );
    }
}
