//! The client against an in-process server and against real processes speaking scripted frames.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::process::Command;
use wsp_protocol::{ErrorObjectOwned, NoParams};

use super::{describe_status, Client, ClientError, ProcessClient, ServerNotification};
use crate::{Server, ServerBuilder};

fn notifying_server() -> Server {
    ServerBuilder::new()
        .route(
            "test/notify",
            wsp_middleware::handler_fn(|_: NoParams, cx: wsp_middleware::Context| async move {
                if let Some(notifier) = cx.notifier() {
                    notifier.notify("test/note", &json!({"n": 1})).await;
                }
                Ok::<_, ErrorObjectOwned>(json!("done"))
            }),
        )
        .build()
}

fn frame(message: &Value) -> String {
    let body = message.to_string();
    format!("Content-Length: {}\r\n\r\n{body}", body.len())
}

/// A process that writes `output`, then reads its stdin to the end and exits with `status`.
fn scripted(output: &str, status: i32) -> ProcessClient {
    let mut command = Command::new("sh");
    command.args([
        "-c",
        r#"printf '%s' "$1"; cat >/dev/null; exit "$2""#,
        "sh",
        output,
        &status.to_string(),
    ]);
    Client::spawn(command).expect("sh starts")
}

#[tokio::test]
async fn notifications_reach_the_callback_and_the_session_ends_with_status_0() {
    let mut client = Client::connect(notifying_server());
    let init = client.initialize("t").await.expect("initialize");
    assert!(init.outcome.is_ok(), "{init:?}");
    let mut notes = Vec::new();
    let response = client
        .request_with("test/notify", None, |n| notes.push(n))
        .await
        .expect("a response");
    assert_eq!(response.outcome.ok(), Some(json!("done")));
    let expected = ServerNotification {
        method: "test/note".into(),
        params: json!({"n": 1}),
    };
    assert_eq!(notes, [expected]);
    assert_eq!(client.finish().await.expect("the server ends"), 0);
}

#[tokio::test]
async fn responses_are_kept_for_whoever_asks_and_asked_once() {
    let mut client = Client::initialized(notifying_server()).await;
    let first = client.send_request("test/notify", None).await.unwrap();
    let second = client
        .send_request("no/such", Some(json!({})))
        .await
        .unwrap();
    let answer = client.response_to(second, |_| {}).await.unwrap();
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    let answer = client.response_to(first, |_| {}).await.unwrap();
    assert_eq!(answer["result"], "done", "{answer}");
    assert!(matches!(
        client.response_to(first, |_| {}).await,
        Err(ClientError::NotPending(id)) if id == first
    ));
    assert_eq!(client.finish().await.expect("the server ends"), 0);
}

#[tokio::test]
async fn any_transport_serves_with_no_peer_to_wait_for() {
    let (client_side, server_side) = tokio::io::duplex(4096);
    let (server_read, server_write) = tokio::io::split(server_side);
    let serving = tokio::spawn(notifying_server().serve(server_read, server_write));
    let (read, write) = tokio::io::split(client_side);
    let mut client = Client::new(read, write, ());
    client.initialize("t").await.expect("initialized");
    let id = client
        .send_request("test/notify", None)
        .await
        .expect("sent");
    let answer = client.response_keeping(id).await.expect("answered");
    assert_eq!(answer["result"], "done");
    assert_eq!(client.take_notifications().len(), 1);
    client.finish().await.expect("nothing to wait for");
    assert_eq!(serving.await.expect("the server task"), 0);
}

#[tokio::test]
async fn finish_closes_the_process_input_and_returns_its_exit_status() {
    let client = scripted("", 3);
    let status = client.finish().await.expect("sh exits");
    assert_eq!(describe_status(status), "exit status 3");
}

#[tokio::test]
async fn a_process_that_ignores_eof_is_killed_after_the_grace() {
    let mut command = Command::new("sh");
    command.args(["-c", "exec sleep 600"]);
    let client = Client::spawn(command)
        .expect("sh starts")
        .with_exit_grace(Duration::from_millis(100));
    let status = client.finish().await.expect("the kill is reaped");
    assert_eq!(describe_status(status), "killed by signal 9");
}

#[tokio::test]
async fn answers_to_other_ids_are_skipped_and_notifications_come_in_order() {
    let output = [
        frame(&json!({"jsonrpc": "2.0", "method": "a", "params": [1]})),
        frame(&json!({"jsonrpc": "2.0", "id": 7, "result": "not ours"})),
        frame(&json!({"jsonrpc": "2.0", "method": "b"})),
        frame(&json!({"jsonrpc": "2.0", "id": 1, "result": "ours"})),
    ]
    .concat();
    let mut client = scripted(&output, 0);
    let mut methods = Vec::new();
    let response = client
        .request_with("anything", None, |n| methods.push(n.method))
        .await
        .expect("the scripted response");
    assert_eq!(response.outcome.ok(), Some(json!("ours")));
    assert_eq!(methods, ["a", "b"]);
    assert!(client.finish().await.expect("sh exits").success());
}

#[tokio::test]
async fn a_server_that_quits_is_reported_with_its_status() {
    let mut client = Client::spawn(Command::new("false")).expect("false starts");
    match client.request("anything", None).await {
        Err(ClientError::Closed { ended }) => assert_eq!(ended, "exit status 1"),
        other => panic!("expected Closed, got {other:?}"),
    }
}

#[tokio::test]
async fn garbage_and_id_less_errors_are_errors() {
    let mut garbage = scripted("Bogus: header\r\n\r\n", 0);
    assert!(matches!(
        garbage.request("anything", None).await,
        Err(ClientError::Undecodable(_))
    ));
    let rejection = json!({"jsonrpc": "2.0", "id": null,
        "error": {"code": -32700, "message": "parse error"}});
    let mut rejected = scripted(&frame(&rejection), 0);
    match rejected.request("anything", None).await {
        Err(ClientError::Rejected { code, .. }) => assert_eq!(code, -32700),
        other => panic!("expected Rejected, got {other:?}"),
    }
    let mut not_json = scripted("Content-Length: 3\r\n\r\n{x}", 0);
    assert!(matches!(
        not_json.request("anything", None).await,
        Err(ClientError::NotJson(_))
    ));
}

#[tokio::test]
async fn a_missing_program_is_a_spawn_error_naming_it() {
    match Client::spawn(Command::new("/nonexistent/wsp-server")) {
        Err(ClientError::Spawn { program, source }) => {
            assert_eq!(program, "/nonexistent/wsp-server");
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        Err(other) => panic!("expected Spawn, got {other:?}"),
        Ok(_) => panic!("a missing program started"),
    }
}

wsp_protocol::method! {
    /// `test/shout`: a non-empty text, answered in capitals.
    Shout = "test/shout", ShoutParams { text: String = string(1, None) } => Shouted { text: String }
}

wsp_protocol::method! {
    /// `test/shout` as a client that expects another result shape sees it.
    ShoutCounted = "test/shout", CountedParams { text: String = string(1, None) } => Counted { count: u64 }
}

fn shouting_server() -> Server {
    async fn shout(params: ShoutParams, _: crate::Context) -> Result<Shouted, ErrorObjectOwned> {
        let text = params.text.to_uppercase();
        Ok(Shouted { text })
    }
    ServerBuilder::new()
        .method::<Shout, _>(crate::handler_fn(shout))
        .build()
}

#[tokio::test]
async fn a_typed_call_answers_its_typed_result() {
    let mut client = Client::initialized(shouting_server()).await;
    let params = ShoutParams { text: "hi".into() };
    let shouted = client.call::<Shout>(&params).await.expect("a result");
    assert_eq!(shouted, Shouted { text: "HI".into() });
    let listed = client
        .call::<wsp_protocol::method::Initialize>(&wsp_protocol::InitializeParams {
            client_name: "again".into(),
            client_protocol_version: "0.1.0".into(),
        })
        .await;
    assert!(
        matches!(listed, Err(ClientError::Rpc(ref e)) if e.code() == -32600),
        "{listed:?}"
    );
}

#[tokio::test]
async fn a_typed_call_the_server_refuses_is_an_rpc_error_with_its_code() {
    let mut client = Client::initialized(shouting_server()).await;
    let invalid = ShoutParams {
        text: String::new(),
    };
    match client.call::<Shout>(&invalid).await {
        Err(ClientError::Rpc(error)) => {
            assert_eq!(error.code(), -32602);
            let data = error.data().map(|d| d.get().to_owned()).unwrap_or_default();
            assert!(data.contains("non_empty"), "{data}");
        }
        other => panic!("expected -32602, got {other:?}"),
    }
}

#[tokio::test]
async fn a_result_of_another_shape_is_a_wrong_shape_error_naming_the_method() {
    let mut client = Client::initialized(shouting_server()).await;
    let params = CountedParams { text: "hi".into() };
    match client.call::<ShoutCounted>(&params).await {
        Err(error @ ClientError::WrongShape { .. }) => {
            let text = error.to_string();
            assert!(
                text.contains("test/shout") && text.contains("result"),
                "{text}"
            );
        }
        other => panic!("expected a wrong shape, got {other:?}"),
    }
}
