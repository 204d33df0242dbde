//! Test support: the real `wsp serve` binary over real pipes.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio_util::codec::FramedRead;
use wsp_server::codec::{Frame, FrameCodec};
#[allow(unused_imports)] // Not every test binary that includes this module writes one.
pub use wsp_testing::write_executable;

/// How long a test waits for one response before failing (a bound, not a sleep).
pub const PATIENCE: Duration = Duration::from_secs(60);

/// A `wsp serve` child process with its pipes.
pub struct Server {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub stdout: FramedRead<ChildStdout, FrameCodec>,
    pub state_dir: PathBuf,
    _temp: Option<tempfile::TempDir>,
}

pub fn frame(payload: &str) -> Vec<u8> {
    let mut bytes = format!("Content-Length: {}\r\n\r\n", payload.len()).into_bytes();
    bytes.extend_from_slice(payload.as_bytes());
    bytes
}

pub fn request(id: impl Into<Value>, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

pub fn notification(method: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": method})
}

pub fn initialize(id: i64) -> Value {
    request(
        id,
        "initialize",
        json!({"client_name": "tests", "client_protocol_version": "0.1.0"}),
    )
}

impl Server {
    /// Starts `wsp serve` with a fresh temporary state directory and `extra` arguments.
    pub fn start(extra: &[&str]) -> Server {
        let temp = tempfile::tempdir().expect("a temp dir");
        let state_dir = temp.path().join("state");
        let mut server = Server::start_in(&state_dir, extra);
        server._temp = Some(temp);
        server
    }

    /// Starts `wsp serve` on an existing state directory.
    pub fn start_in(state_dir: &Path, extra: &[&str]) -> Server {
        Server::start_with_env(state_dir, extra, &[])
    }

    /// Starts `wsp serve` on `state_dir` with `env` set on top of the test's environment.
    pub fn start_with_env(state_dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> Server {
        Server::start_wrapped(&[], state_dir, extra, env)
    }

    /// Like [`Server::start_with_env`], with `wsp serve ...` run by `wrapper` (a program and
    /// its first arguments, to which the `wsp` binary's path and the rest are appended).
    pub fn start_wrapped(
        wrapper: &[&str],
        state_dir: &Path,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Server {
        let wsp = env!("CARGO_BIN_EXE_wsp");
        let mut command = match wrapper.split_first() {
            Some((program, args)) => {
                let mut command = Command::new(program);
                command.args(args).arg(wsp);
                command
            }
            None => Command::new(wsp),
        };
        command.envs(env.iter().copied());
        command
            .arg("serve")
            .arg("--state-dir")
            .arg(state_dir)
            .args(extra)
            .env("WSP_LOG", "debug")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("wsp serve starts");
        let stdin = child.stdin.take();
        let stdout = FramedRead::new(child.stdout.take().expect("stdout"), FrameCodec::new());
        Server {
            child,
            stdin,
            stdout,
            state_dir: state_dir.to_owned(),
            _temp: None,
        }
    }

    pub async fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).await.expect("write to the server");
        stdin.flush().await.expect("flush to the server");
    }

    pub async fn send(&mut self, message: &Value) {
        self.send_raw(&frame(&message.to_string())).await;
    }

    /// The next response frame, parsed.
    pub async fn recv(&mut self) -> Value {
        let next = tokio::time::timeout(PATIENCE, self.stdout.next())
            .await
            .expect("a response in time");
        match next {
            Some(Ok(Frame::Payload(text))) => serde_json::from_str(&text).expect("JSON response"),
            other => {
                let ended = self.how_it_ended().await;
                panic!("expected a response frame, got {other:?}; {ended}")
            }
        }
    }

    /// How the server ended, for a test whose server stopped answering: its exit status (if it
    /// exited within a second) and the end of its stderr.
    async fn how_it_ended(&mut self) -> String {
        let status = tokio::time::timeout(Duration::from_secs(1), self.child.wait()).await;
        let mut log = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            let reading = tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut log);
            let _ = tokio::time::timeout(Duration::from_secs(1), reading).await;
        }
        let lines: Vec<&str> = log.lines().collect();
        let tail = lines[lines.len().saturating_sub(30)..].join("\n");
        format!("the server: {status:?}; the end of its stderr:\n{tail}")
    }

    /// Sends a request and returns its response.
    pub async fn call(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(&request(id, method, params)).await;
        let response = self.recv().await;
        assert_eq!(
            response["id"],
            json!(id),
            "response to the wrong request: {response}"
        );
        response
    }

    pub async fn initialize(&mut self) -> Value {
        self.send(&initialize(0)).await;
        let response = self.recv().await;
        assert!(
            response.get("result").is_some(),
            "initialize failed: {response}"
        );
        response
    }

    /// Creates the environment `name` on Python 3.12 as request `id`, asserting that it was
    /// created; returns its record (the result).
    pub async fn create_environment(&mut self, id: i64, name: &str) -> Value {
        let created = self
            .call(
                id,
                "environment/create",
                json!({"name": name, "python_version": "3.12"}),
            )
            .await;
        assert!(created.get("result").is_some(), "{created}");
        created["result"].clone()
    }

    /// The next frame's payload, as the bytes the server wrote.
    pub async fn recv_text(&mut self) -> String {
        let next = tokio::time::timeout(PATIENCE, self.stdout.next())
            .await
            .expect("a frame in time");
        match next {
            Some(Ok(Frame::Payload(text))) => text,
            other => panic!("expected a frame, got {other:?}"),
        }
    }

    /// The server's peak resident memory so far, in MiB.
    pub fn peak_rss_mib(&self) -> f64 {
        memory_mib(self.child.id().expect("the server runs"), "VmHWM")
    }

    /// Closes stdin (EOF).
    pub fn close(&mut self) {
        self.stdin.take();
    }

    /// Waits for the process to end; returns its exit code and stderr, and asserts stdout has
    /// nothing left.
    pub async fn finish(mut self) -> (i32, String) {
        self.close();
        let rest = tokio::time::timeout(PATIENCE, self.stdout.next())
            .await
            .expect("stdout closes");
        assert!(rest.is_none(), "unexpected output after the end: {rest:?}");
        let mut stderr = self.child.stderr.take().expect("stderr");
        let mut log = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut log)
            .await
            .expect("stderr");
        let status = tokio::time::timeout(PATIENCE, self.child.wait())
            .await
            .expect("the server exits in time")
            .expect("wait");
        (status.code().unwrap_or(-1), log)
    }
}

pub fn error_code(response: &Value) -> i64 {
    response["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected an error: {response}"))
}

/// Starts, through `environment/execute` request `request_id` in environment `environment`, a
/// command whose background `sleep 300` never ends by itself; returns that grandchild's pid once
/// it runs (read from a FIFO: an event, not a sleep). `scratch` holds the FIFO.
pub async fn start_sleeper(
    server: &mut Server,
    request_id: impl Into<Value>,
    environment: &Value,
    scratch: &Path,
) -> i32 {
    let (fifo, argv) = sleeper(scratch);
    server
        .send(&request(
            request_id,
            "environment/execute",
            json!({"id": environment, "argv": argv}),
        ))
        .await;
    read_pid(fifo).await
}

/// A FIFO in `scratch` and the argv of a command that starts a background `sleep 300` and
/// writes its pid there, then waits for it.
pub fn sleeper(scratch: &Path) -> (PathBuf, Value) {
    let fifo = scratch.join("pid");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let script = format!("sleep 300 & echo $! > '{}'; wait", fifo.display());
    (fifo, json!(["sh", "-c", script]))
}

/// The pid a [`sleeper`] writes to `fifo`, once it runs (an event, not a sleep).
pub async fn read_pid(fifo: PathBuf) -> i32 {
    let pid = tokio::task::spawn_blocking(move || std::fs::read_to_string(fifo))
        .await
        .expect("the reader task ends")
        .expect("the command writes its child's pid");
    pid.trim().parse().expect("a pid")
}

/// Whether `pid` is a live (not zombie) process.
pub fn is_running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

/// A memory figure of process `pid` from `/proc/<pid>/status` (`VmRSS`, `VmHWM`, ...), in MiB.
pub fn memory_mib(pid: u32, field: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("its status");
    let line = status
        .lines()
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .unwrap_or_else(|| panic!("a {field} line"));
    let kib: f64 = line
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .expect("a number of kB");
    kib / 1024.0
}

/// A process watched through a pidfd, opened while it runs: once open, a pid reused by
/// another process is not mistaken for it.
pub struct Watched {
    pid: i32,
    pidfd: std::os::fd::OwnedFd,
}

impl Watched {
    /// Starts watching `pid`, which must be a live (not zombie) process.
    pub fn new(pid: i32) -> Watched {
        let raw = rustix::process::Pid::from_raw(pid).expect("a pid");
        let pidfd = rustix::process::pidfd_open(raw, rustix::process::PidfdFlags::empty())
            .unwrap_or_else(|error| panic!("process {pid} is not there to watch: {error}"));
        assert!(is_running(pid), "process {pid} already ended");
        Watched { pid, pidfd }
    }

    /// Watches `pid` if it still runs; `None` if it has ended already (a short-lived
    /// process seen in a listing a moment before).
    pub fn if_running(pid: i32) -> Option<Watched> {
        let raw = rustix::process::Pid::from_raw(pid)?;
        let pidfd = rustix::process::pidfd_open(raw, rustix::process::PidfdFlags::empty()).ok()?;
        is_running(pid).then_some(Watched { pid, pidfd })
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Waits until the process has ended (its pidfd turns readable: an event, not a poll
    /// loop); fails naming `what` if it still runs after `within`.
    pub async fn assert_ends(&self, within: Duration, what: &str) {
        let pidfd = self.pidfd.try_clone().expect("a copy of the pidfd");
        let waiting = tokio::task::spawn_blocking(move || {
            let mut watched = [rustix::event::PollFd::new(
                &pidfd,
                rustix::event::PollFlags::IN,
            )];
            let timeout = rustix::event::Timespec::try_from(within).expect("a timeout");
            rustix::event::poll(&mut watched, Some(&timeout))
        });
        let ready = waiting.await.expect("the waiting task").expect("poll");
        assert_eq!(ready, 1, "{what} {} still runs after {within:?}", self.pid);
    }
}

/// Waits (bounded) until `pid` is gone; fails naming `what` if it outlives the bound.
pub async fn assert_gone(pid: i32, what: &str) {
    let Some(process) = rustix::process::Pid::from_raw(pid) else {
        panic!("{what}: {pid} is not a pid");
    };
    let Ok(pidfd) = rustix::process::pidfd_open(process, rustix::process::PidfdFlags::empty())
    else {
        return; // already gone
    };
    let waited = tokio::task::spawn_blocking(move || {
        let mut fds = [rustix::event::PollFd::new(
            &pidfd,
            rustix::event::PollFlags::IN,
        )];
        let patience = rustix::event::Timespec {
            tv_sec: 10,
            tv_nsec: 0,
        };
        rustix::event::poll(&mut fds, Some(&patience))
    });
    let ready = waited.await.expect("the waiting task").expect("poll");
    assert!(
        ready == 1 || !is_running(pid),
        "{what} {pid} still runs: an orphan"
    );
}

/// The environment methods over the venv backend on the state directory `state_dir`, for an
/// in-process server.
pub fn venv_environments(state_dir: &Path) -> wsp_environments::Environments {
    let store = wsp_environments::store::Store::open(state_dir).expect("store");
    let inventory = wsp_interpreters::Inventory::new(wsp_interpreters::InventoryConfig::from_env());
    let backend = wsp_backend_venv::VenvBackend::new(inventory.clone(), Default::default());
    wsp_environments::Environments::new(store, "venv", backend).with_interpreters(inventory)
}

/// Variables under which `wsp` finds no pyenv, uv, mise or asdf interpreters (their roots are
/// `empty_dir`) and searches only `/usr/bin:/bin` for others: it lists its `--interpreter`s
/// and the system's.
pub fn without_managed_pythons(empty_dir: &Path) -> Vec<(&'static str, String)> {
    let empty = empty_dir.display().to_string();
    let mut env: Vec<(&'static str, String)> = [
        "PYENV_ROOT",
        "UV_PYTHON_INSTALL_DIR",
        "MISE_DATA_DIR",
        "ASDF_DATA_DIR",
    ]
    .into_iter()
    .map(|name| (name, empty.clone()))
    .collect();
    env.push(("PATH", "/usr/bin:/bin".to_owned()));
    env
}

/// Points the pip seed cache of the state directory `state_dir` at one kept between tests and
/// runs (under the target directory), so that `ensurepip` fills it once per interpreter
/// rather than once per test.
pub fn share_seed_cache(state_dir: &Path) {
    let shared = Path::new(env!("CARGO_TARGET_TMPDIR")).join("wsp-pip-seed-cache");
    std::fs::create_dir_all(&shared).expect("the shared seed cache is made");
    let cache = state_dir.join("cache");
    std::fs::create_dir_all(&cache).expect("the state's cache directory is made");
    let link = cache.join("pip-seed");
    if !link.exists() {
        std::os::unix::fs::symlink(&shared, &link).expect("the seed cache is linked");
    }
}
