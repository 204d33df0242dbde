//! `kill -9` of a `wsp serve --listen unix:PATH` while ten connections each run a command:
//! nothing those commands started outlives the server, and the store stays whole: the next
//! server on the same path replaces the stale socket file and serves every environment (get,
//! execute, delete), while a second live server on that path is refused.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;

use rustix::process::{kill_process, Pid, Signal};
use serde_json::{json, Value};

use crate::listen::{create, spawn_listening, Listening, Peer};
use crate::support::{assert_gone, is_running, request, PATIENCE};

const CONNECTIONS: usize = 10;

/// Starts a child `sleep 300`, writes `<own pid> <the child's pid>` to the FIFO `argv[1]`,
/// then waits for the child.
const COMMAND: &str = "\
import os, subprocess, sys
child = subprocess.Popen(['sleep', '300'])
with open(sys.argv[1], 'w') as fifo:
    fifo.write(f'{os.getpid()} {child.pid}')
child.wait()
";

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
}

/// The pids a [`COMMAND`] writes to `fifo`, once it runs (read in a blocking task: opening a
/// FIFO waits for its writer).
async fn command_pids(fifo: std::path::PathBuf) -> Vec<i32> {
    let read = tokio::task::spawn_blocking(move || std::fs::read_to_string(fifo));
    let text = tokio::time::timeout(PATIENCE, read)
        .await
        .expect("the command starts in time")
        .expect("the reader task ends")
        .expect("the command writes its pids");
    text.split_whitespace()
        .map(|pid| pid.parse().expect("a pid"))
        .collect()
}

async fn call(peer: &mut Peer, id: i64, method: &str, params: Value) -> Value {
    peer.send(&request(id, method, params)).await;
    peer.answer(id).await.0
}

#[tokio::test]
async fn after_kill_9_no_command_outlives_the_server_and_the_next_one_serves_the_store() {
    let scratch = tempfile::tempdir().expect("scratch");
    let mut server = Listening::start(&[]).await;
    let mut creator = server.connect().await;
    creator.initialize().await;
    let mut ids = Vec::new();
    for (request_id, name) in [(1, "crashed-a"), (2, "crashed-b")] {
        creator.send(&create(request_id, name)).await;
        let (created, _) = creator.answer(request_id).await;
        let id = created["result"]["id"].clone();
        assert!(id.is_string(), "{created}");
        ids.push(id);
    }

    let mut peers = Vec::new();
    let mut pids = Vec::new();
    for n in 0..CONNECTIONS {
        let fifo = scratch.path().join(format!("pids-{n}"));
        mkfifo(&fifo);
        let mut peer = server.connect().await;
        peer.initialize().await;
        let argv = json!(["python", "-c", COMMAND, fifo]);
        let execute = json!({"id": ids[n % ids.len()], "argv": argv});
        peer.send(&request(1, "environment/execute", execute)).await;
        pids.extend(command_pids(fifo).await);
        peers.push(peer);
    }
    assert_eq!(pids.len(), 2 * CONNECTIONS, "{pids:?}");
    assert!(pids.iter().all(|&pid| is_running(pid)), "{pids:?}");

    let server_pid = server.child.id().expect("the server runs") as i32;
    kill_process(Pid::from_raw(server_pid).expect("a pid"), Signal::KILL).expect("SIGKILL");
    let status = tokio::time::timeout(PATIENCE, server.child.wait())
        .await
        .expect("the server dies in time")
        .expect("wait");
    assert_eq!(status.signal(), Some(Signal::KILL.as_raw()), "{status}");
    for peer in &mut peers {
        assert!(peer.next().await.is_none(), "the connection ends");
    }
    for &pid in &pids {
        assert_gone(pid, "a process of a command of the killed server").await;
    }

    assert!(server.socket.exists(), "SIGKILL leaves the socket file");
    let mut restarted = spawn_listening(&server.state_dir, &server.socket, &[])
        .await
        .unwrap_or_else(|log| panic!("the next server does not start: {log}"));
    let mut client = Peer::connect(&server.socket).await;
    client.initialize().await;
    let listed = call(&mut client, 1, "environment/list", json!(null)).await;
    let mut listed_ids: Vec<Value> = listed["result"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {listed}"))
        .iter()
        .map(|environment| environment["id"].clone())
        .collect();
    listed_ids.sort_by_key(Value::to_string);
    let mut expected = ids.clone();
    expected.sort_by_key(Value::to_string);
    assert_eq!(listed_ids, expected, "{listed}");
    for (request_id, id) in (2..).zip(&ids) {
        let got = call(
            &mut client,
            request_id,
            "environment/get",
            json!({"id": id}),
        )
        .await;
        assert_eq!(&got["result"]["id"], id, "{got}");
    }
    let ran = call(
        &mut client,
        10,
        "environment/execute",
        json!({"id": ids[1], "argv": ["python", "-c", "print('still whole')"]}),
    )
    .await;
    assert_eq!(ran["result"]["stdout"], json!("still whole\n"), "{ran}");
    // No execute of the killed server still counts as running in the environment.
    let deleted = call(&mut client, 11, "environment/delete", json!({"id": ids[0]})).await;
    assert_eq!(deleted["result"]["id"], ids[0], "{deleted}");

    let second = spawn_listening(&server.state_dir, &server.socket, &[]).await;
    let log = second
        .map(|_| ())
        .expect_err("a second live server is refused");
    assert!(log.contains("another server listens"), "{log}");
    let still = call(&mut client, 12, "environment/list", json!(null)).await;
    assert_eq!(still["result"].as_array().map(Vec::len), Some(1), "{still}");

    let restarted_pid = restarted.id().expect("the server runs") as i32;
    kill_process(Pid::from_raw(restarted_pid).expect("a pid"), Signal::TERM).expect("SIGTERM");
    let status = tokio::time::timeout(PATIENCE, restarted.wait())
        .await
        .expect("the server exits in time")
        .expect("wait");
    assert_eq!(status.code(), Some(0));
}
