//! `$/cancelRequest` through the real binary: the named request answers -32800 at once, its
//! command's process group is killed, and the server goes on.

mod support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::{error_code, request, Server};

#[tokio::test]
async fn cancelling_a_running_execute_kills_its_processes_and_answers_32800() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let created = server
        .call(
            1,
            "environment/create",
            json!({"name": "cancel", "python_version": "3.12"}),
        )
        .await;
    let id = created["result"]["id"].clone();
    let temp = tempfile::tempdir().unwrap();
    let fifo = temp.path().join("pid");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let script = format!("sleep 300 & echo $! > '{}'; wait", fifo.display());
    server
        .send(&request(
            "long",
            "environment/execute",
            json!({"id": id, "argv": ["sh", "-c", script]}),
        ))
        .await;
    let pid: i32 = tokio::task::spawn_blocking(move || std::fs::read_to_string(fifo))
        .await
        .unwrap()
        .unwrap()
        .trim()
        .parse()
        .unwrap();

    // Unknown ids and malformed params are ignored.
    server
        .send(&json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "other"}}))
        .await;
    server
        .send(&json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": [1]}))
        .await;
    server
        .send(&json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "long"}}))
        .await;
    let response = server.recv().await;
    assert_eq!(response["id"], "long");
    assert_eq!(error_code(&response), -32800, "{response}");

    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z")) {
        assert!(
            Instant::now() < deadline,
            "the cancelled command's child {pid} still runs"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let after = server.call(2, "environment/get", json!({"id": id})).await;
    assert_eq!(
        after["result"]["id"], id,
        "the server goes on, and delete-waits is released"
    );
    let deleted = server
        .call(3, "environment/delete", json!({"id": id}))
        .await;
    assert_eq!(deleted["result"]["id"], id);
    assert_eq!(server.finish().await.0, 0);
}
