//! Notifications through the stack: the [`Notify`] half of a session service.
//!
//! A WSP session is one tower stack. Requests go through `Service<Request>::call`; notifications
//! go through [`Notify::notify`], which every layer of the stack implements, forwarding to the
//! service it wraps after doing its own part. `notify` is synchronous and is called in read
//! order, so notifications are handled in the order they were sent and at once, whatever
//! requests are running: nothing a notification does waits for handler capacity.
//!
//! The runtime calls [`Notify::input_ended`] once, when no message will follow (EOF, `exit`, or
//! a termination signal). Layers that own end-of-session work start it there; the deadline they
//! return bounds how long the runtime may go on writing before it closes the session.
//!
//! [`BoxSession`] erases a whole stack (or the part below a custom layer) into one cloneable
//! type; [`RequestsOnly`] puts a service that knows nothing about notifications on the request
//! path of such a stack.

use std::convert::Infallible;
use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use tower::Service;
use wsp_protocol::{Notification, Response};

use crate::call::Call;
use crate::stack::SessionService;

/// What a session is asked to end with: the process exit status.
pub type ExitStatus = i32;

/// The notification half of a session service.
pub trait Notify {
    /// Handles one notification. `Break(status)` stops reading: the session ends with
    /// `status` once what is in flight is answered.
    fn notify(&mut self, notification: &Notification) -> ControlFlow<ExitStatus>;

    /// Whether `notification` can be handled now; while `Pending`, the session reads nothing
    /// more (the waker in `cx` is woken once it can). Ready unless a handler bound with
    /// [`Router::notification_flow`](crate::Router::notification_flow) holds it back.
    fn poll_notify_ready(
        &mut self,
        _notification: &Notification,
        _cx: &mut Context<'_>,
    ) -> Poll<()> {
        Poll::Ready(())
    }

    /// No message will follow. Returns the latest instant the session may last, if this
    /// service (or one it wraps) bounds it.
    fn input_ended(&mut self) -> Option<Instant> {
        None
    }
}

/// The earlier of two optional deadlines.
pub fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A response future, boxed.
pub type BoxResponseFuture = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

trait ErasedSession: Send {
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>>;
    fn call(&mut self, request: Call) -> BoxResponseFuture;
    fn notify(&mut self, notification: &Notification) -> ControlFlow<ExitStatus>;
    fn poll_notify_ready(&mut self, notification: &Notification, cx: &mut Context<'_>) -> Poll<()>;
    fn input_ended(&mut self) -> Option<Instant>;
    fn clone_box(&self) -> Box<dyn ErasedSession>;
}

impl<S: SessionService> ErasedSession for S {
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Service::poll_ready(self, cx)
    }

    fn call(&mut self, request: Call) -> BoxResponseFuture {
        Box::pin(Service::call(self, request))
    }

    fn notify(&mut self, notification: &Notification) -> ControlFlow<ExitStatus> {
        Notify::notify(self, notification)
    }

    fn poll_notify_ready(&mut self, notification: &Notification, cx: &mut Context<'_>) -> Poll<()> {
        Notify::poll_notify_ready(self, notification, cx)
    }

    fn input_ended(&mut self) -> Option<Instant> {
        Notify::input_ended(self)
    }

    fn clone_box(&self) -> Box<dyn ErasedSession> {
        Box::new(self.clone())
    }
}

/// A session service with its type erased: requests and notifications, cloneable.
pub struct BoxSession {
    inner: Box<dyn ErasedSession>,
}

impl BoxSession {
    /// Erases `service`.
    pub fn new<S: SessionService>(service: S) -> Self {
        BoxSession {
            inner: Box::new(service),
        }
    }
}

impl Clone for BoxSession {
    fn clone(&self) -> Self {
        BoxSession {
            inner: self.inner.clone_box(),
        }
    }
}

impl std::fmt::Debug for BoxSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BoxSession")
    }
}

impl Service<Call> for BoxSession {
    type Response = Response;
    type Error = Infallible;
    type Future = BoxResponseFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Call) -> BoxResponseFuture {
        self.inner.call(request)
    }
}

impl Notify for BoxSession {
    fn notify(&mut self, notification: &Notification) -> ControlFlow<ExitStatus> {
        self.inner.notify(notification)
    }

    fn poll_notify_ready(&mut self, notification: &Notification, cx: &mut Context<'_>) -> Poll<()> {
        self.inner.poll_notify_ready(notification, cx)
    }

    fn input_ended(&mut self) -> Option<Instant> {
        self.inner.input_ended()
    }
}

/// A session whose requests pass through a layer that doesn't see notifications.
#[derive(Debug, Clone)]
pub struct RequestsOnly<R, S> {
    requests: R,
    session: S,
}

impl<R, S> RequestsOnly<R, S> {
    /// Requests go to `requests` (a layer around a clone of `session`); notifications and
    /// the end of input to `session` itself. The standard layers keep their state behind
    /// shared handles, so both clones act on one session.
    pub fn new(requests: R, session: S) -> Self {
        RequestsOnly { requests, session }
    }
}

impl<R, S> Service<Call> for RequestsOnly<R, S>
where
    R: Service<Call, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = R::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.requests.poll_ready(cx)
    }

    fn call(&mut self, request: Call) -> R::Future {
        self.requests.call(request)
    }
}

impl<R, S: Notify> Notify for RequestsOnly<R, S> {
    fn notify(&mut self, notification: &Notification) -> ControlFlow<ExitStatus> {
        self.session.notify(notification)
    }

    fn poll_notify_ready(&mut self, notification: &Notification, cx: &mut Context<'_>) -> Poll<()> {
        self.session.poll_notify_ready(notification, cx)
    }

    fn input_ended(&mut self) -> Option<Instant> {
        self.session.input_ended()
    }
}
