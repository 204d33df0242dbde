//! `wsp serve --listen unix:PATH` over the real binary: many clients at once on one state
//! directory, each its own session; `environment/changed` to every initialized session,
//! including changes another server on the same state directory makes; the socket's
//! protections; SIGTERM drains, kills what still runs and removes the socket.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use serde_json::{json, Value};

use crate::support::{initialize, request};
use crate::unix_peer::{cli, create, private_dir, spawn_listening, Listening};

#[tokio::test]
async fn two_clients_share_one_store_and_both_hear_of_a_change() {
    let server = Listening::start(&[]).await;
    let mode = std::fs::symlink_metadata(&server.socket)
        .expect("the socket")
        .mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");

    let mut first = server.connect().await;
    let mut second = server.connect().await;
    let mut not_initialized = server.connect().await;
    let answer = first.initialize().await;
    let features = answer["result"]["features"].to_string();
    assert!(features.contains("environment.changed"), "{features}");
    assert_eq!(answer["result"]["transport"], json!("unix"), "{answer}");
    second.initialize().await;

    first.send(&create(1, "shared")).await;
    let (created, _) = first.answer(1).await;
    let id = created["result"]["id"].clone();
    assert!(id.is_string(), "{created}");
    let change = json!({"id": id, "change": "created"});
    assert_eq!(first.changed().await, change);
    assert_eq!(second.changed().await, change);

    // A session that initializes now hears of the next change, not of the one before.
    not_initialized.initialize().await;
    second
        .send(&request(2, "environment/delete", json!({"id": id})))
        .await;
    let (deleted, _) = second.answer(2).await;
    assert_eq!(deleted["result"]["id"], id, "{deleted}");
    let change = json!({"id": id, "change": "deleted"});
    assert_eq!(not_initialized.changed().await, change);
    assert_eq!(first.changed().await, change);

    // `exit` ends one connection only.
    first
        .send(&json!({"jsonrpc": "2.0", "method": "exit"}))
        .await;
    assert!(first.next().await.is_none());
    second
        .send(&request(3, "environment/list", json!(null)))
        .await;
    let (listed, _) = second.answer(3).await;
    assert_eq!(listed["result"], json!([]), "{listed}");

    let (status, socket) = server.terminate().await;
    assert_eq!(status, 0);
    assert!(!socket.exists(), "the socket is removed at exit");
}

#[tokio::test]
async fn a_change_another_server_makes_on_the_state_directory_is_heard() {
    let server = Listening::start(&[]).await;
    let mut client = server.connect().await;
    client.initialize().await;

    let mut other = crate::support::Server::start_in(&server.state_dir, &[]);
    other.initialize().await;
    let created = other
        .call(
            1,
            "environment/create",
            json!({"name": "elsewhere", "python_version": "3.12"}),
        )
        .await;
    let id = created["result"]["id"].clone();
    assert_eq!(
        client.changed().await,
        json!({"id": id, "change": "created"})
    );
    let (status, log) = other.finish().await;
    assert_eq!(status, 0, "{log}");
    server.terminate().await;
}

#[tokio::test]
async fn a_socket_directory_others_may_write_is_refused() {
    let dir = private_dir();
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).expect("mkdir");
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).expect("chmod");
    let started =
        spawn_listening(&dir.path().join("state"), &shared.join("s.sock"), &[], &[]).await;
    let log = started.expect_err("the server refuses to start");
    assert!(log.contains("writable by group or others"), "{log}");
    assert!(!shared.join("s.sock").exists());
}

#[tokio::test]
async fn past_max_connections_a_connection_is_closed_at_once() {
    let server = Listening::start(&["--max-connections", "1"]).await;
    let mut first = server.connect().await;
    first.initialize().await;
    let mut second = server.connect().await;
    assert!(second.next().await.is_none(), "closed at once");
    drop(first);
    // The first session's slot comes back once its session has ended; retry on that event.
    let mut third = loop {
        let mut peer = server.connect().await;
        peer.send(&initialize(0)).await;
        match peer.next().await {
            Some(answer) => {
                assert!(answer["result"].is_object(), "{answer}");
                break peer;
            }
            None => tokio::task::yield_now().await,
        }
    };
    third
        .send(&request(1, "environment/list", json!(null)))
        .await;
    let (listed, _) = third.answer(1).await;
    assert_eq!(listed["result"], json!([]));
    server.terminate().await;
}

#[tokio::test]
async fn sigterm_drains_every_session_and_kills_what_still_runs() {
    let scratch = tempfile::tempdir().expect("scratch");
    let server = Listening::start(&["--drain-timeout", "1s"]).await;
    let mut client = server.connect().await;
    client.initialize().await;
    client.send(&create(1, "running")).await;
    let (created, _) = client.answer(1).await;
    let fifo = scratch.path().join("pid");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo")
        .success());
    let script = format!("sleep 300 & echo $! > '{}'; wait", fifo.display());
    let execute = json!({"id": created["result"]["id"], "argv": ["sh", "-c", script]});
    client
        .send(&request(2, "environment/execute", execute))
        .await;
    let pid: i32 = tokio::task::spawn_blocking(move || std::fs::read_to_string(fifo))
        .await
        .expect("reader")
        .expect("the pid")
        .trim()
        .parse()
        .expect("a pid");

    let (status, socket) = server.terminate().await;
    assert_eq!(status, 0);
    assert!(!socket.exists());
    let (answer, _) = client.answer(2).await;
    assert_eq!(
        answer["error"]["code"],
        json!(-32603),
        "cancelled by the drain: {answer}"
    );
    crate::support::assert_gone(pid, "the execute's background child").await;
}

#[tokio::test]
async fn the_cli_talks_to_a_running_server_with_connect() {
    let server = Listening::start(&[]).await;
    let address = format!("unix:{}", server.socket.display());
    let mut watcher = server.connect().await;
    watcher.initialize().await;

    let (status, out, err) = cli(
        &[
            "--connect",
            &address,
            "create",
            "via-cli",
            "--python",
            "3.12",
        ],
        &[],
    )
    .await;
    assert_eq!(status, 0, "{out}{err}");
    assert!(out.contains("via-cli"), "{out}");
    let change = watcher.changed().await;
    assert_eq!(change["change"], json!("created"), "{change}");

    let (status, out, err) = cli(&["--json", "list"], &[("WSP_CONNECT", &address)]).await;
    assert_eq!(status, 0, "{err}");
    let listed: Value = serde_json::from_str(out.trim()).expect("JSON");
    assert_eq!(listed[0]["id"], change["id"], "{listed}");

    let (status, _, err) = cli(&["--connect", &address, "--state-dir", "/tmp", "list"], &[]).await;
    assert_eq!(status, 2, "{err}");
    assert!(err.contains("--connect"), "{err}");
    server.terminate().await;
}

/// What a client running as uid 65534 sees on the socket: `closed` when the server closes the
/// connection at once, else the first bytes of its answer to `initialize`.
fn as_nobody(socket: &Path) -> String {
    let script = r#"
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
body = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"client_name":"n","client_protocol_version":"0.1.0"}}'
try:
    s.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    data = s.recv(64)
except OSError:
    data = b""
print("closed" if not data else data.decode(errors="replace"))
"#;
    let output = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .args(["/usr/bin/python3", "-c", script])
        .arg(socket)
        .output()
        .expect("setpriv runs");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

#[tokio::test]
async fn a_peer_of_another_user_is_closed_unless_allowed() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: needs root to connect as another user");
        return;
    }
    for (extra, expected) in [
        (&[][..], "closed"),
        (&["--allow-uid", "65534"][..], "Content-Length"),
    ] {
        let server = Listening::start(extra).await;
        // Let uid 65534 reach the socket, so that only the server's own check stands.
        let dir = server.socket.parent().expect("the socket's directory");
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o711)).expect("chmod");
        std::fs::set_permissions(&server.socket, std::fs::Permissions::from_mode(0o666))
            .expect("chmod");
        let socket = server.socket.clone();
        let seen = tokio::task::spawn_blocking(move || as_nobody(&socket))
            .await
            .expect("the client ends");
        assert!(seen.starts_with(expected), "{extra:?}: {seen}");
        server.terminate().await;
    }
}
