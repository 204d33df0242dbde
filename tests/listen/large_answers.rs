//! Large answers owed to a client that reads none of them: the server holds a bounded number
//! of bytes for that connection, on either transport, not a number of answers (an execute's
//! answer may be tens of MiB), and the connection's other answers arrive whole once it reads.

use serde_json::json;

use crate::isolation::{Served, Transport};
use crate::support::{memory_mib, request};

/// The stdout of each execute, and so the size of its answer.
const ANSWER_BYTES: usize = 4 * 1024 * 1024;
/// Executes sent before the client reads anything.
const EXECUTES: i64 = 12;
/// Round trips of another client during which no further execute started: the server waits.
const STABLE_ROUNDS: u32 = 2000;
/// The server's resident memory while it waits for the client may not pass this. When every
/// request read ran and kept its answer, forty of them held 193 MiB here.
const MAX_RSS_MIB: f64 = 64.0;

async fn large_answers_to_a_client_that_does_not_read(transport: Transport) {
    let markers = tempfile::tempdir().unwrap();
    // Two slots: the session itself holds at most two finished answers; the rest is the
    // transport's.
    let server = Served::start(transport, &["--concurrency-limit", "2"]).await;
    let mut steady = server.connect().await;
    steady.initialize().await;
    let mut owed = server.connect().await;
    owed.initialize().await;
    let params = json!({"name": "large", "python_version": "3.12"});
    let created = owed.call(1, "environment/create", params).await;
    let id = created["result"]["id"].clone();
    assert!(id.is_string(), "{created}");
    let script = format!(
        "touch {}/$0; head -c {ANSWER_BYTES} /dev/zero | tr '\\0' a",
        markers.path().display()
    );
    for n in 0..EXECUTES {
        let argv = json!(["sh", "-c", script, n.to_string()]);
        let params = json!({"id": id, "argv": argv});
        owed.send(request(100 + n, "environment/execute", params))
            .await;
    }

    let started = || std::fs::read_dir(markers.path()).unwrap().count();
    let (mut last, mut unchanged, mut round) = (0, 0, 0);
    while unchanged < STABLE_ROUNDS {
        round += 1;
        let listed = steady.call(round, "environment/list", json!(null)).await;
        assert!(listed["result"].is_array(), "{listed}");
        let now = started();
        (last, unchanged) = if now == last && now >= 3 {
            (last, unchanged + 1)
        } else {
            (now, 0)
        };
    }
    let pid = server.pid();
    let waiting = memory_mib(pid, "VmRSS");

    for _ in 0..EXECUTES {
        let answer = owed.next_answer().await;
        let stdout = answer["result"]["stdout"].as_str().map(str::len);
        assert_eq!(stdout, Some(ANSWER_BYTES), "{:?}", answer.get("error"));
    }
    let peak = memory_mib(pid, "VmHWM");
    eprintln!(
        "{transport:?}: {last} of {EXECUTES} executes ran before the server waited for the \
         client; VmRSS {waiting:.1} MiB while it waited, VmHWM {peak:.1} MiB"
    );
    assert!(
        last < EXECUTES as usize,
        "{transport:?}: every execute ran for a client that read nothing"
    );
    assert!(
        waiting <= MAX_RSS_MIB,
        "{transport:?}: {waiting:.1} MiB resident while the answers waited"
    );
    server.terminate().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_answers_to_a_websocket_client_that_does_not_read_are_bounded_by_bytes() {
    large_answers_to_a_client_that_does_not_read(Transport::WebSocket).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_answers_to_a_unix_client_that_does_not_read_are_bounded_by_bytes() {
    large_answers_to_a_client_that_does_not_read(Transport::Unix).await;
}
