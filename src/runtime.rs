//! The runtime: reads frames from any `AsyncRead`, drives the service stack, writes responses to
//! any `AsyncWrite`.
//!
//! Messages are taken in the order they are read. Each request is handed to the stack at once
//! (its lifecycle state is the one at read time) and its future runs on its own task, so
//! requests overlap; notifications are handled in order on the reading task (`$/cancelRequest`
//! cancels a running request, see [`crate::cancellation`]). Responses go
//! through one writer task, each frame written whole and flushed. Reading stops at EOF or at the
//! `exit` notification; then the drain waits for what is in flight (cancelling it after the
//! deadline), the writer flushes, and [`serve`] returns the exit status.

use std::convert::Infallible;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio_util::codec::{FramedRead, FramedWrite};
use tokio_util::task::TaskTracker;
use tower::{Service, ServiceExt};
use wsp_middleware::{Drain, Lifecycle};
use wsp_protocol::message::{invalid_request_response, parse_error_response};
use wsp_protocol::{methods, parse_payload, Incoming, Notification, Payload, Request, Response};

use crate::cancellation::{Cancellations, CANCEL_REQUEST};
use crate::codec::{Frame, FrameCodec};

/// A handler for a notification other than `exit`; notifications are handled in read order.
pub type NotificationHandler = std::sync::Arc<dyn Fn(Notification) + Send + Sync>;

/// How the runtime runs.
#[derive(Clone)]
pub struct RuntimeOptions {
    /// Largest accepted payload.
    pub max_frame_bytes: usize,
    /// How long the drain waits before cancelling.
    pub drain_timeout: Duration,
    /// Called for each notification other than `exit`.
    pub on_notification: Option<NotificationHandler>,
}

/// Serves one connection; returns the process exit status (0 at EOF, else by the lifecycle).
pub async fn serve<S, R, W>(
    mut stack: S,
    lifecycle: Lifecycle,
    drain: Drain,
    options: RuntimeOptions,
    reader: R,
    writer: W,
) -> i32
where
    S: Service<Request, Response = Response, Error = Infallible>,
    S::Future: Send + 'static,
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (outbox, inbox) = mpsc::unbounded_channel::<String>();
    let writer_task = tokio::spawn(write_frames(writer, inbox));
    let tasks = TaskTracker::new();
    let cancellations = Cancellations::default();
    let mut frames = FramedRead::new(
        reader,
        FrameCodec::with_max_frame_bytes(options.max_frame_bytes),
    );
    let mut status = 0;

    while let Some(frame) = frames.next().await {
        let text = match frame {
            Ok(Frame::Payload(text)) => text,
            Ok(Frame::Invalid(e)) => {
                tracing::warn!(discarded = e.discarded, reason = %e.reason, "decode error: frame discarded");
                continue;
            }
            Err(e) => {
                tracing::error!(error = %e, "reading the input failed; treating it as EOF");
                break;
            }
        };
        let messages = match parse_payload(&text) {
            Payload::NotJson(detail) => {
                send(&outbox, &parse_error_response(&detail));
                continue;
            }
            Payload::EmptyBatch => {
                send(
                    &outbox,
                    &invalid_request_response(wsp_protocol::Id::Null, "an empty batch"),
                );
                continue;
            }
            Payload::Single(message) => Batch::Single(message),
            Payload::Batch(messages) => Batch::Many(messages),
        };
        let exit = match messages {
            Batch::Single(message) => {
                match dispatch(&mut stack, &lifecycle, &options, &cancellations, message).await {
                    Dispatched::Answer(id, answer) => {
                        let outbox = outbox.clone();
                        let answer: Answer = match id {
                            Some(id) => Box::pin(cancellations.track(id, answer)),
                            None => answer,
                        };
                        tasks.spawn(async move {
                            let response = answer.await;
                            send(&outbox, &response);
                        });
                        None
                    }
                    Dispatched::Nothing => None,
                    Dispatched::Exit(code) => Some(code),
                }
            }
            Batch::Many(messages) => {
                let mut answers = Vec::new();
                let mut exit = None;
                for message in messages {
                    match dispatch(&mut stack, &lifecycle, &options, &cancellations, message).await
                    {
                        Dispatched::Answer(_, answer) => answers.push(answer),
                        Dispatched::Nothing => {}
                        Dispatched::Exit(code) => {
                            exit = Some(code);
                            break;
                        }
                    }
                }
                if !answers.is_empty() {
                    let outbox = outbox.clone();
                    tasks.spawn(async move {
                        let responses = futures::future::join_all(answers).await;
                        send(&outbox, &responses);
                    });
                }
                exit
            }
        };
        if let Some(code) = exit {
            status = code;
            break;
        }
    }
    drop(frames);

    let report = drain.drain(options.drain_timeout).await;
    if report.cancelled > 0 {
        tracing::warn!(
            cancelled = report.cancelled,
            "drain deadline passed: requests cancelled"
        );
    }
    tasks.close();
    tasks.wait().await;
    drop(outbox);
    match writer_task.await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::error!(error = %e, "writing responses failed"),
        Err(e) => tracing::error!(error = %e, "the writer task failed"),
    }
    status
}

enum Batch {
    Single(Incoming),
    Many(Vec<Incoming>),
}

type Answer = std::pin::Pin<Box<dyn std::future::Future<Output = Response> + Send>>;

enum Dispatched {
    /// A response to come; the id is there when the request can be cancelled by the client.
    Answer(Option<wsp_protocol::Id>, Answer),
    Nothing,
    Exit(i32),
}

async fn dispatch<S>(
    stack: &mut S,
    lifecycle: &Lifecycle,
    options: &RuntimeOptions,
    cancellations: &Cancellations,
    message: Incoming,
) -> Dispatched
where
    S: Service<Request, Response = Response, Error = Infallible>,
    S::Future: Send + 'static,
{
    match message {
        Incoming::Invalid { id, reason } => {
            let response = invalid_request_response(id, &reason);
            Dispatched::Answer(None, Box::pin(std::future::ready(response)))
        }
        Incoming::Notification(notification) if notification.method == methods::EXIT => {
            Dispatched::Exit(lifecycle.exit())
        }
        Incoming::Notification(notification) if notification.method == CANCEL_REQUEST => {
            cancellations.cancel(notification.params.as_ref());
            Dispatched::Nothing
        }
        Incoming::Notification(notification) => {
            match &options.on_notification {
                Some(handler) => handler(notification),
                None => tracing::debug!(method = %notification.method, "notification ignored"),
            }
            Dispatched::Nothing
        }
        Incoming::Request(request) => {
            let ready = match stack.ready().await {
                Ok(ready) => ready,
                Err(never) => match never {},
            };
            let id = request.id.clone();
            let future = ready.call(request);
            Dispatched::Answer(
                Some(id),
                Box::pin(async move {
                    match future.await {
                        Ok(response) => response,
                        Err(never) => match never {},
                    }
                }),
            )
        }
    }
}

/// Queues a response (or a batch's array of them) for the writer.
fn send(outbox: &mpsc::UnboundedSender<String>, response: &impl serde::Serialize) {
    match serde_json::to_string(response) {
        Ok(text) => {
            let _closed = outbox.send(text);
        }
        Err(e) => tracing::error!(error = %e, "a response could not be serialized"),
    }
}

async fn write_frames<W>(
    writer: W,
    mut inbox: mpsc::UnboundedReceiver<String>,
) -> std::io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    let mut frames = FramedWrite::new(writer, FrameCodec::new());
    while let Some(text) = inbox.recv().await {
        frames.send(text).await?;
    }
    SinkExt::<String>::flush(&mut frames).await?;
    Ok(())
}
