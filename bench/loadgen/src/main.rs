//! loadgen: spawns a stdio JSON-RPC server, performs its handshake, keeps a window of requests in
//! flight and reports throughput, latency, CPU and memory as one human line and one JSON line.

mod frame;
mod load;
mod procfs;
mod report;
mod requests;
mod responses;
mod sampler;
mod session;
mod single;
mod threaded;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, ValueEnum};

use load::{Io, Plan};
use responses::Expect;
use sampler::DelayedRead;

const WSP_INIT: &str = r#"{"client_name":"loadgen","client_protocol_version":"0.1.0"}"#;
const LSP_INIT: &str = r#"{"capabilities":{}}"#;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// Keep `--window` requests in flight and measure throughput and latency.
    Window,
    /// Send every request at once without reading, sample RSS for `--hold-ms`, then read all.
    InFlight,
    /// Like in-flight with many requests: write until writes block, sample RSS while holding,
    /// then read everything and check that every response arrives.
    NeverRead,
}

/// Load generator for stdio JSON-RPC servers with Content-Length framing.
#[derive(Parser, Debug)]
#[command(version, about, override_usage = "loadgen [OPTIONS] -- CMD [ARGS]...")]
struct Args {
    /// LSP handshake: `initialize` with {"capabilities":{}}, then `initialized`.
    #[arg(long)]
    lsp: bool,
    /// `initialize` params (default: WSP's client_name/client_protocol_version, or LSP's).
    #[arg(long)]
    init_params: Option<String>,
    /// The method of every measured request.
    #[arg(long, default_value = "bench/nonexistent")]
    method: String,
    /// Its params, as JSON.
    #[arg(long, default_value = "{}")]
    params: String,
    /// Requests to send (default: 100000; 1000 in in-flight mode).
    #[arg(short = 'n', long)]
    requests: Option<u64>,
    /// Requests kept in flight (window mode).
    #[arg(short = 'w', long, default_value_t = 64)]
    window: u64,
    #[arg(long, value_enum, default_value = "window")]
    mode: Mode,
    /// The I/O loop: one thread, or a writer and a reader thread (default: single for a
    /// window of 1, threads otherwise).
    #[arg(long, value_enum)]
    io: Option<Io>,
    /// What every response must be: any, result, error or error:CODE.
    #[arg(long, default_value = "any", value_parser = parse_expect)]
    expect: Expect,
    /// Delayed reads: writing counts as blocked after this long without progress.
    #[arg(long, default_value_t = 200)]
    stall_ms: u64,
    /// Delayed reads: how long RSS is sampled before reading starts (default: 500 in-flight,
    /// 3000 never-read).
    #[arg(long)]
    hold_ms: Option<u64>,
    /// How often the server's RSS is sampled.
    #[arg(long, default_value_t = 10)]
    sample_ms: u64,
    /// The measured phase is abandoned (server killed, exit status 1) after this long.
    #[arg(long, default_value_t = 120)]
    timeout_s: u64,
    /// A name for the server in the output (default: the command).
    #[arg(long)]
    label: Option<String>,
    /// A name for the case, copied into the output.
    #[arg(long, default_value = "")]
    case: String,
    /// Where the server's stderr goes (default: /dev/null).
    #[arg(long)]
    server_stderr: Option<PathBuf>,
    /// The server command and its arguments.
    #[arg(last = true, required = true)]
    command: Vec<String>,
}

fn parse_expect(text: &str) -> Result<Expect, String> {
    match text {
        "any" => Ok(Expect::Any),
        "result" => Ok(Expect::Result),
        "error" => Ok(Expect::Error(None)),
        _ => text
            .strip_prefix("error:")
            .and_then(|code| code.parse().ok())
            .map(|code| Expect::Error(Some(code)))
            .ok_or_else(|| "expected any, result, error or error:CODE".to_string()),
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let init_params = args
        .init_params
        .clone()
        .unwrap_or_else(|| if args.lsp { LSP_INIT } else { WSP_INIT }.to_string());
    for (name, json) in [("--params", &args.params), ("--init-params", &init_params)] {
        if let Err(err) = serde_json::from_str::<serde_json::Value>(json) {
            eprintln!("loadgen: {name} is not JSON: {err}");
            return ExitCode::from(2);
        }
    }
    let requests = args.requests.unwrap_or(match args.mode {
        Mode::InFlight => 1000,
        _ => 100_000,
    });
    let delayed_read = match args.mode {
        Mode::Window => None,
        Mode::InFlight | Mode::NeverRead => Some(DelayedRead {
            stall: Duration::from_millis(args.stall_ms),
            hold: Duration::from_millis(args.hold_ms.unwrap_or(match args.mode {
                Mode::InFlight => 500,
                _ => 3000,
            })),
        }),
    };
    let plan = Plan {
        method: args.method.clone(),
        params: args.params.clone(),
        requests,
        window: if delayed_read.is_some() {
            requests
        } else {
            args.window.max(1)
        },
        expect: args.expect,
        io: args
            .io
            .unwrap_or(if args.window <= 1 && delayed_read.is_none() {
                Io::Single
            } else {
                Io::Threads
            }),
        delayed_read,
        sample_every: Duration::from_millis(args.sample_ms.max(1)),
        timeout: Duration::from_secs(args.timeout_s),
    };
    let label = args.label.clone().unwrap_or_else(|| args.command.join(" "));
    let mut report = report::Report::new(&label, &args.case, args.mode, &plan);

    let mut server = match session::spawn(&args.command, args.server_stderr.as_deref()) {
        Ok(server) => server,
        Err(err) => {
            eprintln!("loadgen: cannot start {:?}: {err}", args.command);
            return ExitCode::from(2);
        }
    };
    if let Err(err) = session::handshake(&mut server, &init_params, args.lsp, plan.timeout) {
        report.failures.push(format!("handshake: {err}"));
        let _ = server.child.kill();
        let _ = server.child.wait();
        return report.print();
    }
    report.idle_rss_kib = procfs::rss(server.pid).map(|rss| rss.current_kib);
    let (outcome, server) = load::run(server, &plan);
    report.record(&outcome);
    match server {
        Some(server) => report.record_ending(&session::finish(
            server,
            requests + 1,
            Duration::from_secs(10),
        )),
        None => report
            .failures
            .push("no shutdown: the server was killed".into()),
    }
    report.print()
}
