//! The figures loadgen reads from `/proc`: a process's CPU time and resident memory, and the
//! whole machine's busy time (to tell how much other load shared the measured phase).

use std::fs;
use std::time::Instant;

/// CPU times at one instant.
#[derive(Clone, Debug)]
pub struct CpuSnapshot {
    at: Instant,
    server: ProcessCpu,
    loadgen: ProcessCpu,
    machine_busy_ticks: u64,
}

impl CpuSnapshot {
    pub fn take(server_pid: u32) -> Self {
        Self {
            at: Instant::now(),
            server: ProcessCpu::read(&server_pid.to_string()),
            loadgen: ProcessCpu::read("self"),
            machine_busy_ticks: machine_busy_ticks().unwrap_or(0),
        }
    }
}

/// One process's CPU time two ways: whole clock ticks over every thread it ever had, and the
/// nanosecond run time of each live thread (`/proc/PID/task/TID/schedstat`).
#[derive(Clone, Debug, Default)]
struct ProcessCpu {
    ticks: u64,
    threads: Vec<(u32, u64)>,
}

impl ProcessCpu {
    fn read(pid: &str) -> Self {
        let mut threads: Vec<(u32, u64)> = fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten()
            .filter_map(|entry| {
                let entry = entry.ok()?;
                let tid = entry.file_name().to_str()?.parse().ok()?;
                let schedstat = fs::read_to_string(entry.path().join("schedstat")).ok()?;
                Some((tid, schedstat.split_whitespace().next()?.parse().ok()?))
            })
            .collect();
        threads.sort_unstable();
        Self {
            ticks: process_ticks(&format!("/proc/{pid}/stat")).unwrap_or(0),
            threads,
        }
    }

    /// Seconds between two readings: the precise per-thread figure while no thread ended in
    /// between, else the tick count.
    fn seconds_since(&self, start: &ProcessCpu, tick_s: f64) -> f64 {
        let kept = start.threads.iter().all(|(tid, _)| {
            self.threads
                .binary_search_by_key(tid, |&(tid, _)| tid)
                .is_ok()
        });
        if kept && !start.threads.is_empty() {
            let sum = |cpu: &ProcessCpu| cpu.threads.iter().map(|&(_, ns)| ns).sum::<u64>();
            sum(self).saturating_sub(sum(start)) as f64 / 1e9
        } else {
            self.ticks.saturating_sub(start.ticks) as f64 * tick_s
        }
    }
}

/// Seconds of CPU over a phase, and the share of the machine other processes used.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuUse {
    pub server_s: f64,
    pub loadgen_s: f64,
    /// Busy CPU not spent by the server or loadgen, as a fraction of all CPUs over the phase.
    pub other_load: f64,
}

pub fn cpu_use(start: &CpuSnapshot, end: &CpuSnapshot) -> CpuUse {
    let tick_s = 1.0 / rustix::param::clock_ticks_per_second() as f64;
    let server_s = end.server.seconds_since(&start.server, tick_s);
    let loadgen_s = end.loadgen.seconds_since(&start.loadgen, tick_s);
    let busy_s = end
        .machine_busy_ticks
        .saturating_sub(start.machine_busy_ticks) as f64
        * tick_s;
    let wall_s = end.at.duration_since(start.at).as_secs_f64();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let other_load = if wall_s > 0.0 {
        ((busy_s - server_s - loadgen_s) / (cpus * wall_s)).clamp(0.0, 1.0)
    } else {
        0.0
    };
    CpuUse {
        server_s,
        loadgen_s,
        other_load,
    }
}

/// utime + stime of every thread of a process (fields 14 and 15 of `stat`).
fn process_ticks(path: &str) -> Option<u64> {
    let stat = fs::read_to_string(path).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_ascii_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some(user + system)
}

/// user + nice + system + irq + softirq + steal of the aggregate `cpu` line of `/proc/stat`.
fn machine_busy_ticks() -> Option<u64> {
    let stat = fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().next()?.strip_prefix("cpu ")?;
    let fields: Vec<u64> = line
        .split_ascii_whitespace()
        .map(|field| field.parse().unwrap_or(0))
        .collect();
    let field = |index: usize| fields.get(index).copied().unwrap_or(0);
    Some(field(0) + field(1) + field(2) + field(5) + field(6) + field(7))
}

/// Resident memory of a process, in KiB.
#[derive(Clone, Copy, Debug, Default)]
pub struct Rss {
    pub current_kib: u64,
    pub high_water_kib: u64,
}

pub fn rss(pid: u32) -> Option<Rss> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status.lines().find_map(|line| {
            let value = line.strip_prefix(name)?.trim().strip_suffix("kB")?;
            value.trim().parse::<u64>().ok()
        })
    };
    Some(Rss {
        current_kib: field("VmRSS:")?,
        high_water_kib: field("VmHWM:").unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process() {
        let pid = std::process::id();
        let memory = rss(pid).unwrap();
        assert!(memory.current_kib > 0 && memory.high_water_kib >= memory.current_kib);
        let start = ProcessCpu::read("self");
        let spin = std::time::Instant::now();
        let spent = loop {
            let spent = ProcessCpu::read("self").seconds_since(&start, 0.01);
            if spent >= 0.02 || spin.elapsed().as_secs() >= 10 {
                break spent;
            }
        };
        assert!(spent >= 0.02, "{spent} s of CPU after spinning for 10 s");
        assert!(process_ticks("/proc/self/stat").unwrap() > 0);
        assert!(machine_busy_ticks().unwrap() > 0);
    }
}
