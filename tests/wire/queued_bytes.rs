//! The requests waiting for a handler slot are bounded by bytes (`--max-queued-bytes`, 64 MiB
//! by default): with every slot busy, the server reads large requests only until the waiting
//! ones hold that much, then stops reading until one of them starts. Nothing is lost: once the
//! slot frees, every request is read and answered.

use std::path::Path;

use crate::support::{request, Server};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const MIB: usize = 1 << 20;

/// What the server logs (at debug) when the waiting requests fill the queue.
const QUEUE_FULL: &str = "requests waiting for a handler slot fill the queue";

/// One `environment/execute` frame whose `stdin` is `stdin_bytes` of `x`, fed to `cat`.
fn large_execute(id: i64, env: &Value, stdin_bytes: usize) -> Vec<u8> {
    let head = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"environment/execute","params":{{"id":{env},"argv":["sh","-c","cat >/dev/null"],"stdin":""#
    );
    let tail = r#""}}"#;
    let length = head.len() + stdin_bytes + tail.len();
    let mut frame = format!("Content-Length: {length}\r\n\r\n{head}").into_bytes();
    frame.resize(frame.len() + stdin_bytes, b'x');
    frame.extend_from_slice(tail.as_bytes());
    frame
}

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
}

#[tokio::test]
async fn with_the_slot_busy_large_requests_are_read_only_up_to_the_queue_bound() {
    const REQUESTS: i64 = 24;
    const STDIN: usize = 16 * MIB;
    let scratch = tempfile::tempdir().expect("a temp dir");
    let mut server = Server::start(&["--concurrency-limit", "1"]);
    let mut log = BufReader::new(server.child.stderr.take().expect("stderr")).lines();
    server.initialize().await;
    let created = server
        .call(
            1,
            "environment/create",
            json!({"name": "queue", "python_version": "3.12"}),
        )
        .await;
    let env = created["result"]["id"].clone();

    // The one slot: a command that waits until this test writes a line into a FIFO.
    let fifo = scratch.path().join("release");
    mkfifo(&fifo);
    let wait = format!("read line < '{}'", fifo.display());
    let busy = json!({"id": env, "argv": ["sh", "-c", wait]});
    server.send(&request(2, "environment/execute", busy)).await;

    // 24 requests of 16 MiB each behind it (384 MiB), and a small one after them.
    let mut stdin = server.stdin.take().expect("stdin");
    let writer = tokio::spawn({
        let env = env.clone();
        async move {
            for id in 100..100 + REQUESTS {
                let frame = large_execute(id, &env, STDIN);
                stdin.write_all(&frame).await.expect("write a request");
            }
            let list = request(3, "environment/list", json!({}));
            stdin
                .write_all(&crate::support::frame(&list.to_string()))
                .await
                .expect("write the small request");
            stdin.flush().await.expect("flush");
            stdin
        }
    });
    // Either the server reads all of it (it did before the bound), or it says its queue is
    // full and stops reading.
    let mut writer = writer;
    let full_logged = async {
        while let Some(line) = log.next_line().await.expect("read the log") {
            if line.contains(QUEUE_FULL) {
                return true;
            }
        }
        false
    };
    let stdin = tokio::select! {
        written = &mut writer => Some(written.expect("the writer ends")),
        full = full_logged => {
            assert!(full, "the log ended");
            None
        }
    };
    // The rest of the log is read (and dropped) from now on, so that the server never blocks
    // writing it: a server stuck on a full stderr would read no more requests, and the writer
    // would wait for it forever.
    tokio::spawn(async move { while let Ok(Some(_)) = log.next_line().await {} });
    let peak_while_busy = server.peak_rss_mib();

    // Free the slot: everything is read and answered.
    tokio::task::spawn_blocking(move || std::fs::write(fifo, "go\n"))
        .await
        .expect("the release task ends")
        .expect("write into the FIFO");
    let stdin = match stdin {
        Some(stdin) => stdin,
        None => writer.await.expect("the writer ends"),
    };
    server.stdin = Some(stdin);
    let mut answered = Vec::new();
    for _ in 0..REQUESTS + 2 {
        let answer = server.recv().await;
        let id = answer["id"].as_i64().expect("an id");
        if id == 3 {
            assert!(answer["result"].is_array(), "{answer}");
        } else {
            assert_eq!(answer["result"]["exit_code"], json!(0), "{id}: {answer}");
        }
        answered.push(id);
    }
    answered.sort();
    let mut expected: Vec<i64> = vec![2, 3];
    expected.extend(100..100 + REQUESTS);
    expected.sort();
    assert_eq!(answered, expected);
    let peak = server.peak_rss_mib();
    println!(
        "server peak RSS: {peak_while_busy:.1} MiB while the slot was busy, {peak:.1} MiB in all"
    );
    // Holding all 384 MiB of waiting requests took it past 400 MiB.
    assert!(peak < 256.0, "the server's peak RSS was {peak:.1} MiB");
    server.close();
    let status = server.child.wait().await.expect("the server exits");
    assert_eq!(status.code(), Some(0));
}
