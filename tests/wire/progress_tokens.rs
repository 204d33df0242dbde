//! `work_done_token` integers of any size over the real binary: accepted, and echoed in every
//! `$/progress` as the very text they were sent as, as request ids are.

use crate::support::{frame, Server};
use serde_json::Value;

/// Sends `params` (JSON text) to `method` as request `id`; returns the texts of the frames
/// before its answer, and the answer.
async fn call_text(
    server: &mut Server,
    id: u32,
    method: &str,
    params: &str,
) -> (Vec<String>, Value) {
    let request = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#);
    server.send_raw(&frame(&request)).await;
    let mut before = Vec::new();
    loop {
        let text = server.recv_text().await;
        // A notification's token may be more than a `Value` can hold: keep its text.
        if text.starts_with(r#"{"jsonrpc":"2.0","method":"#) {
            before.push(text);
            continue;
        }
        let answer: Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(answer["id"], id, "{answer}");
        return (before, answer);
    }
}

#[tokio::test]
async fn integer_tokens_beyond_64_bits_are_echoed_exactly() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let huge = format!("9{}", "8".repeat(399));
    let tokens = [
        "18446744073709551616",
        "-9223372036854775809",
        "123456789012345678901234567890",
        huge.as_str(),
    ];
    for (id, token) in (1..).zip(tokens) {
        let params =
            format!(r#"{{"name":"tok{id}","python_version":"3.12","work_done_token":{token}}}"#);
        let (notifications, answer) =
            call_text(&mut server, id, "environment/create", &params).await;
        assert!(answer.get("result").is_some(), "{token}: {answer}");
        let kinds: Vec<String> = notifications
            .iter()
            .map(|text| {
                let prefix = format!(
                    r#"{{"jsonrpc":"2.0","method":"$/progress","params":{{"token":{token},"value":"#
                );
                let value = text
                    .strip_prefix(&prefix)
                    .and_then(|rest| rest.strip_suffix("}}"))
                    .unwrap_or_else(|| panic!("not progress for {token}: {text}"));
                let value: Value = serde_json::from_str(value).expect("a progress value");
                value["kind"].as_str().unwrap_or("").to_owned()
            })
            .collect();
        assert_eq!(
            kinds.first().map(String::as_str),
            Some("begin"),
            "{kinds:?}"
        );
        assert_eq!(kinds.last().map(String::as_str), Some("end"), "{kinds:?}");
    }
    for (id, token) in (10..).zip(["1.5", "2.0", "1E2"]) {
        let params =
            format!(r#"{{"name":"no{id}","python_version":"3.12","work_done_token":{token}}}"#);
        let (notifications, answer) =
            call_text(&mut server, id, "environment/create", &params).await;
        assert!(notifications.is_empty(), "{notifications:?}");
        assert_eq!(answer["error"]["code"], -32602, "{token}: {answer}");
        assert_eq!(
            answer["error"]["data"]["violations"][0]["field"],
            "work_done_token"
        );
    }
    let (status, _) = server.finish().await;
    assert_eq!(status, 0);
}
