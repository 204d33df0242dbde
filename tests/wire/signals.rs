//! `SIGTERM` and `SIGINT` to the server start the drain, as EOF does: the running execute is
//! answered, nothing it started survives, and the server exits 0.

use crate::support::{error_code, start_sleeper, Server};
use rustix::process::{kill_process, Pid, Signal};
use serde_json::json;

async fn signal_drains(signal: Signal) {
    let scratch = tempfile::tempdir().expect("scratch");
    let mut server = Server::start(&["--drain-timeout", "1s"]);
    server.initialize().await;
    let created = server
        .call(
            1,
            "environment/create",
            json!({"name": "signalled", "python_version": "3.12"}),
        )
        .await;
    let env = created["result"]["id"].clone();
    let sleeper = start_sleeper(&mut server, 10, &env, scratch.path()).await;

    let pid = server.child.id().expect("the server runs") as i32;
    kill_process(Pid::from_raw(pid).expect("a pid"), signal).expect("signal the server");
    let answer = server.recv().await;
    assert_eq!(answer["id"], json!(10), "{answer}");
    assert_eq!(
        error_code(&answer),
        -32603,
        "cancelled by the drain: {answer}"
    );
    let (status, log) = server.finish().await;
    assert_eq!(status, 0, "{signal:?}: {log}");
    crate::support::assert_gone(sleeper, "the execute's background child").await;
}

#[tokio::test]
async fn sigterm_drains_and_exits_0() {
    signal_drains(Signal::TERM).await;
}

#[tokio::test]
async fn sigint_drains_and_exits_0() {
    signal_drains(Signal::INT).await;
}
