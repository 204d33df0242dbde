//! Typed handlers: params validated before the handler runs, results serialized after.
//!
//! [`ValidateParams`] is the innermost layer of the stack, between the router and a handler. It
//! parses the request's `params` with [`Params::from_request`]; a request with invalid params is
//! answered with `-32602` listing every violation and never reaches the handler. A valid request
//! calls the handler — a `tower::Service<P>` — and turns its `Ok` into a result (a result that
//! can't be serialized is `-32603`) and its `Err` into that error response.
//!
//! A custom method is one line:
//!
//! ```
//! # use serde::{Deserialize, Serialize};
//! # use serde_json::Value;
//! # use wsp_protocol::{validation::from_serde, Params, Violation};
//! # #[derive(Serialize, Deserialize)]
//! # struct EchoParams { text: String }
//! # impl Params for EchoParams {
//! #     fn from_params(p: Option<&Value>) -> Result<Self, Vec<Violation>> { from_serde(p) }
//! #     fn schema() -> Value { Value::Null }
//! # }
//! let echo = wsp_middleware::handler_fn(|p: EchoParams| async move { Ok(p) });
//! ```

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use pin_project::pin_project;
use serde::Serialize;
use serde_json::Value;
use tower::util::ServiceFn;
use tower::{Layer, Service};
use wsp_protocol::{error, ErrorObjectOwned, Id, Params, Request, Response};

/// Turns a handler of `P` into a service of [`Request`]s with validated params.
pub fn typed<P, S>(service: S) -> ValidateParams<P, S>
where
    P: Params,
{
    ValidateParams {
        inner: service,
        not_ready: None,
        params: PhantomData,
    }
}

/// A typed handler from an async function of its params.
pub fn handler_fn<P, R, F, Fut>(f: F) -> ValidateParams<P, ServiceFn<F>>
where
    P: Params,
    R: Serialize,
    F: FnMut(P) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<R, ErrorObjectOwned>>,
{
    typed(tower::service_fn(f))
}

/// Wraps a handler of `P` in [`ValidateParams`].
pub struct ValidateParamsLayer<P> {
    params: PhantomData<fn() -> P>,
}

impl<P> ValidateParamsLayer<P> {
    /// A layer validating params as `P`.
    pub fn new() -> Self {
        ValidateParamsLayer {
            params: PhantomData,
        }
    }
}

impl<P> Default for ValidateParamsLayer<P> {
    fn default() -> Self {
        Self::new()
    }
}

impl<P> Clone for ValidateParamsLayer<P> {
    fn clone(&self) -> Self {
        Self::new()
    }
}

impl<P> fmt::Debug for ValidateParamsLayer<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValidateParamsLayer")
            .field("params", &std::any::type_name::<P>())
            .finish()
    }
}

impl<P: Params, S> Layer<S> for ValidateParamsLayer<P> {
    type Service = ValidateParams<P, S>;

    fn layer(&self, inner: S) -> Self::Service {
        typed(inner)
    }
}

/// A handler of `P` served as a service of [`Request`]s.
pub struct ValidateParams<P, S> {
    inner: S,
    not_ready: Option<ErrorObjectOwned>,
    params: PhantomData<fn() -> P>,
}

impl<P: Params, S> ValidateParams<P, S> {
    /// The JSON Schema of the params this handler takes.
    pub fn params_schema(&self) -> Value {
        P::schema()
    }
}

impl<P, S: Clone> Clone for ValidateParams<P, S> {
    fn clone(&self) -> Self {
        ValidateParams {
            inner: self.inner.clone(),
            not_ready: None,
            params: PhantomData,
        }
    }
}

impl<P, S: fmt::Debug> fmt::Debug for ValidateParams<P, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValidateParams")
            .field("params", &std::any::type_name::<P>())
            .field("inner", &self.inner)
            .finish()
    }
}

impl<P, S, R> Service<Request> for ValidateParams<P, S>
where
    P: Params,
    S: Service<P, Response = R, Error = ErrorObjectOwned>,
    R: Serialize,
{
    type Response = Response;
    type Error = Infallible;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        match self.inner.poll_ready(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(())) => Poll::Ready(Ok(())),
            Poll::Ready(Err(e)) => {
                // The stack's error type is `Infallible`: a handler that fails to get ready
                // answers the next request with that error instead.
                tracing::warn!(code = e.code(), message = e.message(), "handler not ready");
                self.not_ready = Some(e);
                Poll::Ready(Ok(()))
            }
        }
    }

    fn call(&mut self, request: Request) -> Self::Future {
        if let Some(e) = self.not_ready.take() {
            return ResponseFuture::Invalid {
                response: Some(Response::error(request.id, e)),
            };
        }
        match P::from_request(&request) {
            Ok(params) => ResponseFuture::Handling {
                future: self.inner.call(params),
                id: Some(request.id),
            },
            Err(violations) => ResponseFuture::Invalid {
                response: Some(Response::error(
                    request.id,
                    error::invalid_params(&violations),
                )),
            },
        }
    }
}

/// The response of a [`ValidateParams`]: the handler's outcome, or an immediate error.
#[pin_project(project = ResponseFutureProj)]
#[derive(Debug)]
pub enum ResponseFuture<F> {
    /// The handler is running.
    Handling {
        /// The handler's future.
        #[pin]
        future: F,
        /// The request's id, taken when the handler finishes.
        id: Option<Id>,
    },
    /// Answered without the handler (invalid params, or a handler that failed to get ready);
    /// the response is taken on the first poll.
    Invalid {
        /// The error response, `None` once returned.
        response: Option<Response>,
    },
}

impl<F, R> Future for ResponseFuture<F>
where
    F: Future<Output = Result<R, ErrorObjectOwned>>,
    R: Serialize,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            ResponseFutureProj::Handling { future, id } => {
                if id.is_none() {
                    return Poll::Ready(Ok(crate::polled_after_completion()));
                }
                let outcome = std::task::ready!(future.poll(cx));
                let id = id.take().unwrap_or(Id::Null);
                Poll::Ready(Ok(into_response(id, outcome)))
            }
            ResponseFutureProj::Invalid { response } => Poll::Ready(Ok(response
                .take()
                .unwrap_or_else(crate::polled_after_completion))),
        }
    }
}

fn into_response<R: Serialize>(id: Id, outcome: Result<R, ErrorObjectOwned>) -> Response {
    match outcome.map(|result| serde_json::to_value(result)) {
        Ok(Ok(result)) => Response::ok(id, result),
        Ok(Err(e)) => Response::error(
            id,
            error::internal_error(format!("the result could not be serialized: {e}")),
        ),
        Err(e) => Response::error(id, e),
    }
}
