//! The one-thread I/O loop: render up to the free window into one buffer, write it without
//! blocking, read whatever the server sent, and refill. No thread hand-offs, so the fewest
//! wake-ups per request: the right shape for a window of 1.

use std::io::{self, ErrorKind, Write};
use std::sync::atomic::Ordering;
use std::thread;

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};
use rustix::net::{send, SendFlags};

use crate::load::{Plan, GATE_POLL};
use crate::requests::{RequestShape, SendTimes, MAX_WRITE};
use crate::responses::Responses;
use crate::sampler::Watch;
use crate::session::Server;

pub fn drive(
    server: &mut Server,
    plan: &Plan,
    watch: &Watch,
    times: &SendTimes,
    responses: &mut Responses,
) -> Result<(), String> {
    // A socket's two ends share one file description: its writes don't block by flag instead.
    let flags = fcntl_getfl(&server.stdin).map_err(|err| err.to_string())?;
    if !server.is_socket {
        fcntl_setfl(&server.stdin, flags | OFlags::NONBLOCK).map_err(|err| err.to_string())?;
    }
    let mut io = Loop {
        shape: RequestShape::new(&plan.method, &plan.params),
        requests: plan.requests,
        window: plan.window,
        next_id: 1,
        pending: Vec::with_capacity(MAX_WRITE + 4096),
        written: 0,
    };
    let result = io.run(server, watch, times, responses);
    let _ = fcntl_setfl(&server.stdin, flags);
    result
}

struct Loop {
    shape: RequestShape,
    requests: u64,
    window: u64,
    next_id: u64,
    pending: Vec<u8>,
    written: usize,
}

impl Loop {
    fn credits(&self, responses: &Responses) -> u64 {
        let in_flight = (self.next_id - 1) - responses.counts.unique;
        let unsent = self.requests + 1 - self.next_id;
        self.window.saturating_sub(in_flight).min(unsent)
    }

    fn run(
        &mut self,
        server: &mut Server,
        watch: &Watch,
        times: &SendTimes,
        responses: &mut Responses,
    ) -> Result<(), String> {
        while !responses.complete() {
            if watch.timed_out.load(Ordering::SeqCst) {
                return Err("timed out".into());
            }
            let credits = self.credits(responses);
            if self.written == self.pending.len() && credits > 0 {
                self.pending.clear();
                self.written = 0;
                let end = self.shape.render(&mut self.pending, self.next_id, credits);
                times.stamp(self.next_id, end);
                self.next_id = end;
            }
            let write_blocked = self.write(server, watch)?;
            if !write_blocked && self.credits(responses) > 0 {
                continue;
            }
            if !watch.gate_open.load(Ordering::SeqCst) {
                if write_blocked {
                    wait(server, false, Some(GATE_POLL));
                } else {
                    thread::park_timeout(GATE_POLL);
                }
                continue;
            }
            if write_blocked && !wait(server, true, None) {
                continue;
            }
            match server.reader.fill() {
                Ok(0) => return Err("EOF before every response arrived".into()),
                Ok(_) => responses.take(&mut server.reader, times, times.now_ns())?,
                Err(err) => return Err(format!("reading responses: {err}")),
            }
        }
        Ok(())
    }

    /// Writes what is pending; `Ok(true)` when the pipe is full.
    fn write(&mut self, server: &mut Server, watch: &Watch) -> Result<bool, String> {
        while self.written < self.pending.len() {
            let pending = &self.pending[self.written..];
            let written = if server.is_socket {
                send(&server.stdin, pending, SendFlags::DONTWAIT).map_err(io::Error::from)
            } else {
                server.stdin.write(pending)
            };
            match written {
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
}

/// Waits until the server's stdin takes more (or, with `readable`, it sent something);
/// `true` when there is input to read.
fn wait(server: &Server, readable: bool, timeout: Option<std::time::Duration>) -> bool {
    let timeout = timeout.map(|wait| Timespec {
        tv_sec: 0,
        tv_nsec: wait.as_nanos() as _,
    });
    let mut fds = [
        PollFd::new(&server.stdin, PollFlags::OUT),
        PollFd::new(server.reader.source(), PollFlags::IN),
    ];
    let watched = if readable { 2 } else { 1 };
    match poll(&mut fds[..watched], timeout.as_ref()) {
        Ok(_) => readable && !fds[1].revents().is_empty(),
        Err(err) => io::Error::from(err).kind() != ErrorKind::Interrupted,
    }
}
