//! Many connections to one server on its Unix socket, each one initialized: idle ones (the
//! server's memory for them), a flooding one beside a light one (the light one's latency), and
//! a never-reading one beside a light one (the server's memory, and whether the light one is
//! still answered).

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};

use crate::load::{self, Plan};
use crate::procfs;
use crate::report::Report;
use crate::requests::RequestShape;
use crate::session::{self, Server};

/// How to reach the server and greet it, for every connection.
pub struct Connections<'a> {
    pub path: &'a Path,
    pub pid: Option<u32>,
    pub count: usize,
    pub init_params: &'a str,
    pub lsp: bool,
    pub timeout: Duration,
}

impl Connections<'_> {
    /// Connects `count` times, initializing each connection before the next.
    fn open(&self) -> Result<Vec<Server>, String> {
        let mut servers = Vec::with_capacity(self.count);
        for index in 0..self.count {
            let mut server = session::connect_unix(self.path, self.pid)
                .map_err(|err| format!("connection {index}: {err}"))?;
            session::handshake(&mut server, self.init_params, self.lsp, self.timeout)
                .map_err(|err| format!("connection {index}: handshake: {err}"))?;
            servers.push(server);
        }
        Ok(servers)
    }
}

/// Opens every connection and holds them `hold`; the server's memory before and after.
pub fn idle(connections: &Connections, report: &mut Report, hold: Duration) {
    let first = match session::connect_unix(connections.path, connections.pid) {
        Ok(first) => first,
        Err(err) => return report.failures.push(format!("connecting: {err}")),
    };
    let pid = first.pid;
    drop(first);
    hold_idle(report, pid, hold, || connections.open());
}

/// Measures server `pid`'s memory before `open` and while holding what it opened for `hold`.
pub fn hold_idle<T>(
    report: &mut Report,
    pid: u32,
    hold: Duration,
    open: impl FnOnce() -> Result<Vec<T>, String>,
) {
    let before = procfs::rss(pid).unwrap_or_default();
    let opened_at = Instant::now();
    let opened = match open() {
        Ok(opened) => opened,
        Err(err) => return report.failures.push(err),
    };
    report.set("open_s", opened_at.elapsed().as_secs_f64());
    let mut peak = 0;
    let held = Instant::now();
    while held.elapsed() < hold {
        peak = peak.max(procfs::rss(pid).map_or(0, |rss| rss.current_kib));
        thread::sleep(Duration::from_millis(10));
    }
    let after = procfs::rss(pid).unwrap_or_default();
    report.set("connections", opened.len());
    report.set("rss_before_kib", before.current_kib);
    report.set("rss_kib", after.current_kib.max(peak));
    report.set("hwm_kib", after.high_water_kib);
    let per_connection =
        after.current_kib.saturating_sub(before.current_kib) as f64 / opened.len().max(1) as f64;
    report.set("kib_per_connection", per_connection);
}

/// One connection floods (its window always full) while another, measured by `plan`, sends
/// its requests; the rest stay idle.
pub fn flood(connections: &Connections, report: &mut Report, plan: &Plan, flood_window: u64) {
    let mut servers = match connections.open() {
        Ok(servers) if servers.len() >= 2 => servers,
        Ok(_) => {
            return report
                .failures
                .push("--connections must be 2 or more".into())
        }
        Err(err) => return report.failures.push(err),
    };
    let light = servers.remove(1);
    let flooder = servers.remove(0);
    let pid = light.pid;
    report.set("connections", connections.count);
    report.idle_rss_kib = procfs::rss(pid).map(|rss| rss.current_kib);
    let flood = Flood::default();
    let (outcome, light) = thread::scope(|scope| {
        let (started, flooding) = mpsc::channel();
        let flooding_thread = scope.spawn(|| flood.run(flooder, plan, flood_window, started));
        if flooding.recv_timeout(plan.timeout).is_err() {
            flood.stop.store(true, Ordering::SeqCst);
            report
                .failures
                .push("the flooding connection got no answer".into());
            let _ = flooding_thread.join();
            return (None, None);
        }
        let flooding_since = Instant::now();
        let received_before = flood.received.load(Ordering::SeqCst);
        let (outcome, light) = load::run(light, plan);
        let received = flood.received.load(Ordering::SeqCst) - received_before;
        let flooded_s = flooding_since.elapsed().as_secs_f64();
        flood.stop.store(true, Ordering::SeqCst);
        match flooding_thread.join() {
            Ok(Ok(())) => {}
            Ok(Err(err)) => report.failures.push(format!("flooding connection: {err}")),
            Err(_) => report.failures.push("the flooding thread panicked".into()),
        }
        report.set("flood_window", flood_window);
        report.set("flood_received", received);
        report.set("flood_req_per_s", received as f64 / flooded_s);
        (Some(outcome), light)
    });
    finish_light(report, outcome, light, plan);
    drop(servers);
}

/// One connection writes requests and never reads; once its writes stall, another one,
/// measured by `plan`, sends its requests.
pub fn never_read_neighbor(
    connections: &Connections,
    report: &mut Report,
    plan: &Plan,
    never_read: u64,
    stall: Duration,
) {
    let mut servers = match connections.open() {
        Ok(servers) if servers.len() >= 2 => servers,
        Ok(_) => {
            return report
                .failures
                .push("--connections must be 2 or more".into())
        }
        Err(err) => return report.failures.push(err),
    };
    let light = servers.remove(1);
    let mut never_reader = servers.remove(0);
    let pid = light.pid;
    report.set("connections", connections.count);
    report.idle_rss_kib = procfs::rss(pid).map(|rss| rss.current_kib);
    let stopper = session::Stopper::of(&never_reader);
    let written = AtomicU64::new(0);
    let all_written = AtomicBool::new(false);
    let (outcome, light) = thread::scope(|scope| {
        let writer = scope.spawn(|| {
            let shape = RequestShape::new(&plan.method, &plan.params);
            let mut buffer = Vec::new();
            let mut next_id = 1;
            while next_id <= never_read {
                buffer.clear();
                next_id = shape.render(&mut buffer, next_id, never_read + 1 - next_id);
                for piece in buffer.chunks(16 * 1024) {
                    if never_reader.stdin.write_all(piece).is_err() {
                        return;
                    }
                    written.fetch_add(piece.len() as u64, Ordering::SeqCst);
                }
            }
            all_written.store(true, Ordering::SeqCst);
        });
        let mut progress = (0, Instant::now());
        let mut peak_kib = 0;
        while !all_written.load(Ordering::SeqCst) && progress.1.elapsed() < stall {
            let now = written.load(Ordering::SeqCst);
            if now != progress.0 {
                progress = (now, Instant::now());
            }
            peak_kib = peak_kib.max(procfs::rss(pid).map_or(0, |rss| rss.current_kib));
            thread::sleep(Duration::from_millis(10));
        }
        report.set("never_read_requests", never_read);
        report.set("never_read_bytes_written", written.load(Ordering::SeqCst));
        report.set(
            "never_read_writes_blocked",
            !all_written.load(Ordering::SeqCst),
        );
        report.set("rss_at_stall_kib", peak_kib);
        let ran = load::run(light, plan);
        stopper.stop();
        let _ = writer.join();
        ran
    });
    finish_light(report, Some(outcome), light, plan);
    drop(never_reader);
}

fn finish_light(
    report: &mut Report,
    outcome: Option<load::Outcome>,
    light: Option<Server>,
    plan: &Plan,
) {
    if let Some(outcome) = outcome {
        report.record(&outcome);
    }
    match light {
        Some(light) => report.record_ending(&session::finish(
            light,
            plan.requests + 1,
            Duration::from_secs(10),
        )),
        None => report
            .failures
            .push("no shutdown: the light connection was closed".into()),
    }
}

/// The flooding connection's counts, shared by its writer and reader.
#[derive(Default)]
struct Flood {
    sent: AtomicU64,
    received: AtomicU64,
    stop: AtomicBool,
    writer_done: AtomicBool,
}

impl Flood {
    /// Keeps `window` requests in flight until `stop`, then reads what is still owed; says on
    /// `started` when the first answers came.
    fn run(
        &self,
        mut server: Server,
        plan: &Plan,
        window: u64,
        started: mpsc::Sender<()>,
    ) -> Result<(), String> {
        let Server { stdin, reader, .. } = &mut server;
        thread::scope(|scope| {
            let reading = thread::current();
            let writer = scope.spawn(move || {
                let shape = RequestShape::new(&plan.method, &plan.params);
                let mut buffer = Vec::new();
                let mut next_id = 1;
                let result = loop {
                    if self.stop.load(Ordering::SeqCst) {
                        break Ok(());
                    }
                    let in_flight = next_id - 1 - self.received.load(Ordering::SeqCst);
                    let free = window.saturating_sub(in_flight);
                    if free == 0 {
                        thread::park_timeout(Duration::from_millis(50));
                        continue;
                    }
                    buffer.clear();
                    let end = shape.render(&mut buffer, next_id, free);
                    if let Err(err) = stdin.write_all(&buffer) {
                        break Err(format!("writing: {err}"));
                    }
                    next_id = end;
                    self.sent.store(next_id - 1, Ordering::SeqCst);
                };
                self.writer_done.store(true, Ordering::SeqCst);
                reading.unpark();
                result
            });
            let writer_thread = writer.thread().clone();
            let mut started = Some(started);
            let read = 'read: loop {
                if self.writer_done.load(Ordering::SeqCst)
                    && self.received.load(Ordering::SeqCst) >= self.sent.load(Ordering::SeqCst)
                {
                    break Ok(());
                }
                let timeout = Timespec {
                    tv_sec: 0,
                    tv_nsec: 50_000_000,
                };
                let mut fds = [PollFd::new(reader.source(), PollFlags::IN)];
                if poll(&mut fds, Some(&timeout)).is_err() || fds[0].revents().is_empty() {
                    continue;
                }
                match reader.fill() {
                    Ok(0) => break Err("EOF on the flooding connection".to_string()),
                    Ok(_) => {}
                    Err(err) => break Err(format!("reading: {err}")),
                }
                let mut answers = 0;
                loop {
                    match reader.next_frame() {
                        Ok(Some(_)) => answers += 1,
                        Ok(None) => break,
                        Err(err) => break 'read Err(format!("reading: {err}")),
                    }
                }
                self.received.fetch_add(answers, Ordering::SeqCst);
                writer_thread.unpark();
                if answers > 0 {
                    if let Some(started) = started.take() {
                        let _ = started.send(());
                    }
                }
            };
            self.stop.store(true, Ordering::SeqCst);
            let written = writer
                .join()
                .unwrap_or_else(|_| Err("the writer panicked".into()));
            read.and(written)
        })?;
        server.kill();
        Ok(())
    }
}
