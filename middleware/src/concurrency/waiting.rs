//! The bytes held by requests that wait for a handler slot, and the wake-up of whoever waits
//! for room among them.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

use serde_json::Value;
use wsp_protocol::Request;

/// What a request counts for while it waits: its size in memory, estimated from its parsed
/// form as [`size_of::<Value>`] for each JSON value in `params`, plus the bytes of every
/// string, and for each object member its key and the map's own two words (and the method's
/// name). A 60 MiB string counts 60 MiB, and an array of a million zeros a million values
/// (not the 2 MB of its text), for that is what holding it costs.
pub(super) fn request_bytes(request: &Request) -> usize {
    let mut bytes = size_of::<Request>() + request.method.len();
    let mut values: Vec<&Value> = request.params.iter().collect();
    while let Some(value) = values.pop() {
        bytes += size_of::<Value>();
        match value {
            Value::String(text) => bytes += text.len(),
            Value::Array(items) => values.extend(items),
            Value::Object(members) => {
                for (key, member) in members {
                    bytes += size_of::<String>() + 2 * size_of::<usize>() + key.len();
                    values.push(member);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
    bytes
}

/// The bytes of the requests waiting for a slot, against a bound.
#[derive(Debug)]
pub(super) struct WaitingBytes {
    held: AtomicUsize,
    max: usize,
    /// Whoever found no room, to wake when some is made.
    wakers: Mutex<Vec<Waker>>,
    has_wakers: AtomicBool,
}

impl WaitingBytes {
    /// Room for `max` bytes (at least one).
    pub(super) fn new(max: usize) -> Arc<Self> {
        Arc::new(WaitingBytes {
            held: AtomicUsize::new(0),
            max: max.max(1),
            wakers: Mutex::new(Vec::new()),
            has_wakers: AtomicBool::new(false),
        })
    }

    /// The bound.
    pub(super) fn max(&self) -> usize {
        self.max
    }

    /// Ready while the waiting requests hold less than the bound; otherwise `cx` is woken
    /// once one of them starts or goes away.
    pub(super) fn poll_room(&self, cx: &mut Context<'_>) -> Poll<()> {
        if self.held.load(Ordering::SeqCst) < self.max {
            return Poll::Ready(());
        }
        {
            let mut wakers = self.wakers.lock().unwrap_or_else(PoisonError::into_inner);
            if !wakers.iter().any(|waker| waker.will_wake(cx.waker())) {
                wakers.push(cx.waker().clone());
            }
            self.has_wakers.store(true, Ordering::SeqCst);
        }
        // Room made between the first look and the registration woke nobody: look again.
        let held = self.held.load(Ordering::SeqCst);
        if held < self.max {
            return Poll::Ready(());
        }
        tracing::debug!(
            held,
            max = self.max,
            "requests waiting for a handler slot fill the queue: not ready until one starts"
        );
        Poll::Pending
    }

    /// Counts `bytes` until the returned guard is dropped (the request started, or went away).
    pub(super) fn hold(self: &Arc<Self>, bytes: usize) -> Held {
        self.held.fetch_add(bytes, Ordering::SeqCst);
        Held {
            queue: self.clone(),
            bytes,
        }
    }

    fn release(&self, bytes: usize) {
        self.held.fetch_sub(bytes, Ordering::SeqCst);
        if self.has_wakers.load(Ordering::SeqCst) {
            let wakers = {
                let mut wakers = self.wakers.lock().unwrap_or_else(PoisonError::into_inner);
                self.has_wakers.store(false, Ordering::SeqCst);
                std::mem::take(&mut *wakers)
            };
            wakers.into_iter().for_each(Waker::wake);
        }
    }
}

/// A waiting request's share of [`WaitingBytes`], given back when dropped.
#[derive(Debug)]
pub(super) struct Held {
    queue: Arc<WaitingBytes>,
    bytes: usize,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.queue.release(self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::atomic::AtomicUsize;
    use std::task::Wake;

    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_request_counts_its_strings_and_its_values() {
        let request = |params| Request::new(wsp_protocol::Id::from(1), "m", Some(params));
        let big = request_bytes(&request(json!({"stdin": "x".repeat(1 << 20)})));
        assert!(big > 1 << 20 && big < (1 << 20) + 1024, "{big}");
        let zeros = request_bytes(&request(json!(vec![0; 1000])));
        assert!(zeros >= 1000 * size_of::<Value>(), "{zeros}");
    }

    #[test]
    fn full_until_a_waiting_request_starts() {
        let queue = WaitingBytes::new(100);
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        let first = queue.hold(60);
        assert!(queue.poll_room(&mut cx).is_ready(), "60 of 100");
        let second = queue.hold(60);
        assert!(queue.poll_room(&mut cx).is_pending(), "120 of 100");
        drop(first);
        assert_eq!(count.0.load(Ordering::SeqCst), 1, "woken when room is made");
        assert!(queue.poll_room(&mut cx).is_ready());
        drop(second);
        assert_eq!(count.0.load(Ordering::SeqCst), 1, "nobody waited any more");
    }
}
