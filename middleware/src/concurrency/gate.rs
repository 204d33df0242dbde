//! The start gate: while the client is not taking its answers, requests that wait for a
//! handler slot don't start, so a client that sends and never reads holds the answers of the
//! handlers already running, not of every request it got read.

use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::PollSemaphore;

/// Closes and opens the start gate of one session's [`HandlerLimitLayer`](super::HandlerLimitLayer)
/// (see [`HandlerLimitLayer::start_gate`](super::HandlerLimitLayer::start_gate)). The runtime
/// closes it while the output is blocked with answers waiting.
#[derive(Debug)]
pub struct StartGate {
    gate: Arc<Semaphore>,
    closed: Option<OwnedSemaphorePermit>,
}

impl StartGate {
    pub(super) fn of(gate: &Arc<Semaphore>) -> Self {
        StartGate {
            gate: gate.clone(),
            closed: None,
        }
    }

    /// Closes the gate (`true`) or opens it (`false`); opening lets the waiting requests
    /// start in their order.
    pub fn set_closed(&mut self, closed: bool) {
        match (closed, self.closed.is_some()) {
            // A request passing the gate holds it only within one poll of the session's task,
            // which is the task calling this: the permit is free here.
            (true, false) => self.closed = self.gate.clone().try_acquire_owned().ok(),
            (false, true) => self.closed = None,
            _ => {}
        }
    }
}

/// One request's way through the gate.
#[derive(Debug)]
pub(super) struct Passage(PollSemaphore);

impl Passage {
    pub(super) fn through(gate: &Arc<Semaphore>) -> Self {
        Passage(PollSemaphore::new(gate.clone()))
    }

    /// Ready once the gate is open; passing does not keep it.
    pub(super) fn poll_pass(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        // The semaphore is never closed, so `None` cannot happen.
        std::task::ready!(self.0.poll_acquire(cx));
        Poll::Ready(())
    }
}
