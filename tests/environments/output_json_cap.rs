//! `max_output_bytes` bounds each stream's size in the answer, JSON-encoded: a NUL takes six
//! bytes there (`\u0000`), a newline two. So the answer to a command that prints 16 MiB of NULs
//! on each stream is about 32 MiB, not 192 MiB, and the server's peak memory stays small.

use crate::support::{request, Server, PATIENCE};
use futures::StreamExt;
use serde_json::{json, Value};
use wsp_server::codec::Frame;

const MIB: usize = 1 << 20;

async fn create(server: &mut Server) -> Value {
    server.initialize().await;
    let created = server
        .call(
            1,
            "environment/create",
            json!({"name": "cap", "python_version": "3.12"}),
        )
        .await;
    created["result"]["id"].clone()
}

/// The size of `text` inside a JSON string, quotes not counted.
fn encoded_len(text: &Value) -> usize {
    serde_json::to_string(text).expect("serializable").len() - 2
}

#[tokio::test]
async fn the_limit_counts_each_stream_as_it_is_encoded_in_the_answer() {
    let mut server = Server::start(&[]);
    let env = create(&mut server).await;
    let nuls = "head -c 60000 /dev/zero; head -c 60000 /dev/zero >&2";
    let answer = server
        .call(
            2,
            "environment/execute",
            json!({"id": env, "argv": ["sh", "-c", nuls], "max_output_bytes": 6000}),
        )
        .await;
    let result = &answer["result"];
    for stream in ["stdout", "stderr"] {
        assert_eq!(result[stream], json!("\0".repeat(1000)), "{stream}");
        assert_eq!(encoded_len(&result[stream]), 6000);
        assert_eq!(result[format!("{stream}_truncated")], json!(true));
    }

    // `a` and `\n` take 3 bytes encoded, so `b` is past a limit of 3.
    let newline = server
        .call(
            3,
            "environment/execute",
            json!({"id": env, "argv": ["printf", "a\\nb"], "max_output_bytes": 3}),
        )
        .await;
    assert_eq!(newline["result"]["stdout"], json!("a\n"), "{newline}");
    assert_eq!(newline["result"]["stdout_truncated"], json!(true));

    // Exactly at the limit is not truncated; a character that does not fit is dropped whole.
    let text = "printf 'a\"€'";
    for (limit, stdout, truncated) in [(6, "a\"€", false), (5, "a\"", true)] {
        let answer = server
            .call(
                4,
                "environment/execute",
                json!({"id": env, "argv": ["sh", "-c", text], "max_output_bytes": limit}),
            )
            .await;
        assert_eq!(answer["result"]["stdout"], json!(stdout), "{answer}");
        assert_eq!(answer["result"]["stdout_truncated"], json!(truncated));
    }
    assert_eq!(server.finish().await.0, 0);
}

#[tokio::test]
async fn four_commands_printing_16_mib_of_nuls_on_each_stream_keep_the_server_small() {
    let mut server = Server::start(&[]);
    let env = create(&mut server).await;
    let nuls = "head -c 16777216 /dev/zero; head -c 16777216 /dev/zero >&2";
    for id in 10..14 {
        let params = json!({"id": env, "argv": ["sh", "-c", nuls]});
        server
            .send(&request(id, "environment/execute", params))
            .await;
    }
    let mut answered = Vec::new();
    for _ in 0..4 {
        let next = tokio::time::timeout(PATIENCE, server.stdout.next())
            .await
            .expect("an answer in time");
        let Some(Ok(Frame::Payload(text))) = next else {
            panic!("expected an answer, got {next:?}");
        };
        // The default limit, 16 MiB, on each stream's encoding: the frame is at most 32 MiB
        // and a little (it was 192 MiB when the limit counted the NULs themselves).
        assert!(text.len() <= 32 * MIB + 4096, "{} bytes", text.len());
        let answer: Value = serde_json::from_str(&text).expect("JSON");
        let result = &answer["result"];
        for stream in ["stdout", "stderr"] {
            let encoded = encoded_len(&result[stream]);
            assert!(
                encoded <= 16 * MIB && encoded > 16 * MIB - 6,
                "{stream}: {encoded}"
            );
            assert_eq!(result[format!("{stream}_truncated")], json!(true));
        }
        answered.push(answer["id"].as_i64().expect("an id"));
    }
    answered.sort();
    assert_eq!(answered, [10, 11, 12, 13]);
    let peak = server.peak_rss_mib();
    println!("server peak RSS: {peak:.1} MiB");
    // One answer as the limit counted it before was 192 MiB, and the server held it twice.
    assert!(peak < 256.0, "the server's peak RSS was {peak:.1} MiB");
    assert_eq!(server.finish().await.0, 0);
}
