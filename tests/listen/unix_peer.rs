//! A `wsp serve --listen unix:PATH` of the real binary for the listen tests, a client
//! connection to it, and the CLI run against it.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use futures::StreamExt;
use rustix::process::{kill_process, Pid, Signal};
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::UnixStream;
use tokio::process::{Child, Command};
use tokio_util::codec::FramedRead;
use wsp_server::codec::{Frame, FrameCodec};

use crate::serve_listening::serve_listening;
use crate::support::{frame, initialize, request, PATIENCE};

/// A `wsp serve --listen` process; its socket is bound once this exists.
pub(crate) struct Listening {
    pub(crate) child: Child,
    pub(crate) socket: PathBuf,
    pub(crate) state_dir: PathBuf,
    _dir: tempfile::TempDir,
}

impl Listening {
    pub(crate) async fn start(extra: &[&str]) -> Listening {
        Listening::start_with_env(extra, &[]).await
    }

    /// [`Listening::start`] with `env` set on top of the test's environment.
    pub(crate) async fn start_with_env(extra: &[&str], env: &[(&str, &str)]) -> Listening {
        let dir = private_dir();
        let state_dir = dir.path().join("state");
        let socket = dir.path().join("wsp.sock");
        let child = spawn_listening(&state_dir, &socket, extra, env)
            .await
            .unwrap_or_else(|log| panic!("the server did not listen: {log}"));
        Listening {
            child,
            socket,
            state_dir,
            _dir: dir,
        }
    }

    pub(crate) async fn connect(&self) -> Peer {
        Peer::connect(&self.socket).await
    }

    pub(crate) async fn terminate(mut self) -> (i32, PathBuf) {
        let pid = self.child.id().expect("the server runs") as i32;
        kill_process(Pid::from_raw(pid).expect("a pid"), Signal::TERM).expect("SIGTERM");
        let status = tokio::time::timeout(PATIENCE, self.child.wait())
            .await
            .expect("the server exits in time")
            .expect("wait");
        (status.code().unwrap_or(-1), self.socket.clone())
    }
}

pub(crate) fn private_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temp dir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
    dir
}

/// Starts `wsp serve --listen unix:SOCKET` (with `env` set) and waits for its `listening on`
/// line; `Err` is its stderr when it exits first.
pub(crate) async fn spawn_listening(
    state_dir: &Path,
    socket: &Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Result<Child, String> {
    let address = format!("unix:{}", socket.display());
    let listening =
        serve_listening(state_dir, &address, &address, extra, env, None, PATIENCE).await?;
    assert_eq!(listening.rest, "", "{}", listening.log);
    Ok(listening.child)
}

/// One client connection.
pub(crate) struct Peer {
    reader: FramedRead<OwnedReadHalf, FrameCodec>,
    writer: OwnedWriteHalf,
}

impl Peer {
    pub(crate) async fn connect(socket: &Path) -> Peer {
        let stream = UnixStream::connect(socket).await.expect("connect");
        let (reader, writer) = stream.into_split();
        Peer {
            reader: FramedRead::new(reader, FrameCodec::new()),
            writer,
        }
    }

    pub(crate) async fn send(&mut self, message: &Value) {
        self.try_send(message).await.expect("write");
    }

    pub(crate) async fn try_send(&mut self, message: &Value) -> std::io::Result<()> {
        self.writer.write_all(&frame(&message.to_string())).await
    }

    /// The next message, or `None` once the server closed the connection.
    pub(crate) async fn next(&mut self) -> Option<Value> {
        let next = tokio::time::timeout(PATIENCE, self.reader.next())
            .await
            .expect("a message in time");
        match next {
            Some(Ok(Frame::Payload(text))) => Some(serde_json::from_str(&text).expect("JSON")),
            None | Some(Err(_)) => None,
            Some(other) => panic!("unexpected frame {other:?}"),
        }
    }

    pub(crate) async fn recv(&mut self) -> Value {
        self.next().await.expect("the connection is open")
    }

    pub(crate) async fn initialize(&mut self) -> Value {
        self.send(&initialize(0)).await;
        let answer = self.recv().await;
        assert!(answer["result"].is_object(), "{answer}");
        answer
    }

    /// The answer to request `id`, with the notifications that came before it.
    pub(crate) async fn answer(&mut self, id: i64) -> (Value, Vec<Value>) {
        let mut notifications = Vec::new();
        loop {
            let message = self.recv().await;
            if message["id"] == json!(id) {
                return (message, notifications);
            }
            notifications.push(message);
        }
    }

    /// Sends request `id` and returns its answer, skipping the notifications before it.
    pub(crate) async fn call(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(&request(id, method, params)).await;
        self.answer(id).await.0
    }

    /// The next `environment/changed` notification's params, skipping other messages.
    pub(crate) async fn changed(&mut self) -> Value {
        loop {
            let message = self.recv().await;
            if message["method"] == json!("environment/changed") {
                return message["params"].clone();
            }
        }
    }
}

pub(crate) fn create(id: i64, name: &str) -> Value {
    request(
        id,
        "environment/create",
        json!({"name": name, "python_version": "3.12"}),
    )
}

/// `wsp ARGS...` as the CLI, with only `env` of the WSP_ variables: status, stdout, stderr.
pub(crate) async fn cli(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_wsp"))
        .args(args)
        .env_remove("WSP_TOKEN")
        .env_remove("WSP_CONNECT")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .await
        .expect("wsp runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
