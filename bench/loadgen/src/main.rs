//! loadgen: spawns a stdio JSON-RPC server (or connects to one on a Unix socket or a
//! WebSocket), performs its handshake, keeps a window of requests in flight and reports
//! throughput, latency, CPU and memory as one human line and one JSON line.

mod frame;
mod load;
mod many;
mod procfs;
mod report;
mod requests;
mod responses;
mod sampler;
mod session;
mod single;
mod threaded;
mod ws;

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
    /// `--connections` initialized connections held `--hold-ms` (default 500): the server's
    /// memory for them (Unix sockets or WebSockets).
    Idle,
    /// `--connections` connections: the first keeps `--flood-window` requests in flight
    /// throughout, the second sends `-n` requests at `--window` and is measured, the rest
    /// idle (Unix sockets).
    Flood,
    /// `--connections` connections: the first writes `--never-read-requests` requests and never
    /// reads; once its writes stall, the second sends `-n` requests at `--window` and is
    /// measured (Unix sockets).
    NeverReadNeighbor,
}

/// Where `--connect` goes.
#[derive(Clone, Debug)]
pub enum Connect {
    Unix(PathBuf),
    WebSocket(String),
}

fn parse_connect(text: &str) -> Result<Connect, String> {
    if let Some(path) = text.strip_prefix("unix:") {
        return Ok(Connect::Unix(PathBuf::from(path)));
    }
    if text.starts_with("ws://") {
        return Ok(Connect::WebSocket(text.to_string()));
    }
    Err("expected unix:PATH or ws://HOST:PORT".into())
}

/// Load generator for JSON-RPC servers: stdio or Unix sockets (Content-Length framing), or
/// WebSockets (a message per text frame).
#[derive(Parser, Debug)]
#[command(
    version,
    about,
    override_usage = "loadgen [OPTIONS] -- CMD [ARGS]...\n       loadgen [OPTIONS] --connect ADDRESS"
)]
struct Args {
    /// Connect to a running server instead of spawning one: unix:PATH or ws://HOST:PORT/.
    #[arg(long, value_parser = parse_connect)]
    connect: Option<Connect>,
    /// A file holding the WebSocket token, sent as `Authorization: Bearer <token>`.
    #[arg(long)]
    token_file: Option<PathBuf>,
    /// The server's pid, for its memory and CPU figures (a Unix socket's peer by default;
    /// needed over WebSockets).
    #[arg(long)]
    server_pid: Option<u32>,
    /// Connections, in the idle, flood and never-read-neighbor modes.
    #[arg(long, default_value_t = 1)]
    connections: usize,
    /// Flood mode: the flooding connection's window.
    #[arg(long, default_value_t = 64)]
    flood_window: u64,
    /// never-read-neighbor mode: the requests the never-reading connection writes.
    #[arg(long, default_value_t = 100_000)]
    never_read_requests: u64,
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
    #[arg(last = true, required_unless_present = "connect")]
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
        Mode::Window | Mode::Idle | Mode::Flood | Mode::NeverReadNeighbor => None,
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
    let label = args.label.clone().unwrap_or_else(|| match &args.connect {
        Some(Connect::Unix(path)) => format!("unix:{}", path.display()),
        Some(Connect::WebSocket(url)) => url.clone(),
        None => args.command.join(" "),
    });
    let mut report = report::Report::new(&label, &args.case, args.mode, &plan);
    let many_mode = matches!(
        args.mode,
        Mode::Idle | Mode::Flood | Mode::NeverReadNeighbor
    );
    match (&args.connect, many_mode) {
        (Some(Connect::Unix(path)), true) => {
            let connections = many::Connections {
                path,
                pid: args.server_pid,
                count: args.connections,
                init_params: &init_params,
                lsp: args.lsp,
                timeout: plan.timeout,
            };
            match args.mode {
                Mode::Idle => many::idle(
                    &connections,
                    &mut report,
                    Duration::from_millis(args.hold_ms.unwrap_or(500)),
                ),
                Mode::Flood => many::flood(&connections, &mut report, &plan, args.flood_window),
                _ => many::never_read_neighbor(
                    &connections,
                    &mut report,
                    &plan,
                    args.never_read_requests,
                    Duration::from_millis(args.stall_ms),
                ),
            }
            report.print()
        }
        (Some(Connect::WebSocket(url)), _) if matches!(args.mode, Mode::Window | Mode::Idle) => {
            run_websocket(url, &args, &plan, &init_params, report)
        }
        (Some(Connect::WebSocket(_)), _) => {
            eprintln!("loadgen: over WebSockets only --mode window and idle are supported");
            ExitCode::from(2)
        }
        (None, true) => {
            eprintln!("loadgen: --mode {:?} needs --connect unix:PATH", args.mode);
            ExitCode::from(2)
        }
        (Some(Connect::Unix(path)), false) => match session::connect_unix(path, args.server_pid) {
            Ok(server) => run_session(server, &args, &plan, &init_params, report),
            Err(err) => {
                eprintln!("loadgen: cannot connect to {}: {err}", path.display());
                ExitCode::from(2)
            }
        },
        (None, false) => match session::spawn(&args.command, args.server_stderr.as_deref()) {
            Ok(server) => run_session(server, &args, &plan, &init_params, report),
            Err(err) => {
                eprintln!("loadgen: cannot start {:?}: {err}", args.command);
                ExitCode::from(2)
            }
        },
    }
}

/// One session over pipes or a Unix socket: handshake, measured phase, `shutdown` + `exit`.
fn run_session(
    mut server: session::Server,
    args: &Args,
    plan: &Plan,
    init_params: &str,
    mut report: report::Report,
) -> ExitCode {
    if let Err(err) = session::handshake(&mut server, init_params, args.lsp, plan.timeout) {
        report.failures.push(format!("handshake: {err}"));
        server.kill();
        return report.print();
    }
    report.idle_rss_kib = procfs::rss(server.pid).map(|rss| rss.current_kib);
    let (outcome, server) = load::run(server, plan);
    report.record(&outcome);
    match server {
        Some(server) => report.record_ending(&session::finish(
            server,
            plan.requests + 1,
            Duration::from_secs(10),
        )),
        None => report
            .failures
            .push("no shutdown: the server was killed".into()),
    }
    report.print()
}

fn run_websocket(
    url: &str,
    args: &Args,
    plan: &Plan,
    init_params: &str,
    mut report: report::Report,
) -> ExitCode {
    let Some(pid) = args.server_pid else {
        eprintln!("loadgen: --connect ws://... needs --server-pid");
        return ExitCode::from(2);
    };
    let token = match &args.token_file {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) => Some(text.trim().to_string()),
            Err(err) => {
                eprintln!("loadgen: cannot read {}: {err}", path.display());
                return ExitCode::from(2);
            }
        },
        None => None,
    };
    let target = ws::Target {
        url: url.to_string(),
        token,
        pid,
    };
    if args.mode == Mode::Idle {
        let hold = Duration::from_millis(args.hold_ms.unwrap_or(500));
        let count = args.connections;
        ws::idle(
            &target,
            count,
            init_params,
            args.lsp,
            plan.timeout,
            hold,
            &mut report,
        );
        return report.print();
    }
    match ws::run(&target, plan, init_params, args.lsp) {
        Ok(run) => {
            report.idle_rss_kib = run.idle_rss_kib;
            if let Some(outcome) = &run.outcome {
                report.record(outcome);
            }
            match &run.ending {
                Some(ending) => report.record_ending(ending),
                None => report.failures.push("no shutdown: timed out".into()),
            }
        }
        Err(err) => report.failures.push(err),
    }
    report.print()
}
