//! A handler's outcome as a response: its `Ok` serialized into `result` (a result that can't
//! be serialized is `-32603`), its `Err` sent as the `error`. Params are validated before the
//! handler runs, by the router (see [`crate::router`]).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use pin_project::pin_project;
use serde::Serialize;
use wsp_protocol::{error, ErrorObjectOwned, Id, Response};

/// A handler's future, answered as a [`Response`] to the request `id`.
#[pin_project]
#[derive(Debug)]
pub struct Answering<F> {
    #[pin]
    future: F,
    /// The request's id, taken when the handler finishes.
    id: Option<Id>,
}

impl<F> Answering<F> {
    /// Answers `id` with what `future` outputs.
    pub fn new(future: F, id: Id) -> Self {
        Answering {
            future,
            id: Some(id),
        }
    }
}

impl<F, R> Future for Answering<F>
where
    F: Future<Output = Result<R, ErrorObjectOwned>>,
    R: Serialize,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if this.id.is_none() {
            return Poll::Ready(Ok(crate::polled_after_completion()));
        }
        let outcome = std::task::ready!(this.future.poll(cx));
        let id = this.id.take().unwrap_or(Id::Null);
        Poll::Ready(Ok(into_response(id, outcome)))
    }
}

/// The response to `id` for a handler's outcome.
pub fn into_response<R: Serialize>(id: Id, outcome: Result<R, ErrorObjectOwned>) -> Response {
    match outcome.map(|result| serde_json::to_value(result)) {
        Ok(Ok(result)) => Response::ok(id, result),
        Ok(Err(e)) => Response::error(
            id,
            error::internal_error(format!("the result could not be serialized: {e}")),
        ),
        Err(e) => Response::error(id, e),
    }
}
