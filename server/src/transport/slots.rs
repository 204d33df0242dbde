//! A bound on the connections served at once, shared by every listener of a server.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures::Sink;

/// At most `max` connections at once, counted over every listener that shares these slots.
#[derive(Debug, Clone)]
pub struct ConnectionSlots {
    max: usize,
    taken: Arc<AtomicUsize>,
}

impl ConnectionSlots {
    /// Room for `max` connections (at least 1).
    pub fn new(max: usize) -> Self {
        ConnectionSlots {
            max: max.max(1),
            taken: Arc::default(),
        }
    }

    /// A slot for one more connection, or `None` when all are taken. The slot is given back
    /// when the returned value drops: keep it for as long as the connection is served (in the
    /// connection's facts, say, which live as long as its session).
    pub fn take(&self) -> Option<ConnectionSlot> {
        self.taken
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |taken| {
                (taken < self.max).then_some(taken + 1)
            })
            .ok()
            .map(|_| ConnectionSlot {
                taken: Arc::clone(&self.taken),
            })
    }

    /// How many connections are being served.
    pub fn in_use(&self) -> usize {
        self.taken.load(Ordering::Acquire)
    }

    /// The most connections served at once.
    pub fn max(&self) -> usize {
        self.max
    }
}

/// One connection's slot; given back when dropped.
#[derive(Debug)]
pub struct ConnectionSlot {
    taken: Arc<AtomicUsize>,
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        self.taken.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An output that keeps its connection's slot (if it has one) taken for as long as the
/// session writes.
#[derive(Debug)]
pub struct HoldingSlot<O> {
    output: O,
    _slot: Option<ConnectionSlot>,
}

impl<O> HoldingSlot<O> {
    /// `output`, holding `slot`.
    pub fn new(output: O, slot: Option<ConnectionSlot>) -> Self {
        HoldingSlot {
            output,
            _slot: slot,
        }
    }
}

impl<O: Sink<Bytes, Error = io::Error> + Unpin> Sink<Bytes> for HoldingSlot<O> {
    type Error = io::Error;

    fn poll_ready(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.output).poll_ready(cx)
    }

    fn start_send(mut self: Pin<&mut Self>, item: Bytes) -> io::Result<()> {
        Pin::new(&mut self.output).start_send(item)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.output).poll_flush(cx)
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.output).poll_close(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_run_out_and_come_back() {
        let slots = ConnectionSlots::new(2);
        let first = slots.take().expect("first");
        let _second = slots.take().expect("second");
        assert!(slots.take().is_none());
        drop(first);
        assert_eq!(slots.in_use(), 1);
        assert!(slots.take().is_some());
    }
}
