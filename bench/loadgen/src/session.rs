//! The server process: spawning it on pipes, the handshake, and `shutdown` + `exit`.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::{kill_process, Pid, Signal};

use crate::frame::{push_frame, scan, FrameReader};

pub struct Server {
    pub child: Child,
    pub pid: u32,
    pub stdin: ChildStdin,
    pub reader: FrameReader<ChildStdout>,
}

pub fn spawn(command: &[String], stderr: Option<&Path>) -> io::Result<Server> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no server command"))?;
    let stderr = match stderr {
        Some(path) => Stdio::from(File::create(path)?),
        None => Stdio::null(),
    };
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        let _ = child.kill();
        return Err(io::Error::other("the child's pipes are missing"));
    };
    Ok(Server {
        pid: child.id(),
        child,
        stdin,
        reader: FrameReader::new(stdout),
    })
}

/// Writes one request (params omitted when `None`) and waits for its response, skipping
/// anything else the server sends. Returns whether the response was a result.
fn call(server: &mut Server, id: u64, method: &str, params: Option<&str>) -> Result<bool, String> {
    let method = serde_json::to_string(method).map_err(|err| err.to_string())?;
    let body = match params {
        Some(params) => {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":{method},"params":{params}}}"#)
        }
        None => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":{method}}}"#),
    };
    send(&mut server.stdin, &body).map_err(|err| format!("writing {method}: {err}"))?;
    loop {
        let frame = server
            .reader
            .read_frame()
            .map_err(|err| format!("reading the {method} response: {err}"))?
            .ok_or_else(|| format!("EOF before the {method} response"))?;
        let Some(found) = scan(&frame) else {
            return Err(format!(
                "malformed message: {}",
                String::from_utf8_lossy(&frame)
            ));
        };
        if found.id == Some(id) && !found.has_method {
            return Ok(found.has_result && found.error.is_none());
        }
    }
}

fn send(stdin: &mut ChildStdin, body: &str) -> io::Result<()> {
    let mut frame = Vec::with_capacity(body.len() + 32);
    push_frame(&mut frame, body.as_bytes());
    stdin.write_all(&frame)?;
    stdin.flush()
}

/// Runs `work`, killing the server if it takes longer than `limit` (so a blocked read ends).
fn killing_after<T>(pid: u32, limit: Duration, work: impl FnOnce() -> T) -> T {
    let (done, finished) = mpsc::channel::<()>();
    let watchdog = thread::spawn(move || {
        if let Err(RecvTimeoutError::Timeout) = finished.recv_timeout(limit) {
            if let Some(pid) = Pid::from_raw(pid as i32) {
                let _ = kill_process(pid, Signal::KILL);
            }
        }
    });
    let result = work();
    let _ = done.send(());
    let _ = watchdog.join();
    result
}

/// `initialize` (then `initialized` for LSP servers); fails unless the server answers a result
/// within `limit`.
pub fn handshake(
    server: &mut Server,
    init_params: &str,
    lsp: bool,
    limit: Duration,
) -> Result<(), String> {
    let pid = server.pid;
    let initialized = killing_after(pid, limit, || {
        call(server, 0, "initialize", Some(init_params))
    });
    if !initialized? {
        return Err("initialize was answered with an error".into());
    }
    if lsp {
        send(
            &mut server.stdin,
            r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#,
        )
        .map_err(|err| format!("writing initialized: {err}"))?;
    }
    Ok(())
}

/// How the server's session ended.
#[derive(Debug, Default)]
pub struct Ending {
    pub shutdown_ok: bool,
    /// The exit code, or `None` when killed by a signal or never exited.
    pub exit_code: Option<i32>,
    pub exit_signal: Option<i32>,
    /// From writing `exit` to the process ending.
    pub exit_ms: f64,
    /// Loadgen had to kill the server: it had not exited within the grace period.
    pub killed: bool,
    pub error: Option<String>,
}

/// `shutdown`, `exit`, stdin closed, then the exit status (the server is killed when either
/// takes longer than `grace`).
pub fn finish(mut server: Server, shutdown_id: u64, grace: Duration) -> Ending {
    let mut ending = Ending::default();
    let answered = killing_after(server.pid, grace, || {
        call(&mut server, shutdown_id, "shutdown", None)
    });
    match answered {
        Ok(ok) => ending.shutdown_ok = ok,
        Err(err) => ending.error = Some(err),
    }
    let exit_sent = Instant::now();
    let _ = send(&mut server.stdin, r#"{"jsonrpc":"2.0","method":"exit"}"#);
    drop(server.stdin);
    let status = wait_with_deadline(&mut server.child, exit_sent + grace);
    ending.exit_ms = exit_sent.elapsed().as_secs_f64() * 1e3;
    match status {
        Some(status) => record_status(&mut ending, status),
        None => {
            ending.killed = true;
            let _ = server.child.kill();
            if let Ok(status) = server.child.wait() {
                record_status(&mut ending, status);
            }
        }
    }
    ending
}

fn record_status(ending: &mut Ending, status: ExitStatus) {
    use std::os::unix::process::ExitStatusExt;
    ending.exit_code = status.code();
    ending.exit_signal = status.signal();
}

/// The child's exit status, or `None` if it is still running at `deadline`.
fn wait_with_deadline(child: &mut Child, deadline: Instant) -> Option<ExitStatus> {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
            _ => return None,
        }
    }
}
