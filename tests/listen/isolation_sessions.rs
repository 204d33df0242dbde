//! Each connection of one `wsp serve --listen` is a session of its own, over a Unix socket and
//! over ws://, against the real binary: one connection's `shutdown` and `exit`, and its
//! exhausted concurrency limit, leave another connection's alone; closing a connection kills
//! its running executes (the command's process ends) while another connection's command
//! runs on and is answered.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use crate::isolation::{Client, Served, Transport};
use crate::listen_crash::reporting;
use crate::support::{is_running, read_pid, Watched};

/// How long the command of a closed connection may take to die: the drain (1 s) and then some.
const DYING: Duration = Duration::from_secs(10);

/// A command that reports its pid to `<dir>/<name>.pid`, then waits for a line on
/// `<dir>/<name>.go` (a FIFO) and prints `released`; the FIFO to release it with.
fn held(dir: &Path, name: &str) -> (Value, PathBuf, PathBuf) {
    let (pid, go) = (
        dir.join(format!("{name}.pid")),
        dir.join(format!("{name}.go")),
    );
    let made = std::process::Command::new("mkfifo").arg(&go).status();
    assert!(made.expect("mkfifo runs").success());
    let then = format!("read line < '{}'; echo released", go.display());
    (reporting(&pid, &then), pid, go)
}

/// Writes a line to the FIFO `go`; opening it waits until the command reads it (an event).
async fn release(go: PathBuf) {
    let written = tokio::task::spawn_blocking(move || std::fs::write(go, "go\n"));
    written.await.expect("the writer").expect("the release");
}

async fn create(client: &mut Client, id: i64, name: &str) -> Value {
    let params = json!({"name": name, "python_version": "3.12"});
    let created = client.call(id, "environment/create", params).await;
    assert!(created["result"]["id"].is_string(), "{created}");
    created["result"]["id"].clone()
}

async fn one_sessions_shutdown_and_full_limit_leave_another_alone(transport: Transport) {
    let scratch = tempfile::tempdir().expect("scratch");
    let server = Served::start(transport, &["--concurrency-limit", "1"]).await;
    let mut busy = server.connect().await;
    let mut other = server.connect().await;
    busy.initialize().await;
    other.initialize().await;
    let environment = create(&mut busy, 1, "sessions").await;

    // `busy`'s one handler slot is taken by a command that waits; its next request waits too.
    let (argv, pid, go) = held(scratch.path(), "busy");
    let execute = json!({"id": environment, "argv": argv});
    busy.send(crate::support::request(2, "environment/execute", execute))
        .await;
    read_pid(pid).await;
    busy.send(crate::support::request(3, "environment/list", json!(null)))
        .await;

    // Meanwhile the other connection has its own slot, and its own lifecycle.
    let listed = other.call(1, "environment/list", json!(null)).await;
    assert_eq!(listed["result"][0]["id"], environment, "{listed}");
    let shut = other.call(2, "shutdown", json!(null)).await;
    assert_eq!(shut["result"], json!(null), "{shut}");
    let refused = other.call(3, "environment/list", json!(null)).await;
    assert_eq!(refused["error"]["code"], json!(-32600), "{refused}");
    other
        .send(json!({"jsonrpc": "2.0", "method": "exit"}))
        .await;
    assert!(other.next().await.is_none(), "exit ends that connection");

    // `busy` was neither shut down nor freed by any of it: its list comes after its execute.
    release(go).await;
    let first = busy.next_answer().await;
    assert_eq!(first["id"], json!(2), "{first}");
    assert_eq!(first["result"]["stdout"], json!("released\n"), "{first}");
    let second = busy.next_answer().await;
    assert_eq!(second["id"], json!(3), "{second}");
    assert_eq!(second["result"][0]["id"], environment, "{second}");
    let listed = busy.call(4, "environment/list", json!(null)).await;
    assert!(listed["result"].is_array(), "{listed}");
    server.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_unix_socket_one_sessions_shutdown_and_full_limit_leave_another_alone() {
    one_sessions_shutdown_and_full_limit_leave_another_alone(Transport::Unix).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_websocket_one_sessions_shutdown_and_full_limit_leave_another_alone() {
    one_sessions_shutdown_and_full_limit_leave_another_alone(Transport::WebSocket).await;
}

async fn closing_a_connection_kills_its_executes_only(transport: Transport) {
    let scratch = tempfile::tempdir().expect("scratch");
    let server = Served::start(transport, &["--drain-timeout", "1s"]).await;
    let mut closing = server.connect().await;
    let mut staying = server.connect().await;
    closing.initialize().await;
    staying.initialize().await;
    let environment = create(&mut staying, 1, "closing").await;

    let (argv, pid, _) = held(scratch.path(), "closing");
    let execute = json!({"id": environment, "argv": argv});
    closing
        .send(crate::support::request(1, "environment/execute", execute))
        .await;
    let doomed = Watched::new(read_pid(pid).await);
    let (argv, pid, go) = held(scratch.path(), "staying");
    let execute = json!({"id": environment, "argv": argv});
    staying
        .send(crate::support::request(2, "environment/execute", execute))
        .await;
    let kept = read_pid(pid).await;

    drop(closing);
    doomed
        .assert_ends(DYING, "the command of the closed connection")
        .await;
    assert!(
        is_running(kept),
        "the other connection's command was killed"
    );
    release(go).await;
    let ran = staying.answer(2).await;
    assert_eq!(ran["result"]["exit_code"], json!(0), "{ran}");
    assert_eq!(ran["result"]["stdout"], json!("released\n"), "{ran}");
    let listed = staying.call(3, "environment/list", json!(null)).await;
    assert_eq!(listed["result"][0]["id"], environment, "{listed}");
    server.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_unix_connection_kills_its_executes_only() {
    closing_a_connection_kills_its_executes_only(Transport::Unix).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_websocket_connection_kills_its_executes_only() {
    closing_a_connection_kills_its_executes_only(Transport::WebSocket).await;
}
