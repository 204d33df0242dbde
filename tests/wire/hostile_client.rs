//! A client that pushes the framework core: batches larger than the handler limit, notifications
//! while every handler slot is busy, the end of input while the limit is saturated, and a
//! client that never reads. Each case hung or grew without bound before the core read input
//! independently of handler capacity.

use std::collections::HashSet;
use std::io::Write;
use std::os::fd::AsFd;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::{error_code, frame, notification, request, start_sleeper, Server, PATIENCE};
use serde_json::{json, Value};

async fn environment(server: &mut Server) -> Value {
    server.initialize().await;
    let created = server
        .call(
            1,
            "environment/create",
            json!({"name": "hostile", "python_version": "3.12"}),
        )
        .await;
    created["result"]["id"].clone()
}

fn batch_of_lists(first_id: i64, n: i64) -> Value {
    Value::Array(
        (first_id..first_id + n)
            .map(|id| request(id, "environment/list", json!({})))
            .collect(),
    )
}

async fn answer_batch(server: &mut Server, limit: &str, size: i64) {
    server.initialize().await;
    server.send(&batch_of_lists(100, size)).await;
    let answers = server.recv().await;
    let ids: Vec<i64> = answers
        .as_array()
        .unwrap_or_else(|| panic!("a batch answer is an array: {answers}"))
        .iter()
        .map(|answer| answer["id"].as_i64().expect("a numeric id"))
        .collect();
    assert_eq!(ids, (100..100 + size).collect::<Vec<_>>(), "limit {limit}");
    let after = server.call(9, "environment/list", json!({})).await;
    assert_eq!(after["result"], json!([]), "the server still serves");
}

#[tokio::test]
async fn a_batch_larger_than_the_limit_is_answered() {
    let mut server = Server::start(&[]);
    answer_batch(&mut server, "64 (default)", 65).await;
    let (status, _) = server.finish().await;
    assert_eq!(status, 0, "EOF still ends the process");

    let mut server = Server::start(&["--concurrency-limit", "1"]);
    answer_batch(&mut server, "1", 2).await;
    let (status, _) = server.finish().await;
    assert_eq!(status, 0);
}

#[tokio::test]
async fn a_cancel_is_acted_on_while_every_slot_is_busy() {
    let scratch = tempfile::tempdir().expect("scratch");
    let mut server = Server::start(&["--concurrency-limit", "2"]);
    let env = environment(&mut server).await;
    let (a, b) = (scratch.path().join("a"), scratch.path().join("b"));
    std::fs::create_dir(&a).expect("scratch a");
    std::fs::create_dir(&b).expect("scratch b");
    let first = start_sleeper(&mut server, 10, &env, &a).await;
    let second = start_sleeper(&mut server, 11, &env, &b).await;
    server
        .send(&request(12, "environment/list", json!({})))
        .await;

    let mut cancel = notification("$/cancelRequest");
    cancel["params"] = json!({"id": 10});
    server.send(&cancel).await;
    let answer = server.recv().await;
    assert_eq!(answer["id"], json!(10), "{answer}");
    assert_eq!(error_code(&answer), -32800);
    crate::support::assert_gone(first, "the cancelled execute's child").await;
    let answer = server.recv().await;
    assert_eq!(
        answer["id"],
        json!(12),
        "the freed slot serves the waiting request"
    );
    assert!(crate::support::is_running(second));

    server.close();
    let answer = server.recv().await;
    assert_eq!(answer["id"], json!(11));
    let (status, _) = server.finish().await;
    assert_eq!(status, 0);
    crate::support::assert_gone(second, "the drained execute's child").await;
}

#[tokio::test]
async fn the_drain_deadline_holds_with_the_limit_saturated() {
    let scratch = tempfile::tempdir().expect("scratch");
    let mut server = Server::start(&["--concurrency-limit", "2", "--drain-timeout", "1s"]);
    let env = environment(&mut server).await;
    let mut pids = Vec::new();
    for (n, id) in [10, 11].into_iter().enumerate() {
        let dir = scratch.path().join(n.to_string());
        std::fs::create_dir(&dir).expect("scratch dir");
        pids.push(start_sleeper(&mut server, id, &env, &dir).await);
    }
    // A third never-ending command waits for a slot: it is in flight too.
    server
        .send(&request(
            12,
            "environment/execute",
            json!({"id": env, "argv": ["sleep", "300"]}),
        ))
        .await;
    server.close();
    let mut ids = HashSet::new();
    for _ in 0..3 {
        let answer = server.recv().await;
        assert_eq!(error_code(&answer), -32603, "{answer}");
        ids.insert(answer["id"].as_i64().expect("id"));
    }
    assert_eq!(ids, HashSet::from([10, 11, 12]));
    let (status, _) = server.finish().await;
    assert_eq!(status, 0);
    for pid in pids {
        crate::support::assert_gone(pid, "a cancelled execute's child").await;
    }
}

fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} in /proc/{pid}/status"))
}

fn unread_bytes(fd: impl AsFd) -> usize {
    rustix::io::ioctl_fionread(fd).expect("FIONREAD") as usize
}

/// A client that sends 100,000 requests without reading, and reads only once both pipes are
/// full (or everything was taken in), keeps the server under 64 MiB; then every answer arrives.
#[test]
fn a_client_that_never_reads_keeps_the_server_bounded() {
    const REQUESTS: i64 = 100_000;
    let state = tempfile::tempdir().expect("state dir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_wsp"))
        .arg("serve")
        .arg("--state-dir")
        .arg(state.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("wsp serve starts");
    let pid = child.id();
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let probe = stdin.as_fd().try_clone_to_owned().expect("dup");
    let writer = std::thread::spawn(move || {
        let mut bytes = frame(&crate::support::initialize(0).to_string());
        for id in 1..=REQUESTS {
            bytes.extend(frame(
                &request(id, "bench/nonexistent", json!({})).to_string(),
            ));
        }
        stdin
            .write_all(&bytes)
            .expect("the server takes every request in the end");
    });

    let deadline = std::time::Instant::now() + PATIENCE;
    while !writer.is_finished() && (unread_bytes(&stdout) < 60_000 || unread_bytes(&probe) < 60_000)
    {
        assert!(
            std::time::Instant::now() < deadline,
            "neither pipe filled up"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let blocked_rss = status_kib(pid, "VmRSS:");

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut seen = HashSet::new();
    runtime.block_on(async {
        use futures::StreamExt;
        let stdout = tokio::process::ChildStdout::from_std(stdout).expect("async stdout");
        let mut reader =
            tokio_util::codec::FramedRead::new(stdout, wsp_server::codec::FrameCodec::new());
        while seen.len() < REQUESTS as usize + 1 {
            let next = tokio::time::timeout(PATIENCE, reader.next())
                .await
                .expect("answers keep coming");
            let Some(Ok(wsp_server::codec::Frame::Payload(text))) = next else {
                panic!("expected an answer, got {next:?}");
            };
            let answer: Value = serde_json::from_str(&text).expect("JSON");
            let id = answer["id"].as_i64().expect("a numeric id");
            assert!(seen.insert(id), "answer {id} arrived twice");
        }
    });
    writer
        .join()
        .expect("the writer finishes once the server reads again");
    let peak = status_kib(pid, "VmHWM:");
    drop(runtime);
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        peak < 64 * 1024,
        "peak RSS {peak} KiB (while the client did not read: {blocked_rss} KiB)"
    );
}

/// After EOF with stdout full, the drain deadline still ends the process. The whole input
/// (with its EOF) is in the pipe before the server starts, so it reads all of it at once.
#[test]
fn eof_with_stdout_full_exits_by_the_deadline() {
    let state = tempfile::tempdir().expect("state dir");
    let (input, mut feed) = std::io::pipe().expect("a pipe");
    let mut bytes = frame(&crate::support::initialize(0).to_string());
    for id in 1..=700 {
        let answered_with_32601 =
            json!({"jsonrpc": "2.0", "id": id, "method": "bench/nonexistent"});
        bytes.extend(frame(&answered_with_32601.to_string()));
    }
    assert!(bytes.len() < 60_000, "the input fits in the pipe");
    feed.write_all(&bytes).expect("fill the pipe");
    drop(feed);
    let mut child = Command::new(env!("CARGO_BIN_EXE_wsp"))
        .arg("serve")
        .arg("--state-dir")
        .arg(state.path())
        .args(["--drain-timeout", "1s"])
        .stdin(input)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("wsp serve starts");
    let stdout = child
        .stdout
        .take()
        .expect("stdout, held open and never read");
    let deadline = std::time::Instant::now() + PATIENCE;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server hung with stdout full"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        unread_bytes(&stdout) >= 60_000,
        "stdout was full when the server gave up"
    );
    assert_eq!(status.code(), Some(0), "EOF ends the session with 0");
}

/// Sends `count` requests of `method`, one after another, to `server` (whose stderr the test
/// never reads), checks each answer with `check`, and fails unless all are answered in time.
async fn answered_with_stderr_unread(
    server: &mut Server,
    method: &str,
    count: i64,
    check: impl Fn(&Value),
) {
    let all_answered = async {
        for id in 2..2 + count {
            check(&server.call(id, method, json!({})).await);
        }
    };
    tokio::time::timeout(PATIENCE, all_answered)
        .await
        .expect("every request answered though stderr is never read");
}

/// A client that pipes the server's stderr and never reads it, while the server logs at `debug`
/// (about 190 bytes per request): the pipe fills after a few hundred requests, and the server
/// keeps answering, dropping log lines instead of waiting to write them.
#[tokio::test]
async fn a_client_that_never_reads_stderr_is_still_answered() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    answered_with_stderr_unread(&mut server, "environment/list", 3000, |answer| {
        assert!(answer["result"].is_array(), "{answer}");
    })
    .await;
    let (status, _log) = server.finish().await;
    assert_eq!(status, 0);
}

/// The same client sending requests whose method names are 256 KiB each: every one of them is
/// in a log line (the request's span), and the lines waiting for stderr are bounded by their
/// bytes, so the server's memory stays small while 100 MiB of such lines are dropped.
#[tokio::test]
async fn log_lines_waiting_for_an_unread_stderr_are_bounded_by_their_bytes() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let method = "m".repeat(256 << 10);
    answered_with_stderr_unread(&mut server, &method, 400, |answer| {
        assert_eq!(error_code(answer), -32601);
    })
    .await;
    let peak = server.peak_rss_mib();
    assert!(peak < 64.0, "peak RSS {peak:.1} MiB");
    let (status, _log) = server.finish().await;
    assert_eq!(status, 0);
}
