//! JSON-RPC handling against the real binary: ids, batches, error codes and their order, and
//! the quirks real clients have.

use crate::support::{error_code, frame, initialize, notification, request, Server};
use serde_json::{json, Value};

#[tokio::test]
async fn string_ids_with_a_content_type_header_as_python_lsp_jsonrpc_sends() {
    let mut server = Server::start(&[]);
    let payload = json!({"jsonrpc": "2.0", "id": "a1b2-c3", "method": "initialize",
        "params": {"client_name": "pylsp-style", "client_protocol_version": "0.1.0"}})
    .to_string();
    let bytes = format!(
        "Content-Length: {}\r\nContent-Type: application/vscode-jsonrpc; charset=utf8\r\n\r\n{payload}",
        payload.len()
    );
    server.send_raw(bytes.as_bytes()).await;
    let response = server.recv().await;
    assert_eq!(response["id"], "a1b2-c3");
    assert_eq!(response["jsonrpc"], "2.0");
    assert!(response["result"]["methods"].is_array());
}

#[tokio::test]
async fn params_null_as_pygls_sends_it() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let response = server.call(7, "environment/list", Value::Null).await;
    assert_eq!(response["result"], json!([]));
    let response = server.call(8, "shutdown", Value::Null).await;
    assert_eq!(response["result"], Value::Null);
}

#[tokio::test]
async fn large_and_negative_ids_are_echoed_exactly() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let ids = [
        "-1",
        "-9223372036854775808",
        "18446744073709551615",
        "9007199254740993",
        "0",
    ];
    for id in ids {
        let payload = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"environment/list"}}"#);
        server.send_raw(&frame(&payload)).await;
        let crate::support::Server { stdout, .. } = &mut server;
        let text = match futures::StreamExt::next(stdout).await {
            Some(Ok(wsp_server::codec::Frame::Payload(text))) => text,
            other => panic!("{other:?}"),
        };
        assert!(
            text.contains(&format!(r#""id":{id}"#)),
            "id {id} not echoed exactly: {text}"
        );
    }
    let response = server.call(-5, "environment/list", json!({})).await;
    assert_eq!(response["id"], json!(-5));
}

#[tokio::test]
async fn not_json_is_32700_with_null_id_and_the_server_goes_on() {
    let mut server = Server::start(&[]);
    for payload in ["{not json", "", "\"unterminated"] {
        server.send_raw(&frame(payload)).await;
        let response = server.recv().await;
        assert_eq!(error_code(&response), -32700, "{payload:?}");
        assert_eq!(response["id"], Value::Null);
    }
    server.initialize().await;
}

#[tokio::test]
async fn invalid_messages_are_32600_with_the_id_when_readable() {
    let mut server = Server::start(&[]);
    let cases = [
        (
            json!({"jsonrpc": "1.0", "id": 1, "method": "initialize"}),
            json!(1),
        ),
        (json!({"id": 2, "method": "initialize"}), json!(2)),
        (json!({"jsonrpc": "2.0", "id": 3, "method": 5}), json!(3)),
        (
            json!({"jsonrpc": "2.0", "id": "s", "params": {}}),
            json!("s"),
        ),
        (
            json!({"jsonrpc": "2.0", "id": {"x": 1}, "method": "initialize"}),
            Value::Null,
        ),
        (
            json!({"jsonrpc": "2.0", "id": [1], "method": "initialize"}),
            Value::Null,
        ),
        (json!({"jsonrpc": "2.0", "method": 7}), Value::Null),
        (json!(42), Value::Null),
        (json!("hello"), Value::Null),
    ];
    for (message, id) in cases {
        server.send(&message).await;
        let response = server.recv().await;
        assert_eq!(error_code(&response), -32600, "{message}: {response}");
        assert_eq!(response["id"], id, "{message}");
    }
    server.initialize().await;
}

#[tokio::test]
async fn order_of_checks_lookup_before_params() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let response = server
        .call(1, "environment/nope", json!("not an object"))
        .await;
    assert_eq!(error_code(&response), -32601);
    assert_eq!(response["error"]["data"]["method"], "environment/nope");
    let response = server
        .call(2, "environment/get", json!("not an object"))
        .await;
    assert_eq!(error_code(&response), -32602);
    let response = server.call(3, "environment/list", json!([1, 2])).await;
    assert_eq!(error_code(&response), -32602);
    let response = server
        .call(4, "environment/list", json!({"unknown": "ignored"}))
        .await;
    assert_eq!(response["result"], json!([]));
}

#[tokio::test]
async fn every_violation_is_listed() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let response = server
        .call(
            1,
            "environment/create",
            json!({"name": "x".repeat(65), "python_version": "three"}),
        )
        .await;
    assert_eq!(error_code(&response), -32602);
    let violations = response["error"]["data"]["violations"].as_array().unwrap();
    let rules: Vec<(String, String)> = violations
        .iter()
        .map(|v| {
            (
                v["field"].as_str().unwrap().into(),
                v["rule"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(
        rules.contains(&("name".into(), "max_length".into())),
        "{rules:?}"
    );
    assert!(
        rules.contains(&("python_version".into(), "format".into())),
        "{rules:?}"
    );
    assert!(violations.iter().all(|v| v["message"].is_string()));
    // 64 characters that are 4 bytes each are within the limit: lengths count characters.
    let response = server
        .call(
            2,
            "environment/create",
            json!({"name": "😀".repeat(64), "python_version": "3.x"}),
        )
        .await;
    let violations = response["error"]["data"]["violations"].as_array().unwrap();
    assert!(
        violations.iter().all(|v| v["field"] != "name"),
        "{response}"
    );
    let response = server
        .call(
            3,
            "environment/execute",
            json!({"id": "", "argv": [1, "ok", null], "cwd": 5, "env": {"A=B": "x", "C": 1}}),
        )
        .await;
    let fields: Vec<&str> = response["error"]["data"]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["field"].as_str().unwrap())
        .collect();
    for field in ["id", "argv[0]", "argv[2]", "cwd", "env.A=B", "env.C"] {
        assert!(fields.contains(&field), "{field} missing from {fields:?}");
    }
}

#[tokio::test]
async fn batches_follow_json_rpc() {
    let mut server = Server::start(&[]);
    server.send_raw(&frame("[]")).await;
    let response = server.recv().await;
    assert_eq!(error_code(&response), -32600);
    assert_eq!(response["id"], Value::Null);

    // Lifecycle applies element by element: initialize first makes the next one succeed.
    let batch = json!([
        request(1, "environment/list", json!(null)),
        initialize(2),
        request(3, "environment/list", json!(null)),
        notification("some/notification"),
        {"jsonrpc": "2.0", "id": 4},
        5,
    ]);
    server.send(&batch).await;
    let responses = server.recv().await;
    let responses = responses.as_array().expect("one array for the batch");
    assert_eq!(responses.len(), 5, "{responses:?}");
    assert_eq!(error_code(&responses[0]), -32002);
    assert!(responses[1]["result"]["methods"].is_array());
    assert_eq!(responses[2]["result"], json!([]));
    assert_eq!(error_code(&responses[3]), -32600);
    assert_eq!(responses[3]["id"], 4);
    assert_eq!(error_code(&responses[4]), -32600);

    // A batch of notifications gets nothing: the next response is for the next request.
    server
        .send(&json!([notification("a"), notification("b")]))
        .await;
    let response = server.call(9, "environment/list", json!(null)).await;
    assert_eq!(response["result"], json!([]));
}

#[tokio::test]
async fn unknown_notifications_are_ignored_and_logged_at_debug() {
    let mut server = Server::start(&[]);
    server.send(&notification("$/cancelRequest")).await;
    server
        .send(&json!({"jsonrpc": "2.0", "method": "weird", "params": [1, 2]}))
        .await;
    server.initialize().await;
    let (status, log) = server.finish().await;
    assert_eq!(status, 0);
    assert!(log.contains("notification ignored"), "{log}");
}
