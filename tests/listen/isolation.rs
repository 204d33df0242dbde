//! One `wsp serve --listen` process, many clients, over a Unix socket and over ws://, each
//! against the real binary: a client that floods requests and never reads its answers pauses
//! its own connection only. The server stops reading it (its socket fills, so the flooder's
//! writes block) and keeps its memory bounded (peak RSS at most 64 MiB), while another client
//! on the same server goes on being answered, and a new one is served.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio::process::Child;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use crate::listen_websocket;
use crate::support::{initialize, memory_mib, request, PATIENCE};
use crate::unix_peer::{Listening, Peer};

/// The server's peak resident memory may not pass this while a client floods it.
const MAX_RSS_MIB: f64 = 64.0;
/// Bytes a flooder may get written before its writes block; a server that reads on regardless
/// (an unbounded queue) lets it get past this.
const FLOOD_LIMIT: u64 = 256 * 1024 * 1024;
/// Round trips of the other client during which the flooder wrote nothing more: blocked.
const BLOCKED_ROUNDS: u32 = 1000;
/// A flooder counts as blocked only once it wrote this much: more than one request, so its
/// task ran and the server read from it.
const FLOOD_MIN: u64 = 256 * 1024;
/// The length of each flooding request's id, which its answer repeats: 4096 answers owed (the
/// runtime's count bound) hold 64 MiB of ids.
const ID_BYTES: usize = 16384;

#[derive(Debug, Clone, Copy)]
pub(crate) enum Transport {
    Unix,
    WebSocket,
}

/// A `wsp serve --listen` on one transport.
pub(crate) enum Served {
    Unix(Listening),
    WebSocket {
        child: Child,
        port: u16,
        token: String,
        _dir: tempfile::TempDir,
    },
}

impl Served {
    pub(crate) async fn start(transport: Transport, extra: &[&str]) -> Served {
        match transport {
            Transport::Unix => Served::Unix(Listening::start(extra).await),
            Transport::WebSocket => {
                let dir = tempfile::tempdir().expect("a temp dir");
                let state = dir.path().join("state");
                let (child, port, _) = listen_websocket::start(&state, extra)
                    .await
                    .unwrap_or_else(|log| panic!("the server did not listen: {log}"));
                let token = std::fs::read_to_string(state.join("server.token")).expect("token");
                Served::WebSocket {
                    child,
                    port,
                    token: token.trim().to_owned(),
                    _dir: dir,
                }
            }
        }
    }

    pub(crate) fn pid(&self) -> u32 {
        let child = match self {
            Served::Unix(listening) => &listening.child,
            Served::WebSocket { child, .. } => child,
        };
        child.id().expect("the server runs")
    }

    pub(crate) async fn connect(&self) -> Client {
        match self {
            Served::Unix(listening) => Client::Unix(listening.connect().await),
            Served::WebSocket { port, token, .. } => {
                let socket = listen_websocket::connect(*port, Some(token)).await;
                Client::WebSocket(Box::new(socket.expect("upgraded")))
            }
        }
    }

    /// SIGTERM; the server exits 0.
    pub(crate) async fn terminate(self) {
        match self {
            Served::Unix(listening) => assert_eq!(listening.terminate().await.0, 0),
            Served::WebSocket { child, .. } => listen_websocket::terminate(child).await,
        }
    }
}

/// One client connection, of either transport.
pub(crate) enum Client {
    Unix(Peer),
    WebSocket(Box<WebSocketStream<TcpStream>>),
}

impl Client {
    pub(crate) async fn send(&mut self, message: Value) {
        match self {
            Client::Unix(peer) => peer.send(&message).await,
            Client::WebSocket(socket) => listen_websocket::send(socket, message).await,
        }
    }

    /// The next message, or `None` once the server closed the connection.
    pub(crate) async fn next(&mut self) -> Option<Value> {
        match self {
            Client::Unix(peer) => peer.next().await,
            Client::WebSocket(socket) => loop {
                let message = tokio::time::timeout(PATIENCE, socket.next()).await;
                match message.expect("a message in time") {
                    Some(Ok(Message::Text(text))) => {
                        return Some(serde_json::from_str(&text).expect("JSON"))
                    }
                    Some(Ok(Message::Close(_)) | Err(_)) | None => return None,
                    Some(Ok(_)) => continue,
                }
            },
        }
    }

    /// The next answer to a request, the notifications before it skipped.
    pub(crate) async fn next_answer(&mut self) -> Value {
        loop {
            let message = self.next().await.expect("the connection is open");
            if message.get("id").is_some() {
                return message;
            }
        }
    }

    /// The answer to request `id`, the notifications before it skipped.
    pub(crate) async fn answer(&mut self, id: i64) -> Value {
        loop {
            let message = self.next().await.expect("the connection is open");
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    pub(crate) async fn call(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(request(id, method, params)).await;
        self.answer(id).await
    }

    pub(crate) async fn initialize(&mut self) {
        self.send(initialize(0)).await;
        let answer = self.answer(0).await;
        assert!(answer["result"].is_object(), "{answer}");
    }

    /// Writes `environment/list` requests, each with an id of [`ID_BYTES`], from a task,
    /// forever, reading nothing; counts the bytes of the requests written. The task ends
    /// only if a write fails.
    fn flood(self) -> (tokio::task::JoinHandle<()>, Arc<AtomicU64>) {
        let written = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&written);
        let padding = "x".repeat(ID_BYTES);
        let next = move |n: u64| request(format!("{n}-{padding}"), "environment/list", json!(null));
        let task = match self {
            Client::Unix(mut peer) => tokio::spawn(async move {
                for n in 0.. {
                    let message = next(n);
                    let length = message.to_string().len() as u64;
                    if peer.try_send(&message).await.is_err() {
                        return;
                    }
                    counter.fetch_add(length, Ordering::SeqCst);
                }
            }),
            Client::WebSocket(socket) => tokio::spawn(async move {
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

async fn a_flooder_that_never_reads_pauses_only_itself(transport: Transport) {
    let server = Served::start(transport, &[]).await;
    let mut steady = server.connect().await;
    steady.initialize().await;
    let mut flooder = server.connect().await;
    flooder.initialize().await;
    let (flooding, written) = flooder.flood();

    let (mut last, mut unchanged, mut id) = (0, 0, 0);
    while unchanged < BLOCKED_ROUNDS {
        assert!(
            !flooding.is_finished(),
            "{transport:?}: the flooder's connection was closed"
        );
        id += 1;
        let listed = steady.call(id, "environment/list", json!(null)).await;
        assert_eq!(listed["result"], json!([]), "{listed}");
        let now = written.load(Ordering::SeqCst);
        assert!(
            now < FLOOD_LIMIT,
            "{transport:?}: the server took {now} bytes from a client that reads nothing"
        );
        (last, unchanged) = if now == last && now >= FLOOD_MIN {
            (last, unchanged + 1)
        } else {
            (now, 0)
        };
    }
    let pid = server.pid();
    let (rss, peak) = (memory_mib(pid, "VmRSS"), memory_mib(pid, "VmHWM"));
    eprintln!(
        "{transport:?}: the flooder blocked after {:.1} MiB written, {id} round trips of the \
         other client; server VmRSS {rss:.1} MiB, VmHWM {peak:.1} MiB",
        last as f64 / (1024.0 * 1024.0)
    );
    assert!(peak <= MAX_RSS_MIB, "{transport:?}: peak RSS {peak:.1} MiB");

    // The flooder's connection is blocked, and the others are served, new ones too.
    let listed = steady.call(id + 1, "environment/list", json!(null)).await;
    assert_eq!(listed["result"], json!([]), "{listed}");
    let mut newcomer = server.connect().await;
    newcomer.initialize().await;
    let listed = newcomer.call(1, "environment/list", json!(null)).await;
    assert_eq!(listed["result"], json!([]), "{listed}");
    assert!(!flooding.is_finished(), "the flooder is paused, not closed");
    flooding.abort();
    let _ = flooding.await;
    server.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_unix_client_that_floods_and_never_reads_pauses_only_itself() {
    a_flooder_that_never_reads_pauses_only_itself(Transport::Unix).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_client_that_floods_and_never_reads_pauses_only_itself() {
    a_flooder_that_never_reads_pauses_only_itself(Transport::WebSocket).await;
}
