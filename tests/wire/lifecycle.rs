//! Every edge of the lifecycle state machine, against the real binary.

use crate::support::{error_code, initialize, notification, request, Server};
use serde_json::json;

#[tokio::test]
async fn uninitialized_rejects_other_methods_with_32002_and_exit_is_1() {
    let mut server = Server::start(&[]);
    let response = server.call(1, "environment/list", json!(null)).await;
    assert_eq!(error_code(&response), -32002);
    let response = server.call(2, "shutdown", json!(null)).await;
    assert_eq!(error_code(&response), -32002);
    let response = server.call(3, "no/such/method", json!(null)).await;
    assert_eq!(
        error_code(&response),
        -32002,
        "the gate comes before method lookup"
    );
    server.send(&notification("exit")).await;
    let (status, _) = server.finish().await;
    assert_eq!(status, 1);
}

#[tokio::test]
async fn invalid_initialize_params_stay_uninitialized() {
    let mut server = Server::start(&[]);
    let response = server
        .call(1, "initialize", json!({"client_name": ""}))
        .await;
    assert_eq!(error_code(&response), -32602);
    let violations = response["error"]["data"]["violations"]
        .as_array()
        .expect("violations");
    let fields: Vec<&str> = violations
        .iter()
        .filter_map(|v| v["field"].as_str())
        .collect();
    assert!(
        fields.contains(&"client_name") && fields.contains(&"client_protocol_version"),
        "{response}"
    );
    let response = server.call(2, "environment/list", json!({})).await;
    assert_eq!(error_code(&response), -32002, "still uninitialized");
    let response = server
        .call(
            3,
            "initialize",
            json!({"client_name": "x", "client_protocol_version": "0.1.0"}),
        )
        .await;
    assert!(response["result"]["methods"].is_array(), "{response}");
}

#[tokio::test]
async fn initialize_reports_capabilities_and_a_second_one_is_32600() {
    let mut server = Server::start(&[]);
    let first = server.initialize().await;
    let capabilities = &first["result"];
    assert_eq!(capabilities["protocol_version"], "0.1.0");
    let methods: Vec<&str> = capabilities["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        [
            "environment/create",
            "environment/delete",
            "environment/execute",
            "environment/gc",
            "environment/get",
            "environment/install",
            "environment/list",
            "environment/lock",
            "environment/uninstall",
            "initialize",
            "interpreter/list",
            "shutdown"
        ]
    );
    assert_eq!(capabilities["server_info"]["name"], "wsp");
    assert_eq!(capabilities["platform_family"], "unix");
    assert_eq!(capabilities["platform_os"], std::env::consts::OS);
    assert_eq!(
        capabilities["wsp_home"],
        server.state_dir.display().to_string()
    );
    assert_eq!(capabilities["session_durability"], "durable");
    // What this kernel can enforce, as the server's own probe found it.
    match wsp_exec::sandbox_availability() {
        Ok(()) => {
            assert_eq!(capabilities["sandbox_availability"], "available");
            assert!(capabilities.get("sandbox_unavailable_reason").is_none());
        }
        Err(reason) => {
            assert_eq!(capabilities["sandbox_availability"], "unavailable");
            assert_eq!(capabilities["sandbox_unavailable_reason"], reason);
        }
    }
    assert_eq!(
        capabilities["schema"]["fingerprint"].as_str().map(str::len),
        Some(64)
    );
    assert_eq!(capabilities["backend"], "venv");

    let second = server
        .call(
            5,
            "initialize",
            json!({"client_name": "again", "client_protocol_version": "9"}),
        )
        .await;
    assert_eq!(error_code(&second), -32600);
    let list = server.call(6, "environment/list", json!([])).await;
    assert_eq!(list["result"], json!([]));
}

#[tokio::test]
async fn fingerprint_is_stable_across_servers() {
    let mut a = Server::start(&[]);
    let mut b = Server::start(&[]);
    let fa = a.initialize().await["result"]["schema"]["fingerprint"].clone();
    let fb = b.initialize().await["result"]["schema"]["fingerprint"].clone();
    assert_eq!(fa, fb);
}

#[tokio::test]
async fn shutdown_then_everything_but_exit_is_32600_and_exit_is_0() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let response = server.call(1, "shutdown", json!(null)).await;
    assert_eq!(response["result"], json!(null));
    for (id, method) in [
        (2, "environment/list"),
        (3, "initialize"),
        (4, "shutdown"),
        (5, "nope"),
    ] {
        let response = server.call(id, method, json!({})).await;
        assert_eq!(
            error_code(&response),
            -32600,
            "{method} after shutdown: {response}"
        );
    }
    server.send(&notification("unknown/notification")).await;
    server.send(&notification("exit")).await;
    let (status, _) = server.finish().await;
    assert_eq!(status, 0);
}

#[tokio::test]
async fn shutdown_with_bad_params_is_32602_and_does_not_shut_down() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let response = server.call(1, "shutdown", json!([1])).await;
    assert_eq!(error_code(&response), -32602);
    let response = server.call(2, "environment/list", json!(null)).await;
    assert_eq!(response["result"], json!([]));
    server.send(&notification("exit")).await;
    assert_eq!(server.finish().await.0, 1);
}

#[tokio::test]
async fn exit_while_initialized_is_1() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    server.send(&notification("exit")).await;
    assert_eq!(server.finish().await.0, 1);
}

#[tokio::test]
async fn eof_exits_0_in_every_state() {
    let server = Server::start(&[]);
    assert_eq!(server.finish().await.0, 0);
    let mut server = Server::start(&[]);
    server.initialize().await;
    assert_eq!(server.finish().await.0, 0);
    let mut server = Server::start(&[]);
    server.initialize().await;
    server.call(1, "shutdown", json!(null)).await;
    assert_eq!(server.finish().await.0, 0);
}

#[tokio::test]
async fn pipelined_requests_before_shutdown_and_exit_are_all_answered() {
    let mut server = Server::start(&[]);
    let mut bytes = Vec::new();
    bytes.extend(crate::support::frame(&initialize(1).to_string()));
    for id in 2..12 {
        bytes.extend(crate::support::frame(
            &request(id, "environment/list", json!(null)).to_string(),
        ));
    }
    bytes.extend(crate::support::frame(
        &request(12, "shutdown", json!(null)).to_string(),
    ));
    bytes.extend(crate::support::frame(
        &request(13, "environment/list", json!(null)).to_string(),
    ));
    bytes.extend(crate::support::frame(&notification("exit").to_string()));
    bytes.extend(crate::support::frame(
        &request(14, "environment/list", json!(null)).to_string(),
    ));
    server.send_raw(&bytes).await;
    let mut answered = std::collections::BTreeMap::new();
    for _ in 0..13 {
        let response = server.recv().await;
        answered.insert(response["id"].as_i64().unwrap(), response);
    }
    assert_eq!(
        answered.keys().copied().collect::<Vec<_>>(),
        (1..=13).collect::<Vec<_>>()
    );
    for id in 2..12 {
        assert_eq!(
            answered[&id]["result"],
            json!([]),
            "request {id} was read while initialized"
        );
    }
    assert_eq!(answered[&12]["result"], json!(null));
    assert_eq!(error_code(&answered[&13]), -32600, "read after shutdown");
    let (status, _) = server.finish().await;
    assert_eq!(
        status, 0,
        "exit after a successful shutdown; request 14 was never read"
    );
}

#[tokio::test]
async fn pipelined_requests_before_exit_without_shutdown_exit_1() {
    let mut server = Server::start(&[]);
    let mut bytes = Vec::new();
    bytes.extend(crate::support::frame(&initialize(1).to_string()));
    bytes.extend(crate::support::frame(
        &request(2, "environment/list", json!(null)).to_string(),
    ));
    bytes.extend(crate::support::frame(&notification("exit").to_string()));
    server.send_raw(&bytes).await;
    let mut ids = vec![
        server.recv().await["id"].as_i64().unwrap(),
        server.recv().await["id"].as_i64().unwrap(),
    ];
    ids.sort();
    assert_eq!(ids, [1, 2]);
    assert_eq!(server.finish().await.0, 1);
}
