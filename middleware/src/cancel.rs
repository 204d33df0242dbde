//! `$/cancelRequest`: a client withdraws a request it sent.
//!
//! An extension WSP borrows from LSP (clients that speak LSP already send it). The notification
//! carries `{"id": <the request's id>}`. If that request is still running, its work is dropped
//! at once (a running `environment/execute` has its whole process group killed) and it is
//! answered with `-32800` ("Request cancelled"); a request that already finished, or an id that
//! names nothing, is ignored. Requests inside a batch are cancellable one by one too.
//!
//! [`Cancel`] registers every request it passes on and races its future against the request's
//! token; the notification trips the token from [`Notify::notify`], which the runtime calls as
//! soon as the notification is read, whatever is running. The answer that is ready first wins,
//! and the inner answer is checked first: work that was done is never answered as cancelled.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Instant;

use pin_project::pin_project;
use tokio::sync::oneshot;
use tower::{Layer, Service};
use wsp_protocol::{error, Id, Notification, Response};

use crate::call::Call;

use crate::notify::{ExitStatus, Notify};

/// The notification's method name.
pub const CANCEL_REQUEST: &str = "$/cancelRequest";

/// Each registration gets a serial number, so a request that ends removes its own entry and
/// not that of a newer request that reused its id.
#[derive(Debug, Default)]
struct Running {
    next_serial: u64,
    by_id: HashMap<Id, (u64, oneshot::Sender<()>)>,
}

#[derive(Debug, Clone, Default)]
struct Registry {
    running: Arc<Mutex<Running>>,
}

impl Registry {
    fn lock(&self) -> MutexGuard<'_, Running> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn register(&self, id: &Id) -> (Registration, oneshot::Receiver<()>) {
        let (cancel, cancelled) = oneshot::channel();
        let mut running = self.lock();
        running.next_serial += 1;
        let serial = running.next_serial;
        running.by_id.insert(id.clone(), (serial, cancel));
        drop(running);
        let registration = Registration {
            registry: self.clone(),
            id: id.clone(),
            serial,
        };
        (registration, cancelled)
    }

    fn cancel(&self, notification: &Notification) {
        let id = notification
            .params
            .as_ref()
            .and_then(|params| params.get("id"))
            .and_then(Id::from_value);
        let Some(id) = id else {
            tracing::debug!("$/cancelRequest without a readable id ignored");
            return;
        };
        match self.lock().by_id.remove(&id) {
            Some((_, cancel)) => {
                tracing::debug!(%id, "request cancelled by the client");
                // The request may have finished since; then nobody listens, which is fine.
                let _ = cancel.send(());
            }
            None => tracing::debug!(%id, "$/cancelRequest for no running request ignored"),
        }
    }
}

/// A request's entry in the registry; removed when its answer is ready or dropped.
#[derive(Debug)]
struct Registration {
    registry: Registry,
    id: Id,
    serial: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut running = self.registry.lock();
        if running
            .by_id
            .get(&self.id)
            .is_some_and(|(serial, _)| *serial == self.serial)
        {
            running.by_id.remove(&self.id);
        }
    }
}

/// Wraps a service in [`Cancel`]; every service it makes shares one registry.
#[derive(Debug, Clone, Default)]
pub struct CancelLayer {
    registry: Registry,
}

impl CancelLayer {
    /// A layer with an empty registry.
    pub fn new() -> Self {
        CancelLayer::default()
    }
}

impl<S> Layer<S> for CancelLayer {
    type Service = Cancel<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Cancel {
            inner,
            registry: self.registry.clone(),
        }
    }
}

/// Makes each request cancellable by `$/cancelRequest`.
#[derive(Debug, Clone)]
pub struct Cancel<S> {
    inner: S,
    registry: Registry,
}

impl<S> Service<Call> for Cancel<S>
where
    S: Service<Call, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Call) -> Self::Future {
        let id = request.id.clone();
        ResponseFuture {
            inner: Some(self.inner.call(request)),
            state: Listener::Unregistered(self.registry.clone(), id),
        }
    }
}

impl<S: Notify> Notify for Cancel<S> {
    fn notify(&mut self, notification: &Notification) -> ControlFlow<ExitStatus> {
        if notification.method == CANCEL_REQUEST {
            self.registry.cancel(notification);
        }
        self.inner.notify(notification)
    }

    fn input_ended(&mut self) -> Option<Instant> {
        self.inner.input_ended()
    }
}

/// The response of a [`Cancel`]: the inner answer, or `-32800` once the client cancelled.
#[pin_project]
#[derive(Debug)]
pub struct ResponseFuture<F> {
    #[pin]
    inner: Option<F>,
    state: Listener,
}

/// A request is registered the first time its answer is not ready at once, so a request
/// answered on its first poll costs no registry entry. The runtime polls each request before it
/// reads the next message, so a `$/cancelRequest` always finds a request still running.
#[derive(Debug)]
enum Listener {
    Unregistered(Registry, Id),
    Listening(Registration, oneshot::Receiver<()>),
    /// A newer request took this id: this one can no longer be named.
    Deaf,
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
            *this.state = Listener::Deaf;
            return Poll::Ready(output);
        }
        if let Listener::Unregistered(registry, id) = &*this.state {
            let (registration, cancelled) = registry.register(id);
            *this.state = Listener::Listening(registration, cancelled);
        }
        let Listener::Listening(registration, cancelled) = &mut *this.state else {
            return Poll::Pending;
        };
        match Pin::new(cancelled).poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(_)) => {
                *this.state = Listener::Deaf;
                return Poll::Pending;
            }
        }
        let id = registration.id.clone();
        // Dropping the inner future tears down whatever the handler owns.
        this.inner.set(None);
        *this.state = Listener::Deaf;
        Poll::Ready(Ok(Response::error(
            id,
            error::error(error::REQUEST_CANCELLED, "Request cancelled", None),
        )))
    }
}
