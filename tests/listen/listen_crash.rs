//! `kill -9` of a `wsp serve --listen unix:PATH` while ten connections each run a command:
//! every process the server had started dies with it, at once (not when the next server
//! starts), and the store stays whole: the next server on the same path replaces the stale
//! socket file and serves every environment made before the kill (list, get, execute,
//! delete) and makes new ones, while a second server on that live path is refused.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::time::Duration;

use rustix::process::{kill_process, Pid, Signal};
use serde_json::{json, Value};

use crate::support::{read_pid, request, Watched, PATIENCE};
use crate::unix_peer::{create, spawn_listening, Listening, Peer};

const CONNECTIONS: usize = 10;

/// How long the processes of a killed server may take to die.
const DYING: Duration = Duration::from_secs(10);

/// A shell command that writes its own pid as this test sees it to the FIFO `fifo` it makes
/// (read from `/proc/self/stat`, which names it in the host's PID namespace whatever namespace
/// it runs in), then runs `then` (`exec sleep 300`, say).
pub(crate) fn reporting(fifo: &Path, then: &str) -> Value {
    let made = std::process::Command::new("mkfifo")
        .arg(fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let script = format!(
        "read stat < /proc/self/stat; echo \"${{stat%% *}}\" > '{}'; {then}",
        fifo.display()
    );
    json!(["sh", "-c", script])
}

/// Every descendant of process `pid` now, from `/proc/<pid>/task/*/children`.
fn descendants(pid: i32) -> Vec<i32> {
    let mut found = Vec::new();
    let mut parents = vec![pid];
    while let Some(parent) = parents.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{parent}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let children = std::fs::read_to_string(task.path().join("children"));
            for child in children.unwrap_or_default().split_whitespace() {
                let child = child.parse().expect("a pid");
                found.push(child);
                parents.push(child);
            }
        }
    }
    found
}

fn ids_of(listed: &Value) -> Vec<Value> {
    let mut ids: Vec<Value> = listed["result"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {listed}"))
        .iter()
        .map(|environment| environment["id"].clone())
        .collect();
    ids.sort_by_key(Value::to_string);
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_kill_9_no_process_outlives_the_server_and_the_next_one_serves_the_store() {
    let scratch = tempfile::tempdir().expect("scratch");
    let mut server = Listening::start(&[]).await;
    let mut creator = server.connect().await;
    creator.initialize().await;
    let mut before = Vec::new();
    for n in 0..3 {
        creator.send(&create(n, &format!("before-{n}"))).await;
        let (created, _) = creator.answer(n).await;
        assert!(created["result"]["id"].is_string(), "{created}");
        before.push(created["result"].clone());
    }

    let mut peers = Vec::new();
    let mut commands = Vec::new();
    for n in 0..CONNECTIONS {
        let mut peer = server.connect().await;
        peer.initialize().await;
        let fifo = scratch.path().join(format!("pid-{n}"));
        let environment = &before[n % before.len()]["id"];
        let execute = json!({"id": environment, "argv": reporting(&fifo, "exec sleep 300")});
        peer.send(&request(1, "environment/execute", execute)).await;
        commands.push(read_pid(fifo).await);
        peers.push(peer);
    }
    let server_pid = server.child.id().expect("the server runs") as i32;
    let started = descendants(server_pid);
    for pid in &commands {
        assert!(
            started.contains(pid),
            "{pid} is not the server's: {started:?}"
        );
    }
    // The commands run until they are killed; other descendants may be short-lived (a spare
    // environment being prepared) and end on their own meanwhile.
    let mut watched: Vec<Watched> = commands.iter().map(|&pid| Watched::new(pid)).collect();
    let others = started.iter().filter(|pid| !commands.contains(pid));
    watched.extend(others.filter_map(|&pid| Watched::if_running(pid)));

    kill_process(Pid::from_raw(server_pid).expect("a pid"), Signal::KILL).expect("SIGKILL");
    let status = tokio::time::timeout(PATIENCE, server.child.wait())
        .await
        .expect("the server dies in time")
        .expect("wait");
    assert_eq!(status.signal(), Some(Signal::KILL.as_raw()), "{status}");
    for process in &watched {
        process
            .assert_ends(DYING, "a process the killed server started")
            .await;
    }
    eprintln!(
        "{} processes of the killed server ended, the {CONNECTIONS} commands among them",
        watched.len()
    );
    // Each connection ends without an answer (a notification sent before the kill may come).
    for peer in &mut peers {
        while let Some(message) = peer.next().await {
            assert!(message.get("id").is_none(), "{message}");
        }
    }

    assert!(server.socket.exists(), "SIGKILL leaves the socket file");
    let mut restarted = spawn_listening(&server.state_dir, &server.socket, &[], &[])
        .await
        .unwrap_or_else(|log| panic!("the next server does not start: {log}"));
    let mut client = Peer::connect(&server.socket).await;
    client.initialize().await;
    let listed = client.call(1, "environment/list", json!(null)).await;
    let mut expected: Vec<Value> = before.iter().map(|e| e["id"].clone()).collect();
    expected.sort_by_key(Value::to_string);
    assert_eq!(ids_of(&listed), expected, "{listed}");
    for (request_id, environment) in (2..).zip(&before) {
        let got = client
            .call(
                request_id,
                "environment/get",
                json!({"id": environment["id"]}),
            )
            .await;
        assert_eq!(got["result"]["id"], environment["id"], "{got}");
        assert_eq!(got["result"]["name"], environment["name"], "{got}");
    }
    let ran = client
        .call(
            10,
            "environment/execute",
            json!({"id": before[1]["id"], "argv": ["python", "-c", "print('still whole')"]}),
        )
        .await;
    assert_eq!(ran["result"]["stdout"], json!("still whole\n"), "{ran}");
    // The killed server's executes hold nothing: the environment they ran in can go.
    let deleted = client
        .call(11, "environment/delete", json!({"id": before[0]["id"]}))
        .await;
    assert_eq!(deleted["result"]["id"], before[0]["id"], "{deleted}");
    client.send(&create(12, "after")).await;
    let (made, _) = client.answer(12).await;
    let after = made["result"]["id"].clone();
    assert!(after.is_string(), "{made}");
    let deleted = client
        .call(13, "environment/delete", json!({"id": after}))
        .await;
    assert_eq!(deleted["result"]["id"], after, "{deleted}");

    let second = spawn_listening(&server.state_dir, &server.socket, &[], &[]).await;
    let log = second
        .map(|_| ())
        .expect_err("a second server on a live socket is refused");
    assert!(log.contains("another server listens"), "{log}");
    let listed = client.call(14, "environment/list", json!(null)).await;
    let left: Vec<Value> = expected
        .into_iter()
        .filter(|id| *id != before[0]["id"])
        .collect();
    assert_eq!(ids_of(&listed), left, "{listed}");

    let restarted_pid = restarted.id().expect("the server runs") as i32;
    kill_process(Pid::from_raw(restarted_pid).expect("a pid"), Signal::TERM).expect("SIGTERM");
    let status = tokio::time::timeout(PATIENCE, restarted.wait())
        .await
        .expect("the server exits in time")
        .expect("wait");
    assert_eq!(status.code(), Some(0));
}
