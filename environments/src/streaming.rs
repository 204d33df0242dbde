//! `environment/execute` with `stream: true`: the command's output reaches the client as
//! `environment/output` notifications while it runs, all of them before the answer.
//!
//! The route takes the whole request, because the notifications name the request's id. Params
//! are validated as for every other method; the command starts when the router calls the
//! service (in read order), its chunks go through a small bounded channel to the
//! [`Notifier`], whose own queue is bounded too, so a client that reads slowly slows the
//! command down instead of filling memory.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::sync::mpsc;
use wsp_exec::OutputChunk;
use wsp_protocol::results::OutputParams;
use wsp_protocol::{error, ExecuteParams, Params, Request, Response};

use super::Environments;
use wsp_middleware::Notifier;

/// Chunks a command may have produced before the notifier takes them.
const CHUNKS_IN_FLIGHT: usize = 16;

/// The `environment/execute` service.
#[derive(Clone)]
pub(super) struct Execute {
    pub(super) environments: Environments,
    pub(super) notifier: Option<Notifier>,
}

type Answer = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

impl tower::Service<Request> for Execute {
    type Response = Response;
    type Error = Infallible;
    type Future = Answer;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Answer {
        let id = request.id;
        let params = match ExecuteParams::from_params(request.params.as_ref()) {
            Ok(params) => params,
            Err(violations) => {
                let response = Response::error(id, error::invalid_params(&violations));
                return Box::pin(std::future::ready(Ok(response)));
            }
        };
        let notifier = self.notifier.clone().filter(|_| params.stream);
        let (sink, mut chunks) = mpsc::channel::<OutputChunk>(CHUNKS_IN_FLIGHT);
        let sink = notifier.as_ref().map(|_| sink);
        let run = self.environments.clone().execute_streaming(params, sink);
        let request_id = id.clone();
        let forward = async move {
            let Some(notifier) = notifier else { return };
            while let Some(chunk) = chunks.recv().await {
                let params = OutputParams {
                    request_id: request_id.clone(),
                    stream: chunk.stream,
                    data: chunk.data,
                };
                if !notifier.notify(OutputParams::METHOD, &params).await {
                    break;
                }
            }
        };
        Box::pin(async move {
            let (answer, ()) = tokio::join!(run, forward);
            let response = match answer.map(serde_json::to_value) {
                Ok(Ok(result)) => Response::ok(id, result),
                Ok(Err(e)) => Response::error(id, error::internal_error(e.to_string())),
                Err(e) => Response::error(id, e),
            };
            Ok(response)
        })
    }
}
