//! Request ids through the real binary: every number id is answered with the very text it was
//! sent as, and a `$/cancelRequest` finds a request by an id no `Value` holds exactly.

use std::path::Path;

use crate::support::{error_code, frame, Server};
use serde_json::{json, Value};

/// Number ids a `serde_json::Value` would change (or refuse), each with its exact text.
const ODD_NUMBER_IDS: &[&str] = &[
    "18446744073709551616",
    "123456789012345678901234567890",
    "1E2",
    "-0",
    "1e400",
    "0.1",
    "12345678901234567890.5",
];

async fn send_text(server: &mut Server, payload: &str) {
    server.send_raw(&frame(payload)).await;
}

#[tokio::test]
async fn every_number_id_is_answered_with_its_own_text() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    for id in ODD_NUMBER_IDS {
        send_text(
            &mut server,
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"environment/list"}}"#),
        )
        .await;
        let answer = server.recv_text().await;
        assert_eq!(
            answer,
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":[]}}"#)
        );

        // Errors, from the router and from params validation, echo it too.
        send_text(
            &mut server,
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"no/such"}}"#),
        )
        .await;
        let answer = server.recv_text().await;
        assert!(
            answer.starts_with(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32601"#
            )),
            "{answer}"
        );
        send_text(
            &mut server,
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"environment/get","params":{{}}}}"#),
        )
        .await;
        let answer = server.recv_text().await;
        assert!(
            answer.starts_with(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602"#
            )),
            "{answer}"
        );
    }

    // In a batch, each answer carries its own request's text.
    let batch: Vec<String> = ODD_NUMBER_IDS
        .iter()
        .map(|id| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"environment/list"}}"#))
        .collect();
    send_text(&mut server, &format!("[{}]", batch.join(","))).await;
    let answer = server.recv_text().await;
    for id in ODD_NUMBER_IDS {
        let echoed = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":[]}}"#);
        assert_eq!(answer.matches(&echoed).count(), 1, "{id} in {answer}");
    }

    // Params no `Value` can hold: an invalid request, answered with its id, not a parse error.
    send_text(
        &mut server,
        r#"{"jsonrpc":"2.0","id":1e400,"method":"environment/get","params":{"id":1e400}}"#,
    )
    .await;
    let answer = server.recv_text().await;
    assert!(
        answer.starts_with(r#"{"jsonrpc":"2.0","id":1e400,"error":{"code":-32600"#),
        "{answer}"
    );
    assert_eq!(server.finish().await.0, 0);
}

/// Starts, as request `id` (raw JSON text), a command in `environment` whose background
/// `sleep 300` never ends by itself; returns that sleep's pid once it runs.
async fn start_sleeper_as(server: &mut Server, id: &str, environment: &Value, dir: &Path) -> i32 {
    let (fifo, argv) = crate::support::sleeper(dir);
    let params = json!({"id": environment, "argv": argv});
    let payload = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"environment/execute","params":{params}}}"#
    );
    send_text(server, &payload).await;
    crate::support::read_pid(fifo).await
}

#[tokio::test]
async fn a_cancel_request_naming_a_big_number_id_cancels_that_request() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let created = server
        .call(
            1,
            "environment/create",
            json!({"name": "ids", "python_version": "3.12"}),
        )
        .await;
    let environment = created["result"]["id"].clone();
    let temp = tempfile::tempdir().unwrap();
    let big = "18446744073709551616";
    let pid = start_sleeper_as(&mut server, big, &environment, temp.path()).await;

    // The same digits as a string name another request: nothing is cancelled. The list after
    // it is answered first, so the cancel was read and the execute still runs.
    send_text(
        &mut server,
        &format!(r#"{{"jsonrpc":"2.0","method":"$/cancelRequest","params":{{"id":"{big}"}}}}"#),
    )
    .await;
    let listed = server.call(2, "environment/list", json!(null)).await;
    assert!(listed["result"].is_array(), "{listed}");
    assert!(
        crate::support::is_running(pid),
        "a string id cancelled a number id"
    );

    send_text(
        &mut server,
        &format!(r#"{{"jsonrpc":"2.0","method":"$/cancelRequest","params":{{"id":{big}}}}}"#),
    )
    .await;
    let answer = server.recv_text().await;
    assert!(
        answer.starts_with(&format!(
            r#"{{"jsonrpc":"2.0","id":{big},"error":{{"code":-32800"#
        )),
        "{answer}"
    );
    crate::support::assert_gone(pid, "the cancelled command's child").await;
    let deleted = server
        .call(3, "environment/delete", json!({"id": environment}))
        .await;
    assert_eq!(deleted["result"]["id"], environment, "{deleted}");
}

#[tokio::test]
async fn delete_takes_an_id_of_any_length_get_takes_up_to_128() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let long = "e".repeat(129);
    let deleted = server
        .call(1, "environment/delete", json!({"id": long}))
        .await;
    assert_eq!(error_code(&deleted), -31001, "{deleted}");
    assert_eq!(deleted["error"]["data"], json!({"id": long}));
    let deleted = server
        .call(2, "environment/delete", json!({"id": ""}))
        .await;
    assert_eq!(error_code(&deleted), -31001, "{deleted}");
    assert_eq!(deleted["error"]["data"], json!({"id": ""}));

    let got = server.call(3, "environment/get", json!({"id": long})).await;
    assert_eq!(error_code(&got), -32602, "{got}");
    let got = server
        .call(4, "environment/get", json!({"id": "e".repeat(128)}))
        .await;
    assert_eq!(error_code(&got), -31001, "{got}");

    for params in [
        json!({}),
        json!({"id": 5}),
        json!({"id": null}),
        json!(["x"]),
    ] {
        let deleted = server.call(5, "environment/delete", params.clone()).await;
        assert_eq!(error_code(&deleted), -32602, "{params}: {deleted}");
    }
    assert_eq!(server.finish().await.0, 0);
}
