//! `$/cancelRequest` through the real binary: the named request answers -32800 at once, its
//! command's process group is killed, and the server goes on.

use crate::support::{error_code, Server};
use serde_json::json;

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
    let pid = crate::support::start_sleeper(&mut server, "long", &id, temp.path()).await;

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

    crate::support::assert_gone(pid, "the cancelled command's child").await;
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
