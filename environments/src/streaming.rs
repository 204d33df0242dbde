//! `environment/execute` with `stream: true`: the command's output reaches the client as
//! `environment/output` notifications while it runs, all of them before the answer.
//!
//! The notifications name the request's id and go through the connection's notifier, both
//! from the handler's [`Context`]. The command's chunks go through a small bounded channel to
//! the notifier, whose own queue is bounded too, so a client that reads slowly slows the
//! command down instead of filling memory.

use tokio::sync::mpsc;
use wsp_exec::OutputChunk;
use wsp_middleware::Context;
use wsp_protocol::results::OutputParams;
use wsp_protocol::{ExecuteParams, ExecuteResult};

use super::handlers::Answer;
use super::usage::UseToken;
use super::Environments;

/// Chunks a command may have produced before the notifier takes them.
const CHUNKS_IN_FLIGHT: usize = 16;

impl Environments {
    /// `environment/execute`'s async part: runs the command, and streams its output when the
    /// params say `stream: true`.
    pub(super) async fn execute(
        self,
        in_use: UseToken,
        params: ExecuteParams,
        cx: Context,
    ) -> Answer<ExecuteResult> {
        let notifier = cx.notifier().filter(|_| params.stream).cloned();
        let (sink, mut chunks) = mpsc::channel::<OutputChunk>(CHUNKS_IN_FLIGHT);
        let sink = notifier.as_ref().map(|_| sink);
        let run = self.execute_streaming(in_use, params, sink);
        let request_id = cx.id().clone();
        let forward = async move {
            let Some(notifier) = notifier else { return };
            while let Some(chunk) = chunks.recv().await {
                let params = OutputParams {
                    request_id: request_id.clone(),
                    stream: chunk.stream,
                    data: chunk.data,
                };
                if !notifier
                    .notify(wsp_protocol::methods::OUTPUT, &params)
                    .await
                {
                    break;
                }
            }
        };
        let (answer, ()) = tokio::join!(run, forward);
        answer
    }
}
