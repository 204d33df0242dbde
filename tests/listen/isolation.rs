//! One `wsp serve --listen` process, many clients: a client can't hurt another. Over a Unix
//! socket and over ws://, each against the real binary:
//! - a client that floods requests and never reads its answers is back-pressured (the server
//!   stops reading it once its bounded queues are full) or closed, while another client on
//!   the same server goes on being answered;
//! - a client killed with SIGKILL while its `environment/execute` runs (the `wsp` CLI in a
//!   child process) has its command killed by the server, whole process tree, while another
//!   client's command runs on and finishes.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpStream, UnixStream};
use tokio::process::{Child, Command};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;
use tokio_util::codec::FramedRead;
use wsp_server::codec::{Frame, FrameCodec};

use crate::support::{frame, initialize, request, PATIENCE};

const TOKEN: &str = "isolation-token-0123456789";
/// Bytes a flooder may get read before it is blocked; a server that reads on regardless (an
/// unbounded queue) gets past this.
const FLOOD_LIMIT: u64 = 256 * 1024 * 1024;
/// Round trips of the other client during which the flooder wrote nothing more: blocked.
const BLOCKED_ROUNDS: u32 = 50;

#[derive(Debug, Clone, Copy)]
enum Transport {
    Unix,
    WebSocket,
}

/// `wsp serve --listen unix:... --listen ws://127.0.0.1:0`, once both listen.
struct Listening {
    child: Child,
    socket: PathBuf,
    port: u16,
    token_file: PathBuf,
    dir: tempfile::TempDir,
}

impl Listening {
    async fn start() -> Listening {
        let dir = tempfile::tempdir().expect("a temp dir");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))
            .expect("chmod");
        let (socket, token_file) = (dir.path().join("wsp.sock"), dir.path().join("token"));
        std::fs::write(&token_file, TOKEN).expect("token");
        std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600))
            .expect("chmod");
        let mut child = Command::new(env!("CARGO_BIN_EXE_wsp"))
            .arg("serve")
            .arg("--state-dir")
            .arg(dir.path().join("state"))
            .arg("--listen")
            .arg(format!("unix:{}", socket.display()))
            .args(["--listen", "ws://127.0.0.1:0", "--drain-timeout", "1s"])
            .arg("--token-file")
            .arg(&token_file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("wsp serve starts");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let port = loop {
            let line = tokio::time::timeout(PATIENCE, lines.next_line()).await;
            let line = line.expect("a line in time").expect("stderr");
            let line = line.unwrap_or_else(|| panic!("the server ended before listening"));
            if let Some(port) = line.strip_prefix("listening on ws://127.0.0.1:") {
                break port.parse().expect("a port");
            }
        };
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Listening {
            child,
            socket,
            port,
            token_file,
            dir,
        }
    }

    fn address(&self, transport: Transport) -> String {
        match transport {
            Transport::Unix => format!("unix:{}", self.socket.display()),
            Transport::WebSocket => format!("ws://127.0.0.1:{}", self.port),
        }
    }

    async fn connect(&self, transport: Transport) -> Peer {
        match transport {
            Transport::Unix => {
                let stream = UnixStream::connect(&self.socket).await.expect("connect");
                let (reader, writer) = stream.into_split();
                Peer::Unix(FramedRead::new(reader, FrameCodec::new()), writer)
            }
            Transport::WebSocket => {
                let mut request = format!("ws://127.0.0.1:{}/", self.port)
                    .into_client_request()
                    .expect("request");
                let bearer = format!("Bearer {TOKEN}").parse().expect("header");
                request.headers_mut().insert("authorization", bearer);
                let tcp = TcpStream::connect(("127.0.0.1", self.port)).await;
                let upgraded = tokio_tungstenite::client_async(request, tcp.expect("tcp")).await;
                Peer::WebSocket(Box::new(upgraded.expect("upgraded").0))
            }
        }
    }

    /// The server's resident memory, from `/proc`, for the record.
    fn rss_kib(&self) -> u64 {
        let pid = self.child.id().expect("runs");
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let line = status.lines().find(|l| l.starts_with("VmRSS:"));
        let kib = line.and_then(|l| l.split_whitespace().nth(1)?.parse().ok());
        kib.unwrap_or(0)
    }

    async fn terminate(mut self) {
        let pid = self.child.id().expect("the server runs") as i32;
        let pid = rustix::process::Pid::from_raw(pid).expect("a pid");
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).expect("SIGTERM");
        let status = tokio::time::timeout(PATIENCE, self.child.wait()).await;
        assert_eq!(
            status.expect("exits in time").expect("wait").code(),
            Some(0)
        );
    }
}

/// One client connection.
enum Peer {
    Unix(FramedRead<OwnedReadHalf, FrameCodec>, OwnedWriteHalf),
    WebSocket(Box<WebSocketStream<TcpStream>>),
}

impl Peer {
    async fn send(&mut self, message: &Value) {
        match self {
            Peer::Unix(_, writer) => {
                let bytes = frame(&message.to_string());
                writer.write_all(&bytes).await.expect("write");
            }
            Peer::WebSocket(socket) => {
                let text = Message::text(message.to_string());
                socket.send(text).await.expect("send");
            }
        }
    }

    async fn recv(&mut self) -> Value {
        let text = tokio::time::timeout(PATIENCE, async {
            match self {
                Peer::Unix(reader, _) => match reader.next().await {
                    Some(Ok(Frame::Payload(text))) => text,
                    other => panic!("expected a message, got {other:?}"),
                },
                Peer::WebSocket(socket) => loop {
                    match socket.next().await {
                        Some(Ok(Message::Text(text))) => break text.to_string(),
                        Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                        other => panic!("expected a message, got {other:?}"),
                    }
                },
            }
        });
        serde_json::from_str(&text.await.expect("a message in time")).expect("JSON")
    }

    /// The answer to request `id`, notifications skipped.
    async fn call(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(&request(id, method, params)).await;
        loop {
            let message = self.recv().await;
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    async fn initialize(&mut self) {
        self.send(&initialize(0)).await;
        let answer = self.recv().await;
        assert!(answer["result"].is_object(), "{answer}");
    }

    /// Writes `environment/list` requests (each with a 2 KiB id, which its answer repeats) from
    /// a task, forever, reading nothing. The task ends when a write fails; the count is of the
    /// bytes of whole requests written.
    fn flood(self) -> (tokio::task::JoinHandle<()>, Arc<AtomicU64>) {
        let written = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&written);
        let padding = "x".repeat(2048);
        let next = move |n: u64| request(format!("{n}-{padding}"), "environment/list", json!(null));
        let task = match self {
            Peer::Unix(reader, mut writer) => tokio::spawn(async move {
                let _unread = reader;
                for n in 0.. {
                    let bytes = frame(&next(n).to_string());
                    if writer.write_all(&bytes).await.is_err() {
                        return;
                    }
                    counter.fetch_add(bytes.len() as u64, Ordering::SeqCst);
                }
            }),
            Peer::WebSocket(socket) => tokio::spawn(async move {
                let (mut sink, _unread) = socket.split();
                for n in 0.. {
                    let text = next(n).to_string();
                    let length = text.len() as u64;
                    if sink.send(Message::text(text)).await.is_err() {
                        return;
                    }
                    counter.fetch_add(length, Ordering::SeqCst);
                }
            }),
        };
        (task, written)
    }
}

async fn a_flooder_that_never_reads_does_not_stop_another_client(transport: Transport) {
    let server = Listening::start().await;
    let mut steady = server.connect(transport).await;
    steady.initialize().await;
    let mut flooder = server.connect(transport).await;
    flooder.initialize().await;
    let (flooding, written) = flooder.flood();

    let (mut last, mut unchanged, mut id) = (0, 0, 0);
    while unchanged < BLOCKED_ROUNDS && !flooding.is_finished() {
        id += 1;
        let listed = steady.call(id, "environment/list", json!(null)).await;
        assert_eq!(listed["result"], json!([]), "{listed}");
        let now = written.load(Ordering::SeqCst);
        assert!(
            now < FLOOD_LIMIT,
            "{transport:?}: the server read {now} bytes from a client that reads nothing"
        );
        (last, unchanged) = if now == last {
            (last, unchanged + 1)
        } else {
            (now, 0)
        };
    }
    let outcome = if flooding.is_finished() {
        "closed"
    } else {
        "back-pressured"
    };
    eprintln!(
        "{transport:?}: the flooder was {outcome} after {last} bytes ({id} round trips of the \
         other client); server RSS {} KiB",
        server.rss_kib()
    );

    let rss = server.rss_kib();
    assert!(
        rss <= 64 * 1024,
        "{transport:?}: {rss} KiB of RSS with a client that never reads"
    );
    // The flooder's socket is full, and the other client is served.
    let listed = steady.call(id + 1, "environment/list", json!(null)).await;
    assert_eq!(listed["result"], json!([]), "{listed}");
    flooding.abort();
    let _ = flooding.await;
    let mut after = server.connect(transport).await;
    after.initialize().await;
    let listed = after.call(1, "environment/list", json!(null)).await;
    assert_eq!(listed["result"], json!([]), "{listed}");
    server.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flooder_on_a_unix_socket_does_not_stop_another_client() {
    a_flooder_that_never_reads_does_not_stop_another_client(Transport::Unix).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flooder_on_a_websocket_does_not_stop_another_client() {
    a_flooder_that_never_reads_does_not_stop_another_client(Transport::WebSocket).await;
}

/// A FIFO at `path`, and a task that reads it whole once a writer has closed it.
fn fifo(path: &Path) -> tokio::task::JoinHandle<String> {
    let made = std::process::Command::new("mkfifo").arg(path).status();
    assert!(made.expect("mkfifo runs").success());
    let path = path.to_owned();
    tokio::task::spawn_blocking(move || std::fs::read_to_string(path).expect("the FIFO"))
}

/// What a writer puts in the FIFO `path` (read by `reading`), unless `ended` comes first or
/// nothing comes in time; then the reader is released, and the test fails saying why.
async fn fifo_text(
    path: &Path,
    reading: tokio::task::JoinHandle<String>,
    ended: impl std::future::Future<Output = String>,
) -> String {
    let why = tokio::select! {
        read = reading => return read.expect("the FIFO's reader"),
        why = ended => why,
        _ = tokio::time::sleep(PATIENCE) => "nothing was written in time".to_owned(),
    };
    let _ = std::fs::OpenOptions::new().write(true).open(path);
    panic!("{}: {why}", path.display());
}

async fn a_client_killed_mid_execute_has_its_command_killed_and_no_one_else(transport: Transport) {
    let server = Listening::start().await;
    let scratch = server.dir.path();
    let mut steady = server.connect(transport).await;
    steady.initialize().await;
    let created = steady
        .call(
            1,
            "environment/create",
            json!({"name": "iso", "python_version": "3.12"}),
        )
        .await;
    assert!(created["result"]["id"].is_string(), "{created}");

    // The other client's command: says its pid, then waits to be released.
    let (steady_pid, release) = (scratch.join("steady.pid"), scratch.join("release"));
    let steady_started = fifo(&steady_pid);
    assert!(std::process::Command::new("mkfifo")
        .arg(&release)
        .status()
        .expect("mkfifo")
        .success());
    let script = format!(
        "import os; open({:?}, 'w').write(str(os.getpid())); open({:?}).read(); print('done')",
        steady_pid.display().to_string(),
        release.display().to_string()
    );
    let execute = json!({"id": created["result"]["id"], "argv": ["python", "-c", script]});
    steady
        .send(&request(2, "environment/execute", execute))
        .await;
    let ended = async {
        loop {
            let message = steady.recv().await;
            if message["id"] == json!(2) {
                return format!("the execute ended first: {message}");
            }
        }
    };
    let steady_pid = fifo_text(&steady_pid, steady_started, ended).await;
    let steady_pid: i32 = steady_pid.parse().expect("a pid");

    // The victim: the wsp CLI running a python that started a child, both say their pids.
    let victim_pids = scratch.join("victim.pids");
    let victim_started = fifo(&victim_pids);
    let script = format!(
        "import os, subprocess, time\n\
         child = subprocess.Popen(['sleep', '300'])\n\
         open({:?}, 'w').write(f'{{os.getpid()}} {{child.pid}}')\n\
         time.sleep(300)",
        victim_pids.display().to_string()
    );
    let mut victim = Command::new(env!("CARGO_BIN_EXE_wsp"));
    victim.args(["--connect", &server.address(transport)]);
    if let Transport::WebSocket = transport {
        victim.arg("--token-file").arg(&server.token_file);
    }
    let mut victim = victim
        .args(["exec", "iso", "--no-stdin", "--", "python", "-c", &script])
        .env_remove("WSP_CONNECT")
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the CLI starts");
    let ended = async { format!("the CLI ended first: {:?}", victim.wait().await) };
    let pids = fifo_text(&victim_pids, victim_started, ended).await;
    let pids: Vec<i32> = pids
        .split_whitespace()
        .map(|p| p.parse().expect("a pid"))
        .collect();
    assert_eq!(pids.len(), 2, "{pids:?}");

    victim.start_kill().expect("SIGKILL");
    let status = tokio::time::timeout(PATIENCE, victim.wait()).await;
    let status = status.expect("the CLI dies").expect("wait");
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
    crate::support::assert_gone(pids[0], "the killed client's python").await;
    crate::support::assert_gone(pids[1], "the killed client's python's child").await;

    // The other client's command ran on, and finishes.
    assert!(
        crate::support::is_running(steady_pid),
        "the other client's command was killed"
    );
    let mut releasing = tokio::fs::OpenOptions::new()
        .write(true)
        .open(&release)
        .await
        .expect("open the release FIFO");
    releasing.write_all(b"go").await.expect("release");
    drop(releasing);
    let ran = loop {
        let message = steady.recv().await;
        if message["id"] == json!(2) {
            break message;
        }
    };
    assert_eq!(ran["result"]["exit_code"], json!(0), "{ran}");
    assert_eq!(ran["result"]["stdout"], json!("done\n"), "{ran}");
    let listed = steady.call(3, "environment/list", json!(null)).await;
    assert_eq!(listed["result"][0]["name"], json!("iso"), "{listed}");
    server.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_unix_client_killed_mid_execute_has_its_command_killed_and_no_one_else() {
    a_client_killed_mid_execute_has_its_command_killed_and_no_one_else(Transport::Unix).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_client_killed_mid_execute_has_its_command_killed_and_no_one_else() {
    a_client_killed_mid_execute_has_its_command_killed_and_no_one_else(Transport::WebSocket).await;
}
