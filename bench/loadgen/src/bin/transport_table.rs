//! transport-table: the transports benchmark's targets, each with its medians and whether it is
//! met, from loadgen's JSON lines (one run per line, as `bench/transports.sh` collects them).
//!
//! Usage: `transport-table RESULTS.jsonl [IDLE_CASE] [FLOOD_CASE]` (idle-1000, flood-100).

use std::process::ExitCode;

use serde_json::Value;

/// The median of figure `key` over the runs of `case` by server `label`.
fn median(runs: &[Value], label: &str, case: &str, key: &str) -> Option<f64> {
    let mut values: Vec<f64> = runs
        .iter()
        .filter(|run| run["label"] == label && run["case"] == case)
        .filter_map(|run| run[key].as_f64())
        .collect();
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    match values.len() {
        0 => None,
        len if len % 2 == 1 => Some(values[middle]),
        _ => Some((values[middle - 1] + values[middle]) / 2.0),
    }
}

/// How a target compares: wsp's figure against a bound, or against another server's figure.
enum Bound {
    /// wsp ÷ the other server at least this.
    RatioAtLeast(&'static str, f64),
    /// wsp ÷ the other server at most this.
    RatioAtMost(&'static str, f64),
    /// wsp's figure at most this.
    AtMost(f64),
}

struct Target {
    what: &'static str,
    label: &'static str,
    case: String,
    key: &'static str,
    format: fn(f64) -> String,
    bound: Bound,
}

fn rate(value: f64) -> String {
    format!("{:.0}k req/s", value / 1000.0)
}

fn micros(value: f64) -> String {
    format!("{value:.1} µs")
}

fn mebibytes(kib: f64) -> String {
    format!("{:.1} MiB", kib / 1024.0)
}

fn targets(idle_case: &str, flood_case: &str) -> Vec<Target> {
    let target = |what, label, case: &str, key, format, bound| Target {
        what,
        label,
        case: case.to_string(),
        key,
        format,
        bound,
    };
    vec![
        target(
            "WebSocket trivial throughput, 64 in flight",
            "wsp-ws",
            "ws-trivial-w64",
            "req_per_s",
            rate,
            Bound::RatioAtLeast("jsonrpsee-ws", 1.2),
        ),
        target(
            "WebSocket p50, window 1",
            "wsp-ws",
            "ws-trivial-w1",
            "p50_us",
            micros,
            Bound::RatioAtMost("jsonrpsee-ws", 1.0),
        ),
        target(
            "Unix-socket trivial throughput, 64 in flight",
            "wsp-unix",
            "trivial-w64",
            "req_per_s",
            rate,
            Bound::RatioAtLeast("wsp-stdio", 0.9),
        ),
        target(
            "idle initialized Unix-socket connections: server RSS",
            "wsp-unix",
            idle_case,
            "rss_kib",
            mebibytes,
            Bound::AtMost(64.0 * 1024.0),
        ),
        target(
            "idle initialized WebSocket connections: server RSS",
            "wsp-ws",
            idle_case,
            "rss_kib",
            mebibytes,
            Bound::AtMost(64.0 * 1024.0),
        ),
        target(
            "flooding neighbour: light client's p99",
            "wsp-unix",
            flood_case,
            "p99_us",
            micros,
            Bound::AtMost(5000.0),
        ),
    ]
}

fn table(runs: &[Value], targets: &[Target]) -> String {
    let mut out = String::from("| must-show | wsp | against | ratio | target | met |\n");
    out += "| --- | --- | --- | --- | --- | --- |\n";
    for target in targets {
        let value = median(runs, target.label, &target.case, target.key);
        let show = |value: Option<f64>| value.map_or("—".to_string(), target.format);
        let (against, ratio, wanted, met) = match target.bound {
            Bound::RatioAtLeast(other, least) | Bound::RatioAtMost(other, least) => {
                let base = median(runs, other, &target.case, target.key);
                let ratio = value.zip(base).map(|(value, base)| value / base);
                let at_least = matches!(target.bound, Bound::RatioAtLeast(..));
                let met = ratio.map(|ratio| {
                    if at_least {
                        ratio >= least
                    } else {
                        ratio <= least
                    }
                });
                let sign = if at_least { "≥" } else { "≤" };
                (
                    format!("{other} {}", show(base)),
                    ratio.map_or("—".to_string(), |ratio| format!("{ratio:.2}×")),
                    format!("{sign} {least}×"),
                    met,
                )
            }
            Bound::AtMost(most) => (
                "—".to_string(),
                "—".to_string(),
                format!("≤ {}", (target.format)(most)),
                value.map(|value| value <= most),
            ),
        };
        let met = match met {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "—",
        };
        out += &format!(
            "| {} ({}) | {} | {against} | {ratio} | {wanted} | {met} |\n",
            target.what,
            target.case,
            show(value)
        );
    }
    let ok = runs.iter().filter(|run| run["ok"] == true).count();
    out + &format!("\n{ok} of {} runs passed every check.\n", runs.len())
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: transport-table RESULTS.jsonl [IDLE_CASE] [FLOOD_CASE]");
        return ExitCode::from(2);
    };
    let idle_case = args.next().unwrap_or_else(|| "idle-1000".to_string());
    let flood_case = args.next().unwrap_or_else(|| "flood-100".to_string());
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) => {
            eprintln!("transport-table: {path}: {err}");
            return ExitCode::from(2);
        }
    };
    let runs: Vec<Value> = text
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    print!("{}", table(&runs, &targets(&idle_case, &flood_case)));
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(label: &str, case: &str, key: &str, value: f64) -> Value {
        serde_json::json!({"label": label, "case": case, key: value, "ok": true})
    }

    #[test]
    fn a_ratio_target_is_met_or_missed_on_medians() {
        let runs = vec![
            run("wsp-ws", "ws-trivial-w64", "req_per_s", 130e3),
            run("wsp-ws", "ws-trivial-w64", "req_per_s", 1e3),
            run("wsp-ws", "ws-trivial-w64", "req_per_s", 125e3),
            run("jsonrpsee-ws", "ws-trivial-w64", "req_per_s", 100e3),
        ];
        let met = table(&runs, &targets("idle-1000", "flood-100"));
        assert!(met.contains("| 125k req/s | jsonrpsee-ws 100k req/s | 1.25× | ≥ 1.2× | yes |"));
        let runs = vec![
            run("wsp-ws", "ws-trivial-w64", "req_per_s", 110e3),
            run("jsonrpsee-ws", "ws-trivial-w64", "req_per_s", 100e3),
        ];
        let missed = table(&runs, &targets("idle-1000", "flood-100"));
        assert!(missed.contains("| 1.10× | ≥ 1.2× | **no** |"));
    }

    #[test]
    fn a_bound_target_is_judged_on_wsps_median_alone() {
        let runs = vec![
            run("wsp-unix", "flood-100", "p99_us", 4000.0),
            run("wsp-unix", "flood-100", "p99_us", 9000.0),
            run("wsp-unix", "idle-1000", "rss_kib", 70.0 * 1024.0),
        ];
        let out = table(&runs, &targets("idle-1000", "flood-100"));
        assert!(out.contains("(flood-100) | 6500.0 µs | — | — | ≤ 5000.0 µs | **no** |"));
        assert!(out.contains("(idle-1000) | 70.0 MiB | — | — | ≤ 64.0 MiB | **no** |"));
        assert!(out.contains("3 of 3 runs passed"));
    }
}
