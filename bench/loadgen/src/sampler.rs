//! A side thread that samples the server's RSS, decides when a delayed read may start, and
//! kills the server when the measured phase passes its timeout.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle, Thread};
use std::time::{Duration, Instant};

use crate::procfs;
use crate::session::Stopper;

/// Reading starts only once writing has finished or stalled, and the server was held so.
#[derive(Clone, Copy, Debug)]
pub struct DelayedRead {
    pub stall: Duration,
    pub hold: Duration,
}

/// State shared by the I/O loop and the sampler.
#[derive(Default)]
pub struct Watch {
    pub bytes_written: AtomicU64,
    pub all_written: AtomicBool,
    pub gate_open: AtomicBool,
    pub peak_rss_kib: AtomicU64,
    pub held_rss_kib: AtomicU64,
    pub writes_blocked: AtomicBool,
    pub bytes_before_read: AtomicU64,
    pub timed_out: AtomicBool,
    stop: AtomicBool,
}

pub struct Sampler {
    thread: JoinHandle<()>,
    watch: Arc<Watch>,
}

pub struct SamplerConfig {
    pub pid: u32,
    /// Ends the session at the timeout.
    pub stopper: Stopper,
    pub delayed_read: Option<DelayedRead>,
    pub every: Duration,
    pub timeout: Duration,
    /// Woken when the gate opens or the timeout fires.
    pub io_thread: Thread,
}

impl Sampler {
    pub fn spawn(watch: Arc<Watch>, config: SamplerConfig) -> Self {
        watch
            .gate_open
            .store(config.delayed_read.is_none(), Ordering::SeqCst);
        let shared = watch.clone();
        let thread = thread::spawn(move || sample(&shared, &config));
        Self { thread, watch }
    }

    pub fn stop(self) {
        self.watch.stop.store(true, Ordering::SeqCst);
        self.thread.thread().unpark();
        let _ = self.thread.join();
    }
}

fn sample(watch: &Watch, config: &SamplerConfig) {
    let started = Instant::now();
    let mut progress = (0, Instant::now());
    let mut hold_from: Option<Instant> = None;
    while !watch.stop.load(Ordering::SeqCst) {
        let rss = procfs::rss(config.pid).map_or(0, |rss| rss.current_kib);
        watch.peak_rss_kib.fetch_max(rss, Ordering::SeqCst);
        if started.elapsed() > config.timeout {
            watch.timed_out.store(true, Ordering::SeqCst);
            config.stopper.stop();
            config.io_thread.unpark();
            return;
        }
        if let (Some(delayed), false) =
            (config.delayed_read, watch.gate_open.load(Ordering::SeqCst))
        {
            watch.held_rss_kib.fetch_max(rss, Ordering::SeqCst);
            let written = watch.bytes_written.load(Ordering::SeqCst);
            if written != progress.0 {
                progress = (written, Instant::now());
            }
            let all_written = watch.all_written.load(Ordering::SeqCst);
            if hold_from.is_none() && (all_written || progress.1.elapsed() >= delayed.stall) {
                watch.writes_blocked.store(!all_written, Ordering::SeqCst);
                hold_from = Some(Instant::now());
            }
            if hold_from.is_some_and(|since| since.elapsed() >= delayed.hold) {
                watch.bytes_before_read.store(written, Ordering::SeqCst);
                watch.gate_open.store(true, Ordering::SeqCst);
                config.io_thread.unpark();
            }
        }
        thread::park_timeout(config.every);
    }
}
