//! The runtime: moves messages between a transport and the session stack, and nothing more.
//!
//! The transport is a stream of [`Frame`]s in (a payload, or a report of input the codec
//! dropped) and a sink of payloads out; over bytes that is the [`FrameCodec`](crate::codec)
//! on both sides, and a message-based transport plugs in the same way. Everything a session
//! decides is in the stack (see [`wsp_middleware::stack`]): the runtime only classifies each
//! payload as JSON-RPC, hands requests to `call` and notifications to `notify` in read order,
//! and writes the answers.
//!
//! One task does all of it:
//! - Reading goes on while requests run; it pauses only while
//!   [`RuntimeOptions::max_pending`] answers are owed (read, and not yet handed to the output:
//!   a batch counts each of its answers), so memory stays bounded whatever the client does, and
//!   a client that does not read makes the server stop reading once that many wait, or once
//!   the output is blocked with 256 KiB of answers or more waiting (then, too, requests read
//!   earlier that wait for a handler slot don't start: the stack's start gate is closed, so
//!   the answers held are those of the handlers already running); and while
//!   the stack is not ready for the next request (the standard stack's handler limit, while
//!   the requests waiting for a slot fill its queue of bytes), which holds that request and
//!   the rest of its payload back until the stack is ready.
//! - A byte transport's input is read through [`FairRead`], so the requests that run are
//!   polled at least every [`FAIR_READ_BYTES`] of input, however large the frame being read.
//! - Answers that are ready are queued together and handed to the output when no more input
//!   is buffered or once [`RuntimeOptions::flush_bytes`] of them wait. Past 256 KiB of them,
//!   further answers wait unserialized until their turn to be written, so however many large
//!   answers are ready at once, one of them at a time is held serialized. While more input is
//!   buffered the output writes what it finds worth writing (whole pages, for the byte
//!   transport's `FrameWriter`), so the client reads those answers, and sends more, while the
//!   server works on the rest of what it has read; the flush comes when the input runs dry or
//!   the session would otherwise sleep, so a lone answer is never held back. (With 64 requests
//!   in flight on 2 cores this overlap is worth more than the extra writes cost; see
//!   BENCHMARKS.md.)
//! - A batch is answered with one array once all its requests are.
//! - When the input ends (EOF, or a notification the stack answers with `Break`), the stack is
//!   told; the deadline it returns bounds the rest of the session, writing included.

mod answers;
mod busy_poll;
mod fair_read;
mod held;
mod output;
mod source;

pub use busy_poll::{MISSES_TO_REST, RETRY_EVERY};
pub use fair_read::{FairRead, FAIR_READ_BYTES};
pub use source::FrameSource;

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::{poll_fn, Future};
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::Sink;
use tokio::sync::mpsc;
use tokio::time::Sleep;
use tower::Service;
use wsp_middleware::{ExitStatus, Notify, StartGate};
use wsp_protocol::message::{invalid_request_response, parse_error_response};
use wsp_protocol::{parse_payload, Id, Incoming, Payload, Request, Response};

use crate::codec::Frame;
use answers::{Answers, Element, ENCODE_AHEAD};

/// Room for messages of a payload kept from one payload to the next.
const KEPT_MESSAGES: usize = 64;

/// [`RuntimeOptions::busy_poll`] by default: longer than a client on the same machine takes to
/// send its next request after reading an answer (BENCHMARKS.md, "Busy polling").
pub const DEFAULT_BUSY_POLL: Duration = Duration::from_micros(150);

/// How the runtime runs.
#[derive(Debug, Clone)]
pub struct RuntimeOptions {
    /// Answers owed (messages read whose answers are not yet handed to the output), past which
    /// reading pauses.
    pub max_pending: usize,
    /// Bytes of ready answers past which they are written before more buffered input is
    /// handled, so the client reads them (and sends more) while the rest is worked on.
    pub flush_bytes: usize,
    /// How long an idle session keeps reading after it wrote, before it sleeps (see
    /// [`MISSES_TO_REST`] for when it stops doing so); `Duration::ZERO` never.
    pub busy_poll: Duration,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        RuntimeOptions {
            max_pending: 4096,
            flush_bytes: 1024,
            busy_poll: DEFAULT_BUSY_POLL,
        }
    }
}

/// Serves one session until the input has ended and every answer is written (or the stack's
/// deadline passes); returns the exit status the stack decided (`0` at EOF).
pub async fn serve<S, I, O>(
    stack: S,
    input: I,
    output: O,
    notifications: mpsc::Receiver<Bytes>,
    options: RuntimeOptions,
    start_gate: Option<StartGate>,
) -> ExitStatus
where
    S: Service<Request, Response = Response, Error = Infallible> + Notify,
    I: FrameSource,
    O: Sink<Bytes, Error = io::Error> + Unpin,
{
    let mut session = Session {
        stack,
        input: Some(input),
        output,
        output_broken: false,
        unflushed: false,
        output_blocked: false,
        answers: Answers::new(),
        start_gate,
        notifications,
        parked: None,
        messages: VecDeque::new(),
        held: held::Held::default(),
        held_back: false,
        status: 0,
        closes_at: None,
        received: None,
        busy_poll: busy_poll::BusyPoll::new(options.busy_poll),
        options,
    };
    poll_fn(|cx| session.poll(cx)).await
}

struct Session<S: Service<Request, Response = Response, Error = Infallible>, I, O> {
    stack: S,
    input: Option<I>,
    output: O,
    output_broken: bool,
    unflushed: bool,
    /// The output did not take more the last time it was asked.
    output_blocked: bool,
    answers: Answers<S::Future>,
    /// Closed while the client is not taking its answers (see [`Session::backlogged`]), so
    /// requests waiting for a handler slot don't start and make more answers to hold.
    start_gate: Option<StartGate>,
    /// Notifications handlers send; each is written before the answer of its handler.
    notifications: mpsc::Receiver<Bytes>,
    /// The rest of a payload whose next request waits for the stack to be ready.
    parked: Option<Parked<S::Future>>,
    /// The parked payload's messages not yet dispatched (kept between payloads, so a single
    /// message costs no allocation).
    messages: VecDeque<Incoming>,
    /// Frames read ahead while a notification waits (see module `held`).
    held: held::Held,
    /// The parked payload waits for a notification's handler, not for the stack's readiness.
    held_back: bool,
    status: ExitStatus,
    closes_at: Option<Pin<Box<Sleep>>>,
    /// What the input said of the last frame read (see [`FrameSource::received`]); every
    /// request dispatched from then on carries it, no earlier than its own read.
    received: Option<Instant>,
    busy_poll: busy_poll::BusyPoll,
    options: RuntimeOptions,
}

struct Parked<F> {
    /// `Some` for a batch: the answers of its elements so far.
    batch: Option<Vec<Element<F>>>,
}

impl<S, I, O> Session<S, I, O>
where
    S: Service<Request, Response = Response, Error = Infallible> + Notify,
    I: FrameSource,
    O: Sink<Bytes, Error = io::Error> + Unpin,
{
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<ExitStatus> {
        loop {
            if let Some(closes_at) = self.closes_at.as_mut() {
                if closes_at.as_mut().poll(cx).is_ready() {
                    tracing::warn!(
                        unanswered = self.answers.running(),
                        "the end-of-session deadline passed: closing without the rest"
                    );
                    return Poll::Ready(self.status);
                }
            }
            let wrote = self.write_answers(cx);
            let backlogged = self.backlogged();
            if let Some(gate) = self.start_gate.as_mut() {
                gate.set_closed(backlogged);
            }
            // While more input is buffered, the output writes what it finds worth writing;
            // the flush waits until the input runs dry or reading pauses.
            if !self.reads_on() {
                self.flush(cx);
            }
            let read = self.read(cx);
            if self.input.is_none() && self.all_answered() {
                return Poll::Ready(self.status);
            }
            if !wrote && !read {
                // Nothing is left to do until something wakes the session (a partial frame
                // may be buffered): what was written goes out first.
                self.flush(cx);
                if self.input.is_some() && self.all_answered() && self.busy_poll.keep_polling() {
                    cx.waker().wake_by_ref();
                }
                return Poll::Pending;
            }
        }
    }

    /// Whether everything read has been answered and written out: nothing parked, held,
    /// running or unflushed.
    fn all_answered(&self) -> bool {
        self.parked.is_none() && self.held.is_empty() && self.answers.is_empty() && !self.unflushed
    }

    /// Whether [`Session::read`] goes on with input already buffered.
    fn reads_on(&self) -> bool {
        self.parked.is_none()
            && self.answers.pending() < self.options.max_pending
            && !self.backlogged()
            && self.input.as_ref().is_some_and(FrameSource::has_buffered)
    }

    /// Whether the client is not taking its answers: the output is blocked with
    /// [`ENCODE_AHEAD`] bytes of them or more waiting. Reading then pauses, so a client that
    /// sends and never reads holds that much of its answers, not `max_pending` of them.
    fn backlogged(&self) -> bool {
        self.output_blocked && self.answers.ready_reaches(ENCODE_AHEAD)
    }

    /// Reads and dispatches frames while the output keeps up and the pending bound allows.
    fn read(&mut self, cx: &mut Context<'_>) -> bool {
        let mut progressed = false;
        loop {
            if self.parked.is_some() {
                if !self.resume_parked(cx) {
                    if self.held_back {
                        progressed |= self.read_ahead(cx);
                    }
                    return progressed;
                }
                progressed = true;
            }
            if self.answers.pending() >= self.options.max_pending || self.backlogged() {
                return progressed;
            }
            if let Some(frame) = self.held.pop() {
                progressed = true;
                self.dispatch_frame(frame);
                continue;
            }
            let Some(input) = self.input.as_mut() else {
                return progressed;
            };
            // Answer first when nothing more is buffered (or enough is ready) and the output
            // takes it: a lone request is answered without waiting for another read. A blocked
            // output doesn't stop reading until a backlog of answers waits (or the pending
            // bound is reached), so EOF and `exit` are still seen.
            let worth_writing =
                !input.has_buffered() || self.answers.ready_reaches(self.options.flush_bytes);
            if self.answers.has_ready() && worth_writing && !self.output_blocked {
                return progressed;
            }
            let frame = match self.poll_frame(cx) {
                Poll::Pending => return progressed,
                Poll::Ready(None) => return true,
                Poll::Ready(Some(frame)) => frame,
            };
            progressed = true;
            self.dispatch_frame(frame);
        }
    }

    fn dispatch_payload(&mut self, text: &str) {
        let parked = match parse_payload(text) {
            Payload::NotJson(detail) => {
                return self.answers.answer_now(&parse_error_response(&detail))
            }
            Payload::EmptyBatch => {
                let response = invalid_request_response(Id::Null, "an empty batch");
                return self.answers.answer_now(&response);
            }
            Payload::Single(message) => {
                self.messages.push_back(message);
                Parked { batch: None }
            }
            Payload::Batch(messages) => {
                self.messages.extend(messages);
                Parked {
                    batch: Some(Vec::new()),
                }
            }
        };
        self.parked = Some(parked);
    }

    /// Dispatches the parked messages in order; `false` while the stack is not ready for the
    /// next request.
    fn resume_parked(&mut self, cx: &mut Context<'_>) -> bool {
        let Some(parked) = self.parked.as_mut() else {
            return true;
        };
        self.held_back = false;
        let mut ended = false;
        while let Some(message) = self.messages.pop_front() {
            let element = match message {
                Incoming::Request(mut request) => match self.stack.poll_ready(cx) {
                    Poll::Ready(Ok(())) => {
                        request.received = self.received;
                        Element::Call(self.stack.call(request))
                    }
                    Poll::Ready(Err(never)) => match never {},
                    Poll::Pending => {
                        self.messages.push_front(Incoming::Request(request));
                        return false;
                    }
                },
                Incoming::Invalid { id, reason } => {
                    Element::Known(Some(invalid_request_response(id, &reason)))
                }
                Incoming::Notification(notification) => {
                    if self.stack.poll_notify_ready(&notification, cx).is_pending() {
                        self.messages
                            .push_front(Incoming::Notification(notification));
                        self.held_back = true;
                        return false;
                    }
                    if let std::ops::ControlFlow::Break(status) = self.stack.notify(&notification) {
                        self.status = status;
                        self.messages.clear();
                        ended = true;
                    }
                    continue;
                }
            };
            match parked.batch.as_mut() {
                Some(batch) => batch.push(element),
                // Polled before the next message is read: what is answered at once costs no
                // more, and what is still running is set up (cancellable) in read order.
                None => self.answers.start(element, cx),
            }
        }
        // A large batch's room is not kept for the single messages that follow.
        self.messages.shrink_to(KEPT_MESSAGES);
        if let Some(Some(batch)) = self.parked.take().map(|parked| parked.batch) {
            if !batch.is_empty() {
                self.answers.start_batch(batch, cx);
            }
        }
        if ended {
            self.end_input();
        }
        true
    }

    /// The next frame of the input; `Ready(None)` once the input has ended here (its EOF, or a
    /// read error, which counts as EOF).
    fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Frame>> {
        let Some(input) = self.input.as_mut() else {
            return Poll::Ready(None);
        };
        match Pin::new(&mut *input).poll_next(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(Ok(frame))) => {
                self.busy_poll.input_came();
                self.received = input.received();
                Poll::Ready(Some(frame))
            }
            Poll::Ready(Some(Err(error))) => {
                tracing::error!(%error, "reading the input failed; treating it as EOF");
                self.end_input();
                Poll::Ready(None)
            }
            Poll::Ready(None) => {
                self.end_input();
                Poll::Ready(None)
            }
        }
    }

    fn end_input(&mut self) {
        if self.input.take().is_none() {
            return;
        }
        if let Some(deadline) = self.stack.input_ended() {
            let deadline = tokio::time::Instant::from_std(deadline.max(Instant::now()));
            self.closes_at = Some(Box::pin(tokio::time::sleep_until(deadline)));
        }
    }
}
