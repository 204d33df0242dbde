//! The one shape of a method's handler: a read-time part and an async part.
//!
//! [`Handler::admit`] runs synchronously when the router reads the request, in read order,
//! with a [`ReadTime`] proof: admission, registration, a use of an environment. Then
//! [`Handler::run`] makes the future that does the work with a [`Context`]. The router calls
//! both from the stack's read-time step, so however the async part is written (an `async fn`
//! that awaits first included), nothing it does can change a decision read order makes, and
//! what needs read order can't be done there: it takes a `&ReadTime`, which only `admit` has.
//!
//! Three kinds of value are handlers:
//! - [`handler_fn`]: an async function of the params and the [`Context`];
//! - [`read_ordered`]: a read-time function and an async function of what it admitted;
//! - any `tower::Service` of the params (its `poll_ready` is the router's readiness).

use std::future::Future;
use std::marker::PhantomData;
use std::task::Poll;

use schemars::JsonSchema;
use serde::Serialize;
use tower::Service;
use wsp_protocol::ErrorObjectOwned;

use crate::call::ReadTime;
use crate::context::Context;

/// A method's handler of params `P` (see the [module docs](self)).
pub trait Handler<P>: Clone + Send + Sync + 'static {
    /// What the method answers.
    type Output: Serialize + JsonSchema + Send + 'static;
    /// What the read-time part hands the async part.
    type Admitted: Send + 'static;
    /// The async part's future.
    type Future: Future<Output = Result<Self::Output, ErrorObjectOwned>> + Send + 'static;

    /// Whether the handler takes a request now; the stack reads no request while a handler
    /// is not ready. Ready unless overridden.
    fn poll_ready(&mut self, _cx: &mut std::task::Context<'_>) -> Poll<()> {
        Poll::Ready(())
    }

    /// The read-time part: runs in read order before anything is polled. `Err` answers the
    /// request at once.
    fn admit(&mut self, params: &P, at: &ReadTime<'_>) -> Result<Self::Admitted, ErrorObjectOwned>;

    /// The async part: made at read time right after [`Handler::admit`], polled later.
    fn run(&mut self, admitted: Self::Admitted, params: P, cx: Context) -> Self::Future;
}

/// A handler that is an async function of its params and its [`Context`].
pub fn handler_fn<F>(f: F) -> HandlerFn<F> {
    HandlerFn { f }
}

/// See [`handler_fn`].
#[derive(Clone, Copy, Debug)]
pub struct HandlerFn<F> {
    f: F,
}

impl<P, F, Fut, R> Handler<P> for HandlerFn<F>
where
    F: FnMut(P, Context) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ErrorObjectOwned>> + Send + 'static,
    R: Serialize + JsonSchema + Send + 'static,
{
    type Output = R;
    type Admitted = ();
    type Future = Fut;

    fn admit(&mut self, _params: &P, _at: &ReadTime<'_>) -> Result<(), ErrorObjectOwned> {
        Ok(())
    }

    fn run(&mut self, (): (), params: P, cx: Context) -> Fut {
        (self.f)(params, cx)
    }
}

/// A handler with work to do in read order: `admit` runs at read time, `run` gets what it
/// admitted.
pub fn read_ordered<P, T, A, F, Fut, R>(admit: A, run: F) -> ReadOrdered<A, F, T>
where
    A: FnMut(&P, &ReadTime<'_>) -> Result<T, ErrorObjectOwned>,
    F: FnMut(T, P, Context) -> Fut,
    Fut: Future<Output = Result<R, ErrorObjectOwned>>,
{
    ReadOrdered {
        admit,
        run,
        admitted: PhantomData,
    }
}

/// See [`read_ordered`].
pub struct ReadOrdered<A, F, T> {
    admit: A,
    run: F,
    admitted: PhantomData<fn() -> T>,
}

impl<A: Clone, F: Clone, T> Clone for ReadOrdered<A, F, T> {
    fn clone(&self) -> Self {
        ReadOrdered {
            admit: self.admit.clone(),
            run: self.run.clone(),
            admitted: PhantomData,
        }
    }
}

impl<P, T, A, F, Fut, R> Handler<P> for ReadOrdered<A, F, T>
where
    T: Send + 'static,
    A: FnMut(&P, &ReadTime<'_>) -> Result<T, ErrorObjectOwned> + Clone + Send + Sync + 'static,
    F: FnMut(T, P, Context) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ErrorObjectOwned>> + Send + 'static,
    R: Serialize + JsonSchema + Send + 'static,
{
    type Output = R;
    type Admitted = T;
    type Future = Fut;

    fn admit(&mut self, params: &P, at: &ReadTime<'_>) -> Result<T, ErrorObjectOwned> {
        (self.admit)(params, at)
    }

    fn run(&mut self, admitted: T, params: P, cx: Context) -> Fut {
        (self.run)(admitted, params, cx)
    }
}

/// A `tower::Service` of the params as a handler: a readiness error answers the next request.
#[derive(Clone, Debug)]
pub struct ServiceHandler<S> {
    service: S,
    not_ready: Option<ErrorObjectOwned>,
}

impl<S> ServiceHandler<S> {
    /// Serves `service`.
    pub fn new(service: S) -> Self {
        ServiceHandler {
            service,
            not_ready: None,
        }
    }
}

impl<P, S> Handler<P> for ServiceHandler<S>
where
    S: Service<P, Error = ErrorObjectOwned> + Clone + Send + Sync + 'static,
    S::Response: Serialize + JsonSchema + Send + 'static,
    S::Future: Send + 'static,
{
    type Output = S::Response;
    type Admitted = ();
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> Poll<()> {
        match self.service.poll_ready(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(())) => Poll::Ready(()),
            Poll::Ready(Err(e)) => {
                tracing::warn!(code = e.code(), message = e.message(), "handler not ready");
                self.not_ready = Some(e);
                Poll::Ready(())
            }
        }
    }

    fn admit(&mut self, _params: &P, _at: &ReadTime<'_>) -> Result<(), ErrorObjectOwned> {
        self.not_ready.take().map_or(Ok(()), Err)
    }

    fn run(&mut self, (): (), params: P, _cx: Context) -> S::Future {
        self.service.call(params)
    }
}

/// What can be bound as a method's handler: a [`Handler`], or a `tower::Service` of the params.
pub trait IntoHandler<P, Kind> {
    /// The handler.
    type Handler: Handler<P>;

    /// Makes the handler.
    fn into_handler(self) -> Self::Handler;
}

/// [`IntoHandler`]'s kind for a [`Handler`].
#[derive(Debug)]
pub enum IsHandler {}

/// [`IntoHandler`]'s kind for a `tower::Service`.
#[derive(Debug)]
pub enum IsService {}

impl<P, H: Handler<P>> IntoHandler<P, IsHandler> for H {
    type Handler = H;

    fn into_handler(self) -> H {
        self
    }
}

impl<P, S> IntoHandler<P, IsService> for S
where
    S: Service<P, Error = ErrorObjectOwned> + Clone + Send + Sync + 'static,
    S::Response: Serialize + JsonSchema + Send + 'static,
    S::Future: Send + 'static,
{
    type Handler = ServiceHandler<S>;

    fn into_handler(self) -> ServiceHandler<S> {
        ServiceHandler::new(self)
    }
}
