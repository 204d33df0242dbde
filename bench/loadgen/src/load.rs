//! The measured phase, on one thread: render up to `window` requests into one buffer, write it
//! (non-blocking), read whatever the server sent, match responses by id, and refill the window.
//! A sampler thread watches memory and time meanwhile.

use std::collections::BTreeMap;
use std::io::{self, ErrorKind, Write};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};

use crate::frame::{push_decimal, scan, Scan};
use crate::procfs::{self, cpu_use, CpuSnapshot, CpuUse};
use crate::sampler::{DelayedRead, Sampler, SamplerConfig, Watch};
use crate::session::Server;

/// A write is issued at the latest when this many bytes of requests are rendered.
const MAX_WRITE: usize = 128 * 1024;
/// How often a loop waiting for the read gate looks at it again.
const GATE_POLL: Duration = Duration::from_millis(5);

/// What every response must be.
#[derive(Clone, Copy, Debug)]
pub enum Expect {
    Any,
    Result,
    Error(Option<i64>),
}

pub struct Plan {
    pub method: String,
    pub params: String,
    pub requests: u64,
    pub window: u64,
    pub expect: Expect,
    pub delayed_read: Option<DelayedRead>,
    pub sample_every: Duration,
    pub timeout: Duration,
}

#[derive(Debug, Default)]
pub struct Counts {
    pub unique: u64,
    pub duplicates: u64,
    pub unknown_ids: u64,
    pub malformed: u64,
    pub server_messages: u64,
    pub results: u64,
    pub errors: BTreeMap<String, u64>,
    pub unexpected: u64,
}

pub struct Outcome {
    pub elapsed_s: f64,
    pub latencies_ns: Vec<u64>,
    pub counts: Counts,
    pub cpu: CpuUse,
    pub peak_rss_kib: u64,
    /// Delayed reads: the largest RSS sampled before reading started.
    pub held_rss_kib: Option<u64>,
    /// Delayed reads: writing stalled before every request was written.
    pub writes_blocked: bool,
    pub bytes_written_before_read: u64,
    pub timed_out: bool,
    pub error: Option<String>,
}

/// Runs the measured phase; the server comes back for `shutdown` unless it had to be killed.
pub fn run(mut server: Server, plan: &Plan) -> (Outcome, Option<Server>) {
    let blocking_flags = fcntl_getfl(&server.stdin).unwrap_or(OFlags::empty());
    let nonblocking = fcntl_setfl(&server.stdin, blocking_flags | OFlags::NONBLOCK);
    let watch = Arc::new(Watch::default());
    let sampler = Sampler::spawn(
        watch.clone(),
        SamplerConfig {
            pid: server.pid,
            delayed_read: plan.delayed_read,
            every: plan.sample_every,
            timeout: plan.timeout,
            io_thread: thread::current(),
        },
    );
    let start = CpuSnapshot::take(server.pid);
    let mut phase = Phase::new(plan);
    let error = match nonblocking {
        Ok(()) => phase.drive(&mut server, &watch).err(),
        Err(err) => Some(format!("making the server's stdin non-blocking: {err}")),
    };
    let end = CpuSnapshot::take(server.pid);
    sampler.stop();
    let _ = fcntl_setfl(&server.stdin, blocking_flags);

    let final_rss = procfs::rss(server.pid).unwrap_or_default();
    let elapsed_s = phase.last_ns.saturating_sub(phase.first_send_ns) as f64 / 1e9;
    phase.latencies_ns.sort_unstable();
    let timed_out = watch.timed_out.load(Ordering::SeqCst);
    let outcome = Outcome {
        elapsed_s,
        cpu: cpu_use(&start, &end),
        latencies_ns: phase.latencies_ns,
        counts: phase.counts,
        peak_rss_kib: watch
            .peak_rss_kib
            .load(Ordering::SeqCst)
            .max(final_rss.high_water_kib),
        held_rss_kib: plan
            .delayed_read
            .map(|_| watch.held_rss_kib.load(Ordering::SeqCst)),
        writes_blocked: watch.writes_blocked.load(Ordering::SeqCst),
        bytes_written_before_read: watch.bytes_before_read.load(Ordering::SeqCst),
        timed_out,
        error,
    };
    if timed_out {
        let _ = server.child.kill();
        let _ = server.child.wait();
        return (outcome, None);
    }
    (outcome, Some(server))
}

/// The I/O loop's state.
struct Phase {
    shape: RequestShape,
    requests: u64,
    window: u64,
    expect: Expect,
    clock: Instant,
    next_id: u64,
    pending: Vec<u8>,
    written: usize,
    send_ns: Vec<u64>,
    seen: Vec<bool>,
    latencies_ns: Vec<u64>,
    counts: Counts,
    first_send_ns: u64,
    last_ns: u64,
}

impl Phase {
    fn new(plan: &Plan) -> Self {
        let requests = plan.requests as usize;
        Self {
            shape: RequestShape::new(&plan.method, &plan.params),
            requests: plan.requests,
            window: plan.window,
            expect: plan.expect,
            clock: Instant::now(),
            next_id: 1,
            pending: Vec::with_capacity(MAX_WRITE + 4096),
            written: 0,
            send_ns: vec![0; requests],
            seen: vec![false; requests],
            latencies_ns: Vec::with_capacity(requests),
            counts: Counts::default(),
            first_send_ns: 0,
            last_ns: 0,
        }
    }

    fn now_ns(&self) -> u64 {
        self.clock.elapsed().as_nanos() as u64
    }

    fn credits(&self) -> u64 {
        let in_flight = (self.next_id - 1) - self.counts.unique;
        let unsent = self.requests + 1 - self.next_id;
        self.window.saturating_sub(in_flight).min(unsent)
    }

    fn drive(&mut self, server: &mut Server, watch: &Watch) -> Result<(), String> {
        while self.counts.unique < self.requests {
            if watch.timed_out.load(Ordering::SeqCst) {
                return Err("timed out".into());
            }
            if self.written == self.pending.len() && self.credits() > 0 {
                self.render();
            }
            let write_blocked = self.write(server, watch)?;
            if !write_blocked && self.credits() > 0 {
                continue;
            }
            if !watch.gate_open.load(Ordering::SeqCst) {
                if write_blocked {
                    wait_writable(server, Some(GATE_POLL));
                } else {
                    thread::park_timeout(GATE_POLL);
                }
                continue;
            }
            if write_blocked && !wait_readable_or_writable(server) {
                continue;
            }
            match server.reader.fill() {
                Ok(0) => return Err("EOF before every response arrived".into()),
                Ok(_) => self.take_responses(server)?,
                Err(err) => return Err(format!("reading responses: {err}")),
            }
        }
        Ok(())
    }

    fn render(&mut self) {
        self.pending.clear();
        self.written = 0;
        let sent_at = self.now_ns();
        if self.next_id == 1 {
            self.first_send_ns = sent_at;
        }
        let last = self.next_id + self.credits();
        while self.next_id < last && self.pending.len() < MAX_WRITE {
            self.shape.push(&mut self.pending, self.next_id);
            self.send_ns[(self.next_id - 1) as usize] = sent_at;
            self.next_id += 1;
        }
    }

    /// Writes what is pending; `Ok(true)` when the pipe is full.
    fn write(&mut self, server: &mut Server, watch: &Watch) -> Result<bool, String> {
        while self.written < self.pending.len() {
            match server.stdin.write(&self.pending[self.written..]) {
                Ok(count) => {
                    self.written += count;
                    watch
                        .bytes_written
                        .fetch_add(count as u64, Ordering::SeqCst);
                }
                Err(err) if err.kind() == ErrorKind::WouldBlock => return Ok(true),
                Err(err) if err.kind() == ErrorKind::Interrupted => {}
                Err(err) => return Err(format!("writing requests: {err}")),
            }
        }
        if self.next_id > self.requests {
            watch.all_written.store(true, Ordering::SeqCst);
        }
        Ok(false)
    }

    fn take_responses(&mut self, server: &mut Server) -> Result<(), String> {
        let now = self.now_ns();
        while let Some(body) = server
            .reader
            .next_frame()
            .map_err(|err| format!("reading responses: {err}"))?
        {
            let Some(found) = scan(body) else {
                self.counts.malformed += 1;
                continue;
            };
            if found.has_method {
                self.counts.server_messages += 1;
                continue;
            }
            let Some(id) = found.id.filter(|id| (1..=self.requests).contains(id)) else {
                self.counts.unknown_ids += 1;
                continue;
            };
            let index = (id - 1) as usize;
            if std::mem::replace(&mut self.seen[index], true) {
                self.counts.duplicates += 1;
                continue;
            }
            self.counts.unique += 1;
            self.last_ns = now;
            self.latencies_ns
                .push(now.saturating_sub(self.send_ns[index]));
            tally(&mut self.counts, &found, self.expect);
        }
        Ok(())
    }
}

fn wait_writable(server: &Server, timeout: Option<Duration>) {
    let timeout = timeout.map(|wait| Timespec {
        tv_sec: 0,
        tv_nsec: wait.as_nanos() as _,
    });
    let mut fds = [PollFd::new(&server.stdin, PollFlags::OUT)];
    let _ = poll(&mut fds, timeout.as_ref());
}

/// Waits until the server sent something or can take more; `true` when there is input.
fn wait_readable_or_writable(server: &Server) -> bool {
    let mut fds = [
        PollFd::new(server.reader.source(), PollFlags::IN),
        PollFd::new(&server.stdin, PollFlags::OUT),
    ];
    match poll(&mut fds, None) {
        Ok(_) => !fds[0].revents().is_empty(),
        Err(err) => io::Error::from(err).kind() != ErrorKind::Interrupted,
    }
}

/// A request body is `prefix`, the id's digits, then `suffix`.
struct RequestShape {
    prefix: &'static [u8],
    suffix: Vec<u8>,
}

impl RequestShape {
    fn new(method: &str, params: &str) -> Self {
        let method = serde_json::to_string(method).unwrap_or_else(|_| "\"\"".into());
        Self {
            prefix: br#"{"jsonrpc":"2.0","id":"#,
            suffix: format!(r#","method":{method},"params":{params}}}"#).into_bytes(),
        }
    }

    fn push(&self, out: &mut Vec<u8>, id: u64) {
        let digits = id.checked_ilog10().unwrap_or(0) as usize + 1;
        out.extend_from_slice(b"Content-Length: ");
        push_decimal(out, (self.prefix.len() + digits + self.suffix.len()) as u64);
        out.extend_from_slice(b"\r\n\r\n");
        out.extend_from_slice(self.prefix);
        push_decimal(out, id);
        out.extend_from_slice(&self.suffix);
    }
}

fn tally(counts: &mut Counts, found: &Scan, expect: Expect) {
    let as_expected = match found.error {
        Some(code) => {
            let key = code.map_or("no code".to_string(), |code| code.to_string());
            *counts.errors.entry(key).or_default() += 1;
            match expect {
                Expect::Any => true,
                Expect::Result => false,
                Expect::Error(wanted) => wanted.is_none() || wanted == code,
            }
        }
        None if found.has_result => {
            counts.results += 1;
            matches!(expect, Expect::Any | Expect::Result)
        }
        None => {
            counts.malformed += 1;
            false
        }
    };
    if !as_expected {
        counts.unexpected += 1;
    }
}
