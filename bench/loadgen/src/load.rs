//! The measured phase: requests out and responses in on the server's pipes (one thread or two,
//! see `single` and `threaded`), while a sampler thread watches memory and time.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use crate::procfs::{self, cpu_use, CpuSnapshot, CpuUse};
use crate::requests::SendTimes;
use crate::responses::{Counts, Expect, Responses};
use crate::sampler::{DelayedRead, Sampler, SamplerConfig, Watch};
use crate::session::{Server, Stopper};
use crate::{single, threaded};

/// How often a loop waiting for the read gate looks at it again.
pub const GATE_POLL: Duration = Duration::from_millis(5);

/// Which I/O loop drives the pipes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Io {
    /// One thread writes and reads.
    Single,
    /// A writer thread and a reader thread.
    Threads,
}

pub struct Plan {
    pub method: String,
    pub params: String,
    pub requests: u64,
    pub window: u64,
    pub expect: Expect,
    pub io: Io,
    pub delayed_read: Option<DelayedRead>,
    pub sample_every: Duration,
    pub timeout: Duration,
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
    let stopper = Stopper::of(&server);
    let outcome = measure(
        server.pid,
        stopper,
        plan,
        |watch, times, responses| match plan.io {
            Io::Single => single::drive(&mut server, plan, watch, times, responses),
            Io::Threads => threaded::drive(&mut server, plan, watch, times, responses),
        },
    );
    if outcome.timed_out {
        server.kill();
        return (outcome, None);
    }
    (outcome, Some(server))
}

/// Runs `drive` (requests out, responses in) while a sampler watches server `pid`'s memory and
/// the timeout (at which `stopper` ends the session), and gathers the figures.
pub fn measure(
    pid: u32,
    stopper: Stopper,
    plan: &Plan,
    drive: impl FnOnce(&Watch, &SendTimes, &mut Responses) -> Result<(), String>,
) -> Outcome {
    let watch = Arc::new(Watch::default());
    let sampler = Sampler::spawn(
        watch.clone(),
        SamplerConfig {
            pid,
            stopper,
            delayed_read: plan.delayed_read,
            every: plan.sample_every,
            timeout: plan.timeout,
            io_thread: thread::current(),
        },
    );
    let times = SendTimes::new(plan.requests);
    let mut responses = Responses::new(plan.requests, plan.expect);
    let start = CpuSnapshot::take(pid);
    let driven = drive(&watch, &times, &mut responses);
    let end = CpuSnapshot::take(pid);
    sampler.stop();

    let final_rss = procfs::rss(pid).unwrap_or_default();
    let elapsed_s = responses.last_ns.saturating_sub(times.first_ns()) as f64 / 1e9;
    responses.latencies_ns.sort_unstable();
    Outcome {
        elapsed_s,
        cpu: cpu_use(&start, &end),
        latencies_ns: responses.latencies_ns,
        counts: responses.counts,
        peak_rss_kib: watch
            .peak_rss_kib
            .load(Ordering::SeqCst)
            .max(final_rss.high_water_kib),
        held_rss_kib: plan
            .delayed_read
            .map(|_| watch.held_rss_kib.load(Ordering::SeqCst)),
        writes_blocked: watch.writes_blocked.load(Ordering::SeqCst),
        bytes_written_before_read: watch.bytes_before_read.load(Ordering::SeqCst),
        timed_out: watch.timed_out.load(Ordering::SeqCst),
        error: driven.err(),
    }
}
