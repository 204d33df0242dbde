//! Frames read ahead while a notification holds the session's reading back.
//!
//! A flow handler (see [`wsp_middleware::FlowHandler`]) may keep its notification waiting,
//! say input for a command that doesn't read. The session then goes on reading a bounded
//! amount ([`HELD_BYTES`]) so that the end of input (EOF, a termination signal) and a
//! `$/cancelRequest` are still seen: a cancel is acted on at once, the end of input starts the
//! drain; every other frame is held, in order, for after the waiting notification.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::io;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::Sink;
use tower::Service;
use wsp_middleware::Notify;
use wsp_protocol::{methods, parse_payload, Incoming, Notification, Payload, Request, Response};

use super::{FrameSource, Session};
use crate::codec::Frame;

/// How many payload bytes the session reads ahead while a notification waits.
pub(super) const HELD_BYTES: usize = 4 * 1024 * 1024;

impl<S, I, O> Session<S, I, O>
where
    S: Service<Request, Response = Response, Error = Infallible> + Notify,
    I: FrameSource,
    O: Sink<Bytes, Error = io::Error> + Unpin,
{
    pub(super) fn dispatch_frame(&mut self, frame: Frame) {
        match frame {
            Frame::Invalid(e) => {
                tracing::warn!(discarded = e.discarded, reason = %e.reason, "decode error: frame discarded");
            }
            Frame::Payload(text) => self.dispatch_payload(&text),
        }
    }

    /// Reads on, boundedly, while a notification holds the parked payload back: a cancel is
    /// acted on at once, the end of input ends it, the rest is held (module `held`).
    pub(super) fn read_ahead(&mut self, cx: &mut Context<'_>) -> bool {
        let mut progressed = false;
        while let Some(input) = self.input.as_mut() {
            if !self.held.has_room() {
                // Full: only a termination signal is still seen.
                if input.poll_terminated(cx).is_ready() {
                    self.end_input();
                    return true;
                }
                break;
            }
            let frame = match self.poll_frame(cx) {
                Poll::Pending => break,
                Poll::Ready(None) => return true,
                Poll::Ready(Some(frame)) => frame,
            };
            progressed = true;
            let cancel = match &frame {
                Frame::Payload(text) => cancel_request(text),
                Frame::Invalid(_) => None,
            };
            match cancel {
                Some(cancel) => {
                    let _ = self.stack.notify(&cancel);
                }
                None => self.held.push(frame),
            }
        }
        progressed
    }
}

/// The frames read ahead, in order.
#[derive(Default)]
pub(super) struct Held {
    frames: VecDeque<Frame>,
    bytes: usize,
}

impl Held {
    /// Whether another frame may be read ahead.
    pub(super) fn has_room(&self) -> bool {
        self.bytes < HELD_BYTES
    }

    pub(super) fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    pub(super) fn push(&mut self, frame: Frame) {
        self.bytes += size(&frame);
        self.frames.push_back(frame);
    }

    pub(super) fn pop(&mut self) -> Option<Frame> {
        let frame = self.frames.pop_front()?;
        self.bytes -= size(&frame);
        Some(frame)
    }
}

fn size(frame: &Frame) -> usize {
    match frame {
        Frame::Payload(text) => text.len(),
        Frame::Invalid(_) => 0,
    }
}

/// The `$/cancelRequest` a payload is, when it is one alone.
pub(super) fn cancel_request(payload: &str) -> Option<Notification> {
    match parse_payload(payload) {
        Payload::Single(Incoming::Notification(notification))
            if notification.method == methods::CANCEL_REQUEST =>
        {
            Some(notification)
        }
        _ => None,
    }
}
