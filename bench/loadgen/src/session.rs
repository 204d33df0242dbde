//! The server: spawning it on pipes or connecting to its Unix socket, the handshake, and
//! `shutdown` + `exit`.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::{kill_process, Pid, Signal};

use crate::frame::{push_frame, scan, FrameReader};

/// One session with the server: its stdin and stdout, or the two ends of one Unix socket.
pub struct Server {
    /// The process, when loadgen spawned it.
    pub child: Option<Child>,
    pub pid: u32,
    pub stdin: File,
    pub reader: FrameReader<File>,
    /// `stdin` is a socket (shared with `reader`): writes that must not block use `send`.
    pub is_socket: bool,
}

impl Server {
    /// Kills the server if loadgen spawned it; closes a connection otherwise.
    pub fn kill(mut self) {
        match self.child.as_mut() {
            Some(child) => {
                let _ = child.kill();
                let _ = child.wait();
            }
            None => {
                let _ = rustix::net::shutdown(&self.stdin, rustix::net::Shutdown::Both);
            }
        }
    }
}

/// Connects to a server listening on the Unix socket `path`; its pid is `pid`, else the
/// socket's peer's.
pub fn connect_unix(path: &Path, pid: Option<u32>) -> io::Result<Server> {
    let stream = UnixStream::connect(path)?;
    let pid = match pid {
        Some(pid) => pid,
        None => rustix::net::sockopt::socket_peercred(&stream)?
            .pid
            .as_raw_nonzero()
            .get() as u32,
    };
    let reader = File::from(OwnedFd::from(stream.try_clone()?));
    Ok(Server {
        child: None,
        pid,
        stdin: File::from(OwnedFd::from(stream)),
        reader: FrameReader::new(reader),
        is_socket: true,
    })
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
        child: Some(child),
        stdin: File::from(OwnedFd::from(stdin)),
        reader: FrameReader::new(File::from(OwnedFd::from(stdout))),
        is_socket: false,
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

fn send(stdin: &mut File, body: &str) -> io::Result<()> {
    let mut frame = Vec::with_capacity(body.len() + 32);
    push_frame(&mut frame, body.as_bytes());
    stdin.write_all(&frame)?;
    stdin.flush()
}

/// How a blocked session is ended: killing the spawned server, or shutting down the socket.
pub enum Stopper {
    Process(u32),
    Socket(OwnedFd),
}

impl Stopper {
    pub fn of(server: &Server) -> Stopper {
        match (&server.child, server.stdin.try_clone()) {
            (None, Ok(socket)) => Stopper::Socket(OwnedFd::from(socket)),
            _ => Stopper::Process(server.pid),
        }
    }

    pub fn stop(&self) {
        match self {
            Stopper::Process(pid) => {
                if let Some(pid) = Pid::from_raw(*pid as i32) {
                    let _ = kill_process(pid, Signal::KILL);
                }
            }
            Stopper::Socket(socket) => {
                let _ = rustix::net::shutdown(socket, rustix::net::Shutdown::Both);
            }
        }
    }
}

/// Runs `work`, stopping the server if it takes longer than `limit` (so a blocked read ends).
fn killing_after<T>(stopper: Stopper, limit: Duration, work: impl FnOnce() -> T) -> T {
    let (done, finished) = mpsc::channel::<()>();
    let watchdog = thread::spawn(move || {
        if let Err(RecvTimeoutError::Timeout) = finished.recv_timeout(limit) {
            stopper.stop();
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
    let initialized = killing_after(Stopper::of(server), limit, || {
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
    /// Loadgen connected to a running server: its exit is not waited for.
    pub connected: bool,
    pub error: Option<String>,
}

/// `shutdown`, `exit`, stdin closed, then the exit status (the server is killed when either
/// takes longer than `grace`).
pub fn finish(mut server: Server, shutdown_id: u64, grace: Duration) -> Ending {
    let mut ending = Ending::default();
    let answered = killing_after(Stopper::of(&server), grace, || {
        call(&mut server, shutdown_id, "shutdown", None)
    });
    match answered {
        Ok(ok) => ending.shutdown_ok = ok,
        Err(err) => ending.error = Some(err),
    }
    let exit_sent = Instant::now();
    let _ = send(&mut server.stdin, r#"{"jsonrpc":"2.0","method":"exit"}"#);
    let Some(mut child) = server.child.take() else {
        ending.connected = true;
        server.kill();
        return ending;
    };
    drop(server);
    let status = wait_with_deadline(&mut child, exit_sent + grace);
    ending.exit_ms = exit_sent.elapsed().as_secs_f64() * 1e3;
    match status {
        Some(status) => record_status(&mut ending, status),
        None => {
            ending.killed = true;
            let _ = child.kill();
            if let Ok(status) = child.wait() {
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
