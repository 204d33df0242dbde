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

use wsp_protocol::error;
use wsp_protocol::validation::Violation;

use super::handlers::Answer;
use super::input::Registration;
use super::usage::UseToken;
use super::Environments;

/// Chunks a command may have produced before the notifier takes them.
const CHUNKS_IN_FLIGHT: usize = 16;

impl Environments {
    /// `environment/execute`'s async part: runs the command, and streams its output when the
    /// params say `stream: true` (or ask for a `pty`). The stdin of `stdin_stream: true` or a
    /// `pty` is registered here, at read time, so input read after the request reaches it.
    pub(super) fn execute(
        self,
        in_use: UseToken,
        params: ExecuteParams,
        cx: Context,
    ) -> impl std::future::Future<Output = Answer<ExecuteResult>> {
        let interactive = (params.stdin_stream || params.pty.is_some()).then(|| {
            self.inner
                .inputs
                .register(cx.connection_id(), cx.id(), params.pty)
        });
        self.execute_registered(in_use, params, cx, interactive)
    }

    async fn execute_registered(
        self,
        in_use: UseToken,
        mut params: ExecuteParams,
        cx: Context,
        interactive: Option<Registration>,
    ) -> Answer<ExecuteResult> {
        if params.stdin.is_some() && interactive.is_some() {
            let message = "`stdin` can't be given with `stdin_stream` or `pty`, which stream it";
            return Err(error::invalid_params(&[Violation::new(
                "stdin",
                "exclusive",
                message,
            )]));
        }
        params.stream |= params.pty.is_some();
        let notifier = cx.notifier().filter(|_| params.stream).cloned();
        let (sink, mut chunks) = mpsc::channel::<OutputChunk>(CHUNKS_IN_FLIGHT);
        let sink = notifier.as_ref().map(|_| sink);
        let run = self.execute_streaming(in_use, params, sink, interactive.as_ref());
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
