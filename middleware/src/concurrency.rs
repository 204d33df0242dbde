//! Handler capacity: at most N handlers run at once, and reading never waits for a slot.
//!
//! tower's `ConcurrencyLimit` waits for a permit in `poll_ready`, so a runtime that reads in
//! order stops reading while every slot is busy: it then cannot see a `$/cancelRequest`, an
//! `exit` or EOF, and a batch larger than the limit waits for itself forever. [`HandlerLimit`]
//! is always ready instead. It calls the service it wraps at once, in read order (so every
//! decision taken in `call` keeps read order), and holds the returned future back until a
//! permit is free: the limit applies to running handlers, never to reading. Requests waiting
//! for a permit are served first come, first served; notifications pass straight through.

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
use wsp_protocol::{Notification, Request, Response};

use crate::notify::{ExitStatus, Notify};

/// The default number of handlers that run at once.
pub const DEFAULT_HANDLER_LIMIT: usize = 64;

/// Wraps a service in [`HandlerLimit`]; every service it makes shares the same permits.
#[derive(Debug, Clone)]
pub struct HandlerLimitLayer {
    permits: Arc<Semaphore>,
}

impl HandlerLimitLayer {
    /// At most `limit` handlers at once (at least one).
    pub fn new(limit: usize) -> Self {
        HandlerLimitLayer {
            permits: Arc::new(Semaphore::new(limit.max(1))),
        }
    }
}

impl<S> Layer<S> for HandlerLimitLayer {
    type Service = HandlerLimit<S>;

    fn layer(&self, inner: S) -> Self::Service {
        HandlerLimit {
            inner,
            permits: self.permits.clone(),
        }
    }
}

/// Runs each request's handler once a permit is free; always ready.
#[derive(Debug, Clone)]
pub struct HandlerLimit<S> {
    inner: S,
    permits: Arc<Semaphore>,
}

impl<S> Service<Request> for HandlerLimit<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let future = self.inner.call(request);
        match self.permits.clone().try_acquire_owned() {
            Ok(permit) => ResponseFuture {
                future,
                permit: Some(permit),
                waiting: None,
            },
            Err(_) => ResponseFuture {
                future,
                permit: None,
                waiting: Some(PollSemaphore::new(self.permits.clone())),
            },
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
    waiting: Option<PollSemaphore>,
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
        if this.permit.is_none() {
            if let Some(waiting) = this.waiting.as_mut() {
                // The semaphore is never closed, so `None` cannot happen; it would only mean
                // running without a permit.
                *this.permit = std::task::ready!(waiting.poll_acquire(cx));
            }
            *this.waiting = None;
        }
        let output = std::task::ready!(this.future.poll(cx));
        this.permit.take();
        Poll::Ready(output)
    }
}
