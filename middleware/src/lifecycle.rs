//! The lifecycle gate: WSP's state machine, applied to each request as it is read.
//!
//! [`Lifecycle`] is the shared state (UNINITIALIZED → INITIALIZED → SHUTTING_DOWN → EXITED);
//! [`LifecycleGate`] sits inside the concurrency limit and in front of the router. Its decision
//! is made synchronously in `call`, which the runtime invokes in read order, so each request is
//! judged by the state the server was in when that request was read — not when a handler gets to
//! run. A successful `initialize` or `shutdown` moves the state before the handler is called, so
//! a pipelined request right behind it already sees the new state.
//!
//! The gate also owns the end of the session: the `exit` notification, in any state, stops
//! reading with the exit status the lifecycle decides (`0` after `shutdown`, else `1`); other
//! notifications pass through to the service it wraps.

use std::convert::Infallible;
use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Instant;

use pin_project::pin_project;
use tower::{Layer, Service};
use wsp_protocol::{error, methods, ErrorObjectOwned, InitializeParams, NoParams, Params};
use wsp_protocol::{Notification, Request, Response};

use crate::notify::{ExitStatus, Notify};

/// A state of the WSP lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LifecycleState {
    /// Before a successful `initialize`: only `initialize` is accepted.
    Uninitialized,
    /// After `initialize`: every registered method is served.
    Initialized,
    /// After `shutdown`: every request is rejected; only `exit` is honoured.
    ShuttingDown,
    /// After `exit`.
    Exited,
}

/// The server's lifecycle state, shared by the gate and the runtime.
#[derive(Debug, Clone)]
pub struct Lifecycle {
    state: Arc<Mutex<LifecycleState>>,
}

impl Default for Lifecycle {
    fn default() -> Self {
        Self::new()
    }
}

impl Lifecycle {
    /// A fresh lifecycle in [`LifecycleState::Uninitialized`].
    pub fn new() -> Self {
        Lifecycle {
            state: Arc::new(Mutex::new(LifecycleState::Uninitialized)),
        }
    }

    /// The current state.
    pub fn state(&self) -> LifecycleState {
        *self.lock()
    }

    /// Handles the `exit` notification: moves to [`LifecycleState::Exited`] and returns the
    /// process exit status, `0` after a successful `shutdown`, else `1`.
    pub fn exit(&self) -> i32 {
        let mut state = self.lock();
        let previous = std::mem::replace(&mut *state, LifecycleState::Exited);
        tracing::debug!(?previous, "lifecycle: exit");
        if previous == LifecycleState::ShuttingDown {
            0
        } else {
            1
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LifecycleState> {
        // The state is a plain `Copy` value, so a poisoned lock still holds a valid state.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Decides one request against the current state, moving the state when the request is a
    /// valid `initialize` or `shutdown`. `Err` is the error the request is answered with.
    fn admit(&self, request: &Request) -> Result<(), ErrorObjectOwned> {
        let mut state = self.lock();
        let method = request.method.as_str();
        match *state {
            LifecycleState::Uninitialized if method == methods::INITIALIZE => {
                InitializeParams::from_params(request.params.as_ref())
                    .map_err(|violations| error::invalid_params(&violations))?;
                *state = LifecycleState::Initialized;
                tracing::debug!("lifecycle: initialized");
                Ok(())
            }
            LifecycleState::Uninitialized => Err(error::server_not_initialized()),
            LifecycleState::Initialized if method == methods::INITIALIZE => {
                Err(error::invalid_request("server already initialized"))
            }
            LifecycleState::Initialized if method == methods::SHUTDOWN => {
                NoParams::from_params(request.params.as_ref())
                    .map_err(|violations| error::invalid_params(&violations))?;
                *state = LifecycleState::ShuttingDown;
                tracing::debug!("lifecycle: shutting down");
                Ok(())
            }
            LifecycleState::Initialized => Ok(()),
            LifecycleState::ShuttingDown => Err(error::invalid_request(
                "server is shutting down: only the exit notification is accepted",
            )),
            LifecycleState::Exited => Err(error::invalid_request("server has exited")),
        }
    }
}

/// Wraps a service in a [`LifecycleGate`].
#[derive(Debug, Clone)]
pub struct LifecycleLayer {
    lifecycle: Lifecycle,
}

impl LifecycleLayer {
    /// A layer whose gates share `lifecycle`.
    pub fn new(lifecycle: Lifecycle) -> Self {
        LifecycleLayer { lifecycle }
    }
}

impl<S> Layer<S> for LifecycleLayer {
    type Service = LifecycleGate<S>;

    fn layer(&self, inner: S) -> Self::Service {
        LifecycleGate {
            inner,
            lifecycle: self.lifecycle.clone(),
        }
    }
}

/// Answers requests the current lifecycle state forbids; forwards the others.
#[derive(Debug, Clone)]
pub struct LifecycleGate<S> {
    inner: S,
    lifecycle: Lifecycle,
}

impl<S> Service<Request> for LifecycleGate<S>
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
        match self.lifecycle.admit(&request) {
            Ok(()) => ResponseFuture::Forwarded {
                future: self.inner.call(request),
            },
            Err(rejection) => {
                tracing::debug!(method = %request.method, code = rejection.code(), "lifecycle: rejected");
                ResponseFuture::Rejected {
                    response: Some(Response::error(request.id, rejection)),
                }
            }
        }
    }
}

impl<S: Notify> Notify for LifecycleGate<S> {
    fn notify(&mut self, notification: &Notification) -> ControlFlow<ExitStatus> {
        if notification.method == methods::EXIT {
            return ControlFlow::Break(self.lifecycle.exit());
        }
        self.inner.notify(notification)
    }

    fn input_ended(&mut self) -> Option<Instant> {
        self.inner.input_ended()
    }
}

/// The response of a [`LifecycleGate`]: the inner service's, or an immediate rejection.
#[pin_project(project = ResponseFutureProj)]
#[derive(Debug)]
pub enum ResponseFuture<F> {
    /// The request was forwarded.
    Forwarded {
        /// The inner service's future.
        #[pin]
        future: F,
    },
    /// The request was rejected; the response is taken on the first poll.
    Rejected {
        /// The rejection, `None` once returned.
        response: Option<Response>,
    },
}

impl<F> Future for ResponseFuture<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            ResponseFutureProj::Forwarded { future } => future.poll(cx),
            ResponseFutureProj::Rejected { response } => Poll::Ready(Ok(response
                .take()
                .unwrap_or_else(crate::polled_after_completion))),
        }
    }
}
