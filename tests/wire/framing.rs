//! Every framing recovery case, against the real binary: the bad bytes are logged to stderr,
//! nothing but frames reaches stdout, and the next good frame is answered.

use crate::support::{frame, request, Server};
use serde_json::json;

async fn assert_still_serving(server: &mut Server, id: i64) {
    let response = server.call(id, "environment/list", json!(null)).await;
    assert_eq!(response["result"], json!([]), "{response}");
}

#[tokio::test]
async fn malformed_header_blocks_are_skipped_and_logged() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let bad_blocks: [&[u8]; 5] = [
        b"Content-Type: text/plain\r\n\r\n",
        b"Content-Length: ten\r\n\r\n",
        b"Content-Length: -5\r\n\r\n",
        b"this line has no colon\r\n\r\n",
        b"Content-Length: 0x10\r\n\r\n",
    ];
    for (i, block) in bad_blocks.iter().enumerate() {
        server.send_raw(block).await;
        assert_still_serving(&mut server, i as i64 + 1).await;
    }
    let (status, log) = server.finish().await;
    assert_eq!(status, 0);
    assert_eq!(
        log.matches("decode error").count(),
        bad_blocks.len(),
        "{log}"
    );
}

#[tokio::test]
async fn a_malformed_block_is_skipped_whole_and_the_next_frame_is_answered() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    // One write: the block and the frame after it arrive together.
    let mut bytes = b"bogus\r\nContent-Length: 5\r\n\r\n".to_vec();
    bytes.extend(frame(
        &request(1, "environment/list", json!(null)).to_string(),
    ));
    server.send_raw(&bytes).await;
    let response = server.recv().await;
    assert_eq!(response["id"], json!(1), "{response}");
    assert_eq!(response["result"], json!([]), "{response}");
    assert_still_serving(&mut server, 2).await;
    let (status, log) = server.finish().await;
    assert_eq!(status, 0);
    assert_eq!(log.matches("decode error").count(), 1, "{log}");
    assert!(log.contains("bogus"), "{log}");
}

#[tokio::test]
async fn header_names_are_case_insensitive_and_other_headers_ignored() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let payload = request(1, "environment/list", json!(null)).to_string();
    let bytes = format!(
        "X-Whatever: 1\r\ncOnTeNt-LeNgTh:{}\r\n\r\n{payload}",
        payload.len()
    );
    server.send_raw(bytes.as_bytes()).await;
    assert_eq!(server.recv().await["result"], json!([]));
}

#[tokio::test]
async fn a_header_block_past_8_kib_is_discarded() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let mut bytes = b"X-Padding: ".to_vec();
    bytes.extend(std::iter::repeat_n(b'a', 20 * 1024));
    bytes.extend_from_slice(b"\r\n\r\n");
    server.send_raw(&bytes).await;
    assert_still_serving(&mut server, 1).await;
    let (_, log) = server.finish().await;
    assert!(log.contains("decode error"), "{log}");
}

#[tokio::test]
async fn an_oversized_frame_is_skipped_as_it_streams_in() {
    let mut server = Server::start(&["--max-frame-bytes", "1024"]);
    server.initialize().await;
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":99,"method":"environment/list","pad":"{}"}}"#,
        "x".repeat(4096)
    );
    server.send_raw(&frame(&big)).await;
    assert_still_serving(&mut server, 1).await;
    let (_, log) = server.finish().await;
    assert!(log.contains("decode error"), "{log}");
    assert!(
        !log.contains("id=99"),
        "the oversized request must not be handled"
    );
}

#[tokio::test]
async fn a_non_utf8_payload_is_skipped() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let mut bytes = b"Content-Length: 4\r\n\r\n".to_vec();
    bytes.extend_from_slice(&[0xff, 0xfe, 0x80, 0x7b]);
    server.send_raw(&bytes).await;
    assert_still_serving(&mut server, 1).await;
}

#[tokio::test]
async fn eof_inside_a_frame_is_logged_and_exits_0() {
    for partial in [
        &b"Content-Len"[..],
        b"Content-Length: 50\r\n\r\n{\"jsonrpc\"",
    ] {
        let mut server = Server::start(&[]);
        server.initialize().await;
        server.send_raw(partial).await;
        let (status, log) = server.finish().await;
        assert_eq!(status, 0);
        assert!(log.contains("decode error"), "{log}");
    }
}

#[tokio::test]
async fn many_frames_in_one_write_and_a_frame_byte_by_byte() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let mut bytes = Vec::new();
    for id in 1..=50 {
        bytes.extend(frame(
            &request(id, "environment/list", json!(null)).to_string(),
        ));
    }
    server.send_raw(&bytes).await;
    let mut ids: Vec<i64> = Vec::new();
    for _ in 1..=50 {
        ids.push(server.recv().await["id"].as_i64().unwrap());
    }
    ids.sort();
    assert_eq!(ids, (1..=50).collect::<Vec<_>>());
    for byte in frame(&request(51, "environment/list", json!(null)).to_string()) {
        server.send_raw(&[byte]).await;
    }
    assert_eq!(server.recv().await["id"], 51);
}

/// The server buffers input and output together (it writes its answers while more input is
/// buffered only in whole pages), so an answer must still go out at once when what is left in
/// its buffer is the start of a frame whose rest the client sends only later.
#[tokio::test]
async fn an_answer_is_not_held_back_behind_a_partial_frame() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let first = frame(&request(1, "environment/list", json!(null)).to_string());
    let second = frame(&request(2, "environment/list", json!(null)).to_string());
    let (head, tail) = second.split_at(second.len() / 2);
    server.send_raw(&[first.as_slice(), head].concat()).await;
    let response = server.recv().await;
    assert_eq!(response["id"], json!(1), "{response}");
    server.send_raw(tail).await;
    let response = server.recv().await;
    assert_eq!(response["id"], json!(2), "{response}");
}
