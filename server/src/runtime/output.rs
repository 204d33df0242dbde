//! The session's output half: ready answers and notifications into the transport's sink.

use std::convert::Infallible;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::Sink;
use tower::Service;
use wsp_middleware::Notify;
use wsp_protocol::{Request, Response};

use super::{FrameSource, Session};

impl<S, I, O> Session<S, I, O>
where
    S: Service<Request, Response = Response, Error = Infallible> + Notify,
    I: FrameSource,
    O: Sink<Bytes, Error = io::Error> + Unpin,
{
    /// Moves every ready answer into the output while it takes more.
    pub(super) fn write_answers(&mut self, cx: &mut Context<'_>) -> bool {
        let mut progressed = self.answers.collect(cx);
        // Every notification queued so far goes first: a handler queues its notifications
        // before its answer is ready, so none of them can come after that answer.
        loop {
            if !self.output_can_take(cx) {
                return progressed;
            }
            let Poll::Ready(Some(notification)) = self.notifications.poll_recv(cx) else {
                break;
            };
            progressed = true;
            if !self.output_broken {
                match Pin::new(&mut self.output).start_send(notification) {
                    Ok(()) => self.unflushed = true,
                    Err(e) => self.broken(&e),
                }
            }
        }
        while self.answers.has_ready() {
            if !self.output_can_take(cx) {
                return progressed;
            }
            progressed = true;
            let Some(payload) = self.answers.pop_ready() else {
                break;
            };
            if self.output_broken {
                continue;
            }
            match Pin::new(&mut self.output).start_send(payload) {
                Ok(()) => self.unflushed = true,
                Err(e) => self.broken(&e),
            }
        }
        progressed
    }

    /// Whether the output takes another answer now (a broken output takes, and drops, all).
    fn output_can_take(&mut self, cx: &mut Context<'_>) -> bool {
        if self.output_broken {
            return true;
        }
        match Pin::new(&mut self.output).poll_ready(cx) {
            Poll::Ready(Ok(())) => {
                self.output_blocked = false;
                true
            }
            Poll::Ready(Err(e)) => {
                self.broken(&e);
                true
            }
            Poll::Pending => {
                self.output_blocked = true;
                false
            }
        }
    }

    pub(super) fn flush(&mut self, cx: &mut Context<'_>) {
        if !self.unflushed || self.output_broken {
            self.unflushed = false;
            return;
        }
        self.busy_poll.wrote();
        match Pin::new(&mut self.output).poll_flush(cx) {
            Poll::Ready(Ok(())) => self.unflushed = false,
            Poll::Ready(Err(e)) => self.broken(&e),
            Poll::Pending => self.output_blocked = true,
        }
    }

    pub(super) fn broken(&mut self, error: &io::Error) {
        tracing::error!(%error, "writing to the client failed: answers from now on are dropped");
        self.output_broken = true;
        self.unflushed = false;
    }
}
