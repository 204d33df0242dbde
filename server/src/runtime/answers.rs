//! The answers a session owes: those still running, and those encoded and ready to be written.
//!
//! A request's answer is polled once as soon as the request is handed to the stack. Most are
//! ready then (an unknown method, a cached read), and those never become a task: they are
//! encoded at once, and the box their future was polled in is kept for the next request. Only
//! an answer still running moves into the set of tasks, box and all.
//!
//! Answers are serialized into one growing buffer and split off it, so an answer needs no
//! allocation of its own. They are serialized as they become ready while less than
//! [`ENCODE_AHEAD`] bytes of serialized answers wait; past it, an answer waits as it is and is
//! serialized only when it is handed to the output. So however many large answers become
//! ready at once, at most one of them is held serialized besides the [`ENCODE_AHEAD`] bytes.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{BufMut, Bytes, BytesMut};
use futures::future::JoinAll;
use futures::stream::FuturesUnordered;
use futures::Stream;
use pin_project::pin_project;
use serde::Serialize;
use wsp_protocol::Response;

/// Room the encoding buffer makes when it runs short: one allocation serves many answers.
const ENCODE_CHUNK: usize = 16 * 1024;

/// An encoding buffer that grew past this (a huge answer) is not kept for the next answers.
const MAX_KEPT_CAPACITY: usize = 256 * 1024;

/// Serialized answers waiting for the output past which more ready answers wait unserialized.
pub(super) const ENCODE_AHEAD: usize = 256 * 1024;

/// What the session owes: answers running, and answers ready.
pub(super) struct Answers<F: Future<Output = Result<Response, Infallible>>> {
    /// Answers owed for the messages read so far and not yet handed to the output (a batch
    /// counts each of its answers).
    pending: usize,
    in_flight: FuturesUnordered<Answer<F>>,
    /// Answers ready and not yet in the output, each with the number of answers it holds.
    ready: VecDeque<(Ready, usize)>,
    /// The length of the serialized ones.
    ready_bytes: usize,
    /// How many wait unserialized.
    deferred: usize,
    /// The box the next request's answer is polled in.
    spare: Option<Pin<Box<Element<F>>>>,
    encoded: BytesMut,
}

impl<F: Future<Output = Result<Response, Infallible>>> Answers<F> {
    pub(super) fn new() -> Self {
        Answers {
            pending: 0,
            in_flight: FuturesUnordered::new(),
            ready: VecDeque::new(),
            ready_bytes: 0,
            deferred: 0,
            spare: None,
            encoded: BytesMut::new(),
        }
    }

    /// Answers owed and not yet handed to the output.
    pub(super) fn pending(&self) -> usize {
        self.pending
    }

    /// Answers still running.
    pub(super) fn running(&self) -> usize {
        self.in_flight.len()
    }

    /// Whether `bytes` of answers are ready, or answers that wait unserialized (which only
    /// happens once more than [`ENCODE_AHEAD`] bytes were ready).
    pub(super) fn ready_reaches(&self, bytes: usize) -> bool {
        self.ready_bytes >= bytes || self.deferred > 0
    }

    pub(super) fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    /// Nothing is running and nothing waits to be written.
    pub(super) fn is_empty(&self) -> bool {
        self.in_flight.is_empty() && self.ready.is_empty()
    }

    /// Starts one message's answer: polled once now, queued if it is ready, else left running.
    pub(super) fn start(&mut self, element: Element<F>, cx: &mut Context<'_>) {
        self.pending += 1;
        let mut slot = self
            .spare
            .take()
            .unwrap_or_else(|| Box::pin(Element::Known(None)));
        slot.as_mut().set(element);
        match slot.as_mut().poll(cx) {
            Poll::Ready(response) => {
                slot.as_mut().set(Element::Known(None));
                self.spare = Some(slot);
                self.queue_answered(Answered::One(response), 1);
            }
            Poll::Pending => self.in_flight.push(Answer::Single(slot)),
        }
    }

    /// Starts a batch's answer: one array, once every element is answered.
    pub(super) fn start_batch(&mut self, elements: Vec<Element<F>>, cx: &mut Context<'_>) {
        let answers = elements.len();
        self.pending += answers;
        self.in_flight
            .push(Answer::Batch(answers, futures::future::join_all(elements)));
        self.collect(cx);
    }

    /// Queues an answer the runtime knows without the stack.
    pub(super) fn answer_now(&mut self, response: &Response) {
        self.pending += 1;
        self.queue(response, 1);
    }

    /// Polls what is running and queues every answer that is ready; whether there was one.
    pub(super) fn collect(&mut self, cx: &mut Context<'_>) -> bool {
        let mut any = false;
        while let Poll::Ready(Some((answered, answers))) =
            Pin::new(&mut self.in_flight).poll_next(cx)
        {
            any = true;
            self.queue_answered(answered, answers);
        }
        any
    }

    /// The next ready answer, serialized and now handed to the output (an answer that cannot
    /// be serialized is logged and skipped).
    pub(super) fn pop_ready(&mut self) -> Option<Bytes> {
        while let Some((ready, answers)) = self.ready.pop_front() {
            self.pending -= answers;
            let payload = match ready {
                Ready::Encoded(payload) => {
                    self.ready_bytes -= payload.len();
                    Some(payload)
                }
                Ready::Deferred(answered) => {
                    self.deferred -= 1;
                    match &answered {
                        Answered::One(response) => encode(&mut self.encoded, response),
                        Answered::Batch(responses) => encode(&mut self.encoded, responses),
                    }
                }
            };
            if payload.is_some() {
                return payload;
            }
        }
        None
    }

    fn queue_answered(&mut self, answered: Answered, answers: usize) {
        if self.ready_bytes >= ENCODE_AHEAD {
            self.deferred += 1;
            self.ready.push_back((Ready::Deferred(answered), answers));
            return;
        }
        match answered {
            Answered::One(response) => self.queue(&response, answers),
            Answered::Batch(responses) => self.queue(&responses, answers),
        }
    }

    fn queue(&mut self, answer: &impl Serialize, answers: usize) {
        match encode(&mut self.encoded, answer) {
            Some(payload) => {
                self.ready_bytes += payload.len();
                self.ready.push_back((Ready::Encoded(payload), answers))
            }
            None => self.pending -= answers,
        }
    }
}

/// An answer ready for the output.
enum Ready {
    Encoded(Bytes),
    /// Serialized when it is handed to the output.
    Deferred(Answered),
}

/// Serializes `value` at the end of `buffer` and splits it off; `None` (logged) if it can't be.
fn encode(buffer: &mut BytesMut, value: &impl Serialize) -> Option<Bytes> {
    if buffer.capacity() > MAX_KEPT_CAPACITY {
        *buffer = BytesMut::new();
    }
    if buffer.capacity() < ENCODE_CHUNK / 8 {
        buffer.reserve(ENCODE_CHUNK);
    }
    match serde_json::to_writer(buffer.writer(), value) {
        Ok(()) => Some(buffer.split().freeze()),
        Err(e) => {
            buffer.clear();
            tracing::error!(error = %e, "an answer could not be serialized");
            None
        }
    }
}

/// The answer to one message: the stack's, or one the runtime knows at once.
#[pin_project(project = ElementProj)]
pub(super) enum Element<F> {
    Call(#[pin] F),
    Known(Option<Response>),
}

impl<F> Future for Element<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    type Output = Response;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Response> {
        match self.project() {
            ElementProj::Call(future) => future.poll(cx).map(|Ok(response)| response),
            ElementProj::Known(response) => Poll::Ready(
                response
                    .take()
                    .unwrap_or_else(wsp_middleware::polled_after_completion),
            ),
        }
    }
}

/// A finished answer: a message's, or a batch's array.
enum Answered {
    One(Response),
    Batch(Vec<Response>),
}

/// One payload's answer on its way: a message's, or a batch's array.
#[pin_project(project = AnswerProj)]
enum Answer<F: Future<Output = Result<Response, Infallible>>> {
    Single(Pin<Box<Element<F>>>),
    /// A batch's answers, how many, and their futures.
    Batch(usize, #[pin] JoinAll<Element<F>>),
}

impl<F> Future for Answer<F>
where
    F: Future<Output = Result<Response, Infallible>>,
{
    /// The answer and how many answers it holds.
    type Output = (Answered, usize);

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            AnswerProj::Single(element) => element
                .as_mut()
                .poll(cx)
                .map(|response| (Answered::One(response), 1)),
            AnswerProj::Batch(answers, elements) => {
                let answers = *answers;
                elements
                    .poll(cx)
                    .map(|responses| (Answered::Batch(responses), answers))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::Waker;
    use wsp_protocol::Id;

    type Ready = std::future::Ready<Result<Response, Infallible>>;

    fn answer(id: i64, bytes: usize) -> Element<Ready> {
        let result = serde_json::Value::String("x".repeat(bytes));
        Element::Known(Some(Response::ok(Id::from(id), result)))
    }

    fn id_of(payload: &Bytes) -> i64 {
        let value: serde_json::Value = serde_json::from_slice(payload).expect("JSON");
        value["id"].as_i64().expect("an id")
    }

    #[test]
    fn past_encode_ahead_answers_wait_unserialized_and_keep_their_order() {
        let mut cx = Context::from_waker(Waker::noop());
        let mut answers = Answers::<Ready>::new();
        answers.start(answer(1, 10), &mut cx);
        assert!(!answers.ready_reaches(4096));
        answers.start(answer(2, ENCODE_AHEAD), &mut cx);
        answers.start(answer(3, ENCODE_AHEAD), &mut cx);
        answers.start(answer(4, 10), &mut cx);
        assert_eq!(
            answers.deferred, 2,
            "the answers after 256 KiB wait as they are"
        );
        assert!(answers.ready_bytes < 2 * ENCODE_AHEAD);
        assert_eq!(answers.pending(), 4);
        let order: Vec<i64> = std::iter::from_fn(|| answers.pop_ready())
            .map(|payload| id_of(&payload))
            .collect();
        assert_eq!(order, [1, 2, 3, 4]);
        assert_eq!((answers.pending(), answers.deferred), (0, 0));
        assert!(answers.is_empty() && !answers.ready_reaches(1));
    }
}
