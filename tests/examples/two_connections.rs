//! `examples/two_connections`: one server value serves stdio and a Unix socket at once, each
//! connection with its own lifecycle, over the same environments.

use std::path::PathBuf;
use std::process::Stdio;

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::codec::{FramedRead, FramedWrite};
use wsp_server::codec::{Frame, FrameCodec};

struct Peer<R, W> {
    to_server: FramedWrite<W, FrameCodec>,
    from_server: FramedRead<R, FrameCodec>,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> Peer<R, W> {
    fn new(reader: R, writer: W) -> Self {
        Peer {
            to_server: FramedWrite::new(writer, FrameCodec::new()),
            from_server: FramedRead::new(reader, FrameCodec::new()),
        }
    }

    async fn send(&mut self, message: Value) {
        self.to_server
            .send(message.to_string())
            .await
            .expect("send");
    }

    async fn call(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        match self.from_server.next().await {
            Some(Ok(Frame::Payload(text))) => serde_json::from_str(&text).expect("JSON"),
            other => panic!("no answer to {method}: {other:?}"),
        }
    }

    async fn initialize(&mut self) -> Value {
        let params = json!({"client_name": "t", "client_protocol_version": "0.1.0"});
        let answer = self.call(1, "initialize", params).await;
        assert!(answer["result"]["methods"].is_array(), "{answer}");
        answer
    }
}

fn example() -> PathBuf {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_wsp"));
    let path = bin
        .parent()
        .expect("target dir")
        .join("examples/two_connections");
    assert!(
        path.is_file(),
        "{} is built by `cargo test`",
        path.display()
    );
    path
}

/// The example serving a state directory in `temp` and `socket`, and its stdio as a peer.
fn start(
    temp: &tempfile::TempDir,
    socket: &std::path::Path,
) -> (
    tokio::process::Child,
    Peer<tokio::process::ChildStdout, tokio::process::ChildStdin>,
) {
    let mut child = tokio::process::Command::new(example())
        .arg(temp.path().join("state"))
        .arg(socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the example starts");
    let stdio = Peer::new(
        child.stdout.take().expect("stdout"),
        child.stdin.take().expect("stdin"),
    );
    (child, stdio)
}

#[tokio::test]
async fn one_server_serves_stdio_and_a_unix_socket_each_with_its_own_lifecycle() {
    let temp = tempfile::tempdir().expect("temp dir");
    let socket = temp.path().join("wsp.sock");
    let (mut child, mut stdio) = start(&temp, &socket);
    // The socket is bound before stdio is read: once stdio answers, it takes connections.
    let on_stdio = stdio.initialize().await;
    let stream = tokio::net::UnixStream::connect(&socket)
        .await
        .expect("connect");
    let (read, write) = stream.into_split();
    let mut unix = Peer::new(read, write);
    let mut on_socket = unix.initialize().await;
    let mut on_stdio = on_stdio;
    // The same server, the same facts, but for how each client is connected.
    assert_eq!(on_stdio["result"]["transport"], "stdio");
    assert_eq!(on_socket["result"]["transport"], "unix");
    for answer in [&mut on_stdio, &mut on_socket] {
        answer["result"]
            .as_object_mut()
            .expect("a result")
            .remove("transport");
    }
    assert_eq!(on_stdio["result"], on_socket["result"]);
    assert_eq!(on_socket["result"]["backend"], "venv");

    let created = unix
        .call(
            2,
            "environment/create",
            json!({"name": "shared", "python_version": "3.12"}),
        )
        .await;
    let id = created["result"]["id"]
        .as_str()
        .expect("created")
        .to_owned();
    let listed = stdio.call(2, "environment/list", json!({})).await;
    let ids: Vec<&str> = listed["result"]
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|env| env["id"].as_str())
        .collect();
    assert_eq!(ids, [id.as_str()], "{listed}");

    // shutdown on the socket ends only that session's requests.
    assert_eq!(
        unix.call(3, "shutdown", Value::Null).await["result"],
        Value::Null
    );
    let refused = unix.call(4, "environment/list", json!({})).await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let still = stdio.call(3, "environment/get", json!({"id": id})).await;
    assert_eq!(still["result"]["id"], id.as_str(), "{still}");

    // And shutdown on stdio leaves a new socket connection unaffected.
    assert_eq!(
        stdio.call(4, "shutdown", Value::Null).await["result"],
        Value::Null
    );
    let stream = tokio::net::UnixStream::connect(&socket)
        .await
        .expect("connect again");
    let (read, write) = stream.into_split();
    let mut fresh = Peer::new(read, write);
    fresh.initialize().await;
    let listed = fresh.call(2, "environment/list", json!({})).await;
    assert_eq!(listed["result"][0]["id"], id.as_str(), "{listed}");

    stdio
        .send(json!({"jsonrpc": "2.0", "method": "exit"}))
        .await;
    let status = child.wait().await.expect("the example ends");
    assert_eq!(status.code(), Some(0));
    assert!(!socket.exists(), "the socket file is removed");
}

/// `wsp --connect unix:SOCKET ARGS...`: status and stderr.
async fn connected_cli(socket: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_wsp"))
        .arg("--connect")
        .arg(format!("unix:{}", socket.display()))
        .args(args)
        .env_remove("WSP_CONNECT")
        .env_remove("WSP_TOKEN")
        .stdin(Stdio::null())
        .output()
        .await
        .expect("wsp runs");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (output.status.code(), stderr)
}

#[tokio::test]
async fn the_cli_names_the_missing_feature_of_a_server_without_interpreter_list() {
    let temp = tempfile::tempdir().expect("temp dir");
    let socket = temp.path().join("wsp.sock");
    let (_child, mut stdio) = start(&temp, &socket);
    let features = stdio.initialize().await["result"]["features"].clone();
    assert!(
        !features.to_string().contains("interpreter.list"),
        "{features}"
    );

    for args in [&["python", "list"][..], &["create", "no-python-given"]] {
        let (status, stderr) = connected_cli(&socket, args).await;
        assert_eq!(status, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("`interpreter.list`"), "{args:?}: {stderr}");
    }
    let (status, stderr) = connected_cli(&socket, &["create", "given", "--python", "3.12"]).await;
    assert_eq!(status, Some(0), "{stderr}");
    let listed = stdio.call(2, "environment/list", json!({})).await;
    let names: Vec<&str> = listed["result"]
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|env| env["name"].as_str())
        .collect();
    assert_eq!(names, ["given"], "{listed}");
}
