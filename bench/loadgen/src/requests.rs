//! Rendering requests, and the record of when each was written.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::frame::push_decimal;

/// A write is issued at the latest when this many bytes of requests are rendered.
pub const MAX_WRITE: usize = 128 * 1024;

/// A request body is `prefix`, the id's digits, then `suffix`.
pub struct RequestShape {
    prefix: &'static [u8],
    suffix: Vec<u8>,
}

impl RequestShape {
    pub fn new(method: &str, params: &str) -> Self {
        let method = serde_json::to_string(method).unwrap_or_else(|_| "\"\"".into());
        Self {
            prefix: br#"{"jsonrpc":"2.0","id":"#,
            suffix: format!(r#","method":{method},"params":{params}}}"#).into_bytes(),
        }
    }

    /// Appends request `id`'s body (no header) to `out`.
    pub fn push_body(&self, out: &mut Vec<u8>, id: u64) {
        out.extend_from_slice(self.prefix);
        push_decimal(out, id);
        out.extend_from_slice(&self.suffix);
    }

    /// Appends the frames of requests `first..` to `out`, at most `count` of them and stopping
    /// once `out` holds `MAX_WRITE` bytes; returns the id after the last one.
    pub fn render(&self, out: &mut Vec<u8>, first: u64, count: u64) -> u64 {
        let mut id = first;
        while id < first + count && out.len() < MAX_WRITE {
            let digits = id.checked_ilog10().unwrap_or(0) as usize + 1;
            out.extend_from_slice(b"Content-Length: ");
            push_decimal(out, (self.prefix.len() + digits + self.suffix.len()) as u64);
            out.extend_from_slice(b"\r\n\r\n");
            self.push_body(out, id);
            id += 1;
        }
        id
    }
}

/// When each request (ids 1..=N) was written, in nanoseconds since `clock`; shared between
/// the thread that writes and the one that reads.
pub struct SendTimes {
    clock: Instant,
    sent_ns: Vec<AtomicU64>,
    first_ns: AtomicU64,
}

impl SendTimes {
    pub fn new(requests: u64) -> Self {
        Self {
            clock: Instant::now(),
            sent_ns: (0..requests).map(|_| AtomicU64::new(0)).collect(),
            first_ns: AtomicU64::new(0),
        }
    }

    pub fn now_ns(&self) -> u64 {
        self.clock.elapsed().as_nanos() as u64
    }

    /// Stamps ids `first..end` with the time now, just before their write.
    pub fn stamp(&self, first: u64, end: u64) {
        let now = self.now_ns();
        if first == 1 {
            self.first_ns.store(now, Ordering::Relaxed);
        }
        for id in first..end {
            self.sent_ns[(id - 1) as usize].store(now, Ordering::Relaxed);
        }
    }

    pub fn sent_ns(&self, id: u64) -> u64 {
        self.sent_ns[(id - 1) as usize].load(Ordering::Relaxed)
    }

    pub fn first_ns(&self) -> u64 {
        self.first_ns.load(Ordering::Relaxed)
    }
}
