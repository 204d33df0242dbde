//! peer-table: the markdown table of medians from loadgen's JSON lines (one run per line, as
//! `bench/run.sh` collects them), one row per server, ratios against a baseline server.
//!
//! Usage: `peer-table RESULTS.jsonl [BASELINE]` (baseline label: async-lsp).

use std::collections::BTreeMap;
use std::process::ExitCode;

use serde_json::Value;

/// Runs grouped by server label, then by case, in the order the servers first appear.
struct Runs {
    order: Vec<String>,
    by_server: BTreeMap<String, BTreeMap<String, Vec<Value>>>,
}

impl Runs {
    fn parse(text: &str) -> Self {
        let mut runs = Runs {
            order: Vec::new(),
            by_server: BTreeMap::new(),
        };
        for run in text
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        {
            let server = run["label"].as_str().unwrap_or("?").to_string();
            let case = run["case"].as_str().unwrap_or("").to_string();
            if !runs.order.contains(&server) {
                runs.order.push(server.clone());
            }
            let cases = runs.by_server.entry(server).or_default();
            cases.entry(case).or_default().push(run);
        }
        runs
    }

    fn case(&self, server: &str, case: &str) -> &[Value] {
        self.by_server
            .get(server)
            .and_then(|cases| cases.get(case))
            .map_or(&[], Vec::as_slice)
    }

    /// The median of one figure over a server's runs of a case.
    fn median(&self, server: &str, case: &str, key: &str) -> Option<f64> {
        let mut values: Vec<f64> = self
            .case(server, case)
            .iter()
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

    fn all_runs<'a>(&'a self, server: &str) -> impl Iterator<Item = &'a Value> {
        self.by_server
            .get(server)
            .into_iter()
            .flat_map(|cases| cases.values().flatten())
    }
}

/// One column: a case, a figure, how to print it, and whether bigger is better for ratios.
struct Column {
    title: &'static str,
    case: &'static str,
    key: &'static str,
    format: fn(f64) -> String,
    ratio: bool,
}

fn rate(value: f64) -> String {
    if value >= 10_000.0 {
        format!("{:.0}k", value / 1000.0)
    } else {
        format!("{value:.0}")
    }
}

fn micros(value: f64) -> String {
    format!("{value:.1} µs")
}

fn mebibytes(kib: f64) -> String {
    format!("{:.1} MiB", kib / 1024.0)
}

const COLUMNS: &[Column] = &[
    Column {
        title: "trivial req/s, window 64",
        case: "trivial-w64",
        key: "req_per_s",
        format: rate,
        ratio: true,
    },
    Column {
        title: "p50, window 1",
        case: "trivial-w1",
        key: "p50_us",
        format: micros,
        ratio: true,
    },
    Column {
        title: "server CPU / request",
        case: "trivial-w64",
        key: "server_cpu_us_per_req",
        format: micros,
        ratio: true,
    },
    Column {
        title: "`environment/list` req/s, window 64",
        case: "list-w64",
        key: "req_per_s",
        format: rate,
        ratio: false,
    },
    Column {
        title: "idle RSS",
        case: "trivial-w64",
        key: "idle_rss_kib",
        format: mebibytes,
        ratio: true,
    },
    Column {
        title: "RSS, 1,000 in flight",
        case: "in-flight-1000",
        key: "peak_rss_kib",
        format: mebibytes,
        ratio: true,
    },
    Column {
        title: "never-reading client: peak RSS",
        case: "never-read-100k",
        key: "peak_rss_kib",
        format: mebibytes,
        ratio: true,
    },
];

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: peer-table RESULTS.jsonl [BASELINE]");
        return ExitCode::from(2);
    };
    let baseline = args.next().unwrap_or_else(|| "async-lsp".to_string());
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) => {
            eprintln!("peer-table: {path}: {err}");
            return ExitCode::from(2);
        }
    };
    let runs = Runs::parse(&text);
    print!("{}", table(&runs, &baseline));
    ExitCode::SUCCESS
}

fn table(runs: &Runs, baseline: &str) -> String {
    let mut header = vec!["server".to_string()];
    header.extend(COLUMNS.iter().map(|column| column.title.to_string()));
    header.extend(
        [
            "never-reading client: writes blocked, all answered",
            "other load, median / max",
            "runs ok",
        ]
        .map(String::from),
    );
    let mut out = row(&header);
    out += &row(&vec!["---".to_string(); header.len()]);
    for server in &runs.order {
        let mut cells = vec![server.clone()];
        for column in COLUMNS {
            let value = runs.median(server, column.case, column.key);
            let base = runs.median(baseline, column.case, column.key);
            cells.push(match (value, base) {
                (None, _) => "—".to_string(),
                (Some(value), Some(base)) if column.ratio && base > 0.0 => {
                    format!("{} ({:.2}×)", (column.format)(value), value / base)
                }
                (Some(value), _) => (column.format)(value),
            });
        }
        cells.push(never_read_summary(runs.case(server, "never-read-100k")));
        cells.push(other_load(runs, server));
        let all: Vec<&Value> = runs.all_runs(server).collect();
        let ok = all.iter().filter(|run| run["ok"] == true).count();
        cells.push(format!("{ok}/{}", all.len()));
        out += &row(&cells);
    }
    out
}

fn never_read_summary(runs: &[Value]) -> String {
    if runs.is_empty() {
        return "—".to_string();
    }
    let count = |key: &str| runs.iter().filter(|run| run[key] == true).count();
    format!(
        "{}/{n}, {}/{n}",
        count("writes_blocked"),
        count("all_arrived"),
        n = runs.len()
    )
}

fn other_load(runs: &Runs, server: &str) -> String {
    let mut loads: Vec<f64> = runs
        .all_runs(server)
        .filter(|run| run["mode"] == "window")
        .filter_map(|run| run["other_load"].as_f64())
        .collect();
    if loads.is_empty() {
        return "—".to_string();
    }
    loads.sort_by(f64::total_cmp);
    let percent = |share: f64| format!("{:.0}%", share * 100.0);
    format!(
        "{} / {}",
        percent(loads[loads.len() / 2]),
        percent(loads[loads.len() - 1])
    )
}

fn row(cells: &[String]) -> String {
    format!("| {} |\n", cells.join(" | "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_ratios() {
        let line = |label: &str, rate: f64| {
            format!(
                r#"{{"label":"{label}","case":"trivial-w64","mode":"window","req_per_s":{rate},"ok":true,"other_load":0.1}}"#
            )
        };
        let text = [
            line("async-lsp", 100e3),
            line("wsp", 150e3),
            line("async-lsp", 300e3),
            line("async-lsp", 200e3),
            line("wsp", 1e3),
        ]
        .join("\n");
        let runs = Runs::parse(&text);
        assert_eq!(
            runs.median("async-lsp", "trivial-w64", "req_per_s"),
            Some(200e3)
        );
        assert_eq!(runs.median("wsp", "trivial-w64", "req_per_s"), Some(75.5e3));
        let table = table(&runs, "async-lsp");
        assert!(table.contains("| wsp | 76k (0.38×) |"), "{table}");
        assert!(table.contains("| 3/3 |"), "{table}");
    }
}
