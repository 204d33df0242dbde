//! The figures of one run, checked and printed as a human line and a JSON line (the last line).

use std::io::Write;
use std::process::ExitCode;

use serde_json::{json, Map, Value};

use crate::load::{Outcome, Plan};
use crate::session::Ending;
use crate::Mode;

pub struct Report {
    figures: Map<String, Value>,
    pub failures: Vec<String>,
    pub idle_rss_kib: Option<u64>,
}

impl Report {
    pub fn new(label: &str, case: &str, mode: Mode, plan: &Plan) -> Self {
        let mode = match mode {
            Mode::Window => "window",
            Mode::InFlight => "in-flight",
            Mode::NeverRead => "never-read",
            Mode::Idle => "idle",
            Mode::Flood => "flood",
            Mode::NeverReadNeighbor => "never-read-neighbor",
        };
        let figures = json!({
            "label": label,
            "case": case,
            "mode": mode,
            "method": plan.method,
            "requests": plan.requests,
            "window": plan.window,
            "io": format!("{:?}", plan.io).to_lowercase(),
        });
        Self {
            figures: figures.as_object().cloned().unwrap_or_default(),
            failures: Vec::new(),
            idle_rss_kib: None,
        }
    }

    pub fn set(&mut self, key: &str, value: impl Into<Value>) {
        self.figures.insert(key.to_string(), value.into());
    }

    pub fn record(&mut self, outcome: &Outcome) {
        let requests = self
            .figures
            .get("requests")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let counts = &outcome.counts;
        let per_request_us = |seconds: f64| seconds * 1e6 / requests.max(1) as f64;
        let percentile_us = |share: f64| {
            let sorted = &outcome.latencies_ns;
            let index = ((sorted.len() as f64 * share).ceil() as usize).saturating_sub(1);
            sorted.get(index).map(|&ns| ns as f64 / 1e3)
        };
        let all_arrived = counts.unique == requests;
        self.set("idle_rss_kib", self.idle_rss_kib);
        self.set("elapsed_s", outcome.elapsed_s);
        let rate = (outcome.elapsed_s > 0.0).then(|| counts.unique as f64 / outcome.elapsed_s);
        self.set("req_per_s", rate);
        self.set("p50_us", percentile_us(0.50));
        self.set("p90_us", percentile_us(0.90));
        self.set("p99_us", percentile_us(0.99));
        self.set("max_us", percentile_us(1.0));
        self.set(
            "server_cpu_us_per_req",
            per_request_us(outcome.cpu.server_s),
        );
        self.set(
            "loadgen_cpu_us_per_req",
            per_request_us(outcome.cpu.loadgen_s),
        );
        self.set("other_load", outcome.cpu.other_load);
        self.set("peak_rss_kib", outcome.peak_rss_kib);
        self.set("held_rss_kib", outcome.held_rss_kib);
        self.set("writes_blocked", outcome.writes_blocked);
        self.set(
            "bytes_written_before_read",
            outcome.bytes_written_before_read,
        );
        self.set("all_arrived", all_arrived);
        self.set("received", counts.unique);
        self.set("duplicates", counts.duplicates);
        self.set("unknown_ids", counts.unknown_ids);
        self.set("malformed", counts.malformed);
        self.set("server_messages", counts.server_messages);
        self.set("results", counts.results);
        self.set("errors", json!(counts.errors));
        self.set("unexpected", counts.unexpected);
        self.set("timed_out", outcome.timed_out);
        if !all_arrived {
            self.failures
                .push(format!("{} of {requests} responses arrived", counts.unique));
        }
        for (count, what) in [
            (counts.duplicates, "duplicate responses"),
            (counts.unknown_ids, "responses with unknown ids"),
            (counts.malformed, "malformed messages"),
            (counts.unexpected, "responses not as --expect says"),
        ] {
            if count > 0 {
                self.failures.push(format!("{count} {what}"));
            }
        }
        if outcome.timed_out {
            self.failures.push("timed out".into());
        }
        self.failures.extend(outcome.error.iter().cloned());
    }

    pub fn record_ending(&mut self, ending: &Ending) {
        self.set("shutdown_ok", ending.shutdown_ok);
        self.set("exit_code", ending.exit_code);
        self.set("exit_signal", ending.exit_signal);
        self.set("exit_ms", ending.exit_ms);
        self.set("killed", ending.killed);
        if !ending.shutdown_ok {
            self.failures
                .push("shutdown was not answered with a result".into());
        }
        if !ending.connected && ending.exit_code != Some(0) {
            self.failures.push(format!(
                "exit status {:?} (signal {:?}, killed by loadgen: {})",
                ending.exit_code, ending.exit_signal, ending.killed
            ));
        }
        self.failures.extend(ending.error.iter().cloned());
    }

    pub fn print(mut self) -> ExitCode {
        let ok = self.failures.is_empty();
        self.set("ok", ok);
        self.set("failures", json!(self.failures));
        let human = self.human_line();
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{human}\n{}", Value::Object(self.figures));
        if ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        }
    }

    fn human_line(&self) -> String {
        let field = |key: &str| self.figures.get(key).unwrap_or(&Value::Null);
        let number = |key: &str| field(key).as_f64();
        let mib = |key: &str| number(key).map_or("-".into(), |kib| format!("{:.1}", kib / 1024.0));
        let us = |key: &str| number(key).map_or("-".into(), |us| format!("{us:.1}"));
        let mut line = format!(
            "{}: {} x {}, {}",
            field("label").as_str().unwrap_or(""),
            field("requests"),
            field("method").as_str().unwrap_or(""),
            field("mode").as_str().unwrap_or(""),
        );
        let mode = field("mode").as_str().unwrap_or("");
        if mode == "idle" {
            line = format!(
                "{}: {} idle connections: server RSS {} MiB (before {} MiB), VmHWM {} MiB, {:.1} KiB per connection",
                field("label").as_str().unwrap_or(""),
                field("connections"),
                mib("rss_kib"),
                mib("rss_before_kib"),
                mib("hwm_kib"),
                number("kib_per_connection").unwrap_or(0.0),
            );
        } else if matches!(mode, "window" | "flood" | "never-read-neighbor") {
            line += &format!(
                " {}: {} req/s, p50 {} us, p99 {} us, server CPU {} us/req, loadgen CPU {} us/req",
                field("window"),
                number("req_per_s").map_or("-".into(), |rate| format!("{rate:.0}")),
                us("p50_us"),
                us("p99_us"),
                us("server_cpu_us_per_req"),
                us("loadgen_cpu_us_per_req"),
            );
        } else {
            line += &format!(
                ": RSS before reading {} MiB, writes blocked: {}, all arrived: {}",
                mib("held_rss_kib"),
                field("writes_blocked"),
                field("all_arrived"),
            );
        }
        if mode == "flood" {
            line += &format!(
                ", {} connections, the flooding one {} req/s",
                field("connections"),
                number("flood_req_per_s").map_or("-".into(), |rate| format!("{rate:.0}")),
            );
        }
        if mode == "never-read-neighbor" {
            line += &format!(
                ", never-reading connection: {:.1} MiB written, writes blocked: {}, RSS then {} MiB",
                number("never_read_bytes_written").unwrap_or(0.0) / 1048576.0,
                field("never_read_writes_blocked"),
                mib("rss_at_stall_kib"),
            );
        }
        line += &format!(
            ", RSS idle {} MiB, peak {} MiB",
            mib("idle_rss_kib"),
            mib("peak_rss_kib")
        );
        let other = number("other_load").unwrap_or(0.0) * 100.0;
        line += &format!(", other load {other:.0}%, exit {}", field("exit_code"));
        if self.failures.is_empty() {
            line + ", ok"
        } else {
            line + &format!(", FAILED: {}", self.failures.join("; "))
        }
    }
}
