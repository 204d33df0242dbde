//! Cancelling a delete that waits on another process's execute, over the real binary: two
//! `wsp serve` processes share one state directory; A runs a long execute, B's delete of that
//! environment waits for it and is cancelled. The cancelled delete changed nothing: the
//! environment is still listed, usable and intact, and A's command still runs. Once A's
//! execute ends, a new delete in B succeeds.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::{assert_gone, error_code, is_running, request, start_sleeper, Server};
use serde_json::{json, Value};

/// Waits until some process holds an exclusive flock on `path`, as `/proc/locks` lists it:
/// the sign that a delete started and is waiting for the environment's users.
async fn wait_for_exclusive_flock(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(metadata) = std::fs::metadata(path) {
            let inode = metadata.ino().to_string();
            let locks = std::fs::read_to_string("/proc/locks").unwrap();
            let held = locks.lines().any(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                fields.get(1) == Some(&"FLOCK")
                    && fields.get(3) == Some(&"WRITE")
                    && fields.get(5).and_then(|f| f.rsplit(':').next()) == Some(inode.as_str())
            });
            if held {
                return;
            }
        }
        assert!(
            Instant::now() < deadline,
            "no delete started waiting on {}",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn names(listed: &Value) -> Vec<String> {
    listed["result"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {listed}"))
        .iter()
        .map(|summary| summary["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_cancelled_delete_waiting_on_another_servers_execute_changes_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    let mut a = Server::start_in(&state, &[]);
    a.initialize().await;
    let created = a.create_environment(1, "shared").await;
    let id = created["id"].clone();
    let id_text = id.as_str().unwrap().to_owned();
    let interpreter = created["interpreter_path"].as_str().unwrap().to_owned();
    let sleeper = start_sleeper(&mut a, 2, &id, temp.path()).await;

    let mut b = Server::start_in(&state, &[]);
    b.initialize().await;
    b.send(&request(5, "environment/delete", json!({"id": id})))
        .await;
    wait_for_exclusive_flock(&state.join("locks").join(format!("{id_text}.delete"))).await;
    b.send(&json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 5}}))
        .await;
    let cancelled = b.recv().await;
    assert_eq!(cancelled["id"], 5, "{cancelled}");
    assert_eq!(error_code(&cancelled), -32800, "{cancelled}");

    // Nothing changed: listed in both servers, usable from B, its files whole, A's command on.
    assert_eq!(
        names(&b.call(6, "environment/list", json!({})).await),
        ["shared"]
    );
    assert_eq!(
        names(&a.call(3, "environment/list", json!({})).await),
        ["shared"]
    );
    let got = b.call(7, "environment/get", json!({"id": id})).await;
    assert_eq!(got["result"]["name"], "shared", "{got}");
    assert!(Path::new(&interpreter).exists(), "the interpreter is gone");
    assert!(is_running(sleeper), "A's execute was disturbed");
    let ran = b
        .call(
            8,
            "environment/execute",
            json!({"id": id, "argv": ["python", "-c", "print(6 * 7)"]}),
        )
        .await;
    assert_eq!(ran["result"]["stdout"], "42\n", "{ran}");

    a.send(&json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 2}}))
        .await;
    let execute_ended = a.recv().await;
    assert_eq!(execute_ended["id"], 2, "{execute_ended}");
    assert_eq!(error_code(&execute_ended), -32800, "{execute_ended}");
    assert_gone(sleeper, "the sleeper of the cancelled execute").await;

    let deleted = b.call(9, "environment/delete", json!({"id": id})).await;
    assert_eq!(deleted["result"]["id"], id, "{deleted}");
    assert!(names(&b.call(10, "environment/list", json!({})).await).is_empty());
    assert!(names(&a.call(4, "environment/list", json!({})).await).is_empty());
    for server in [a, b] {
        let (code, log) = server.finish().await;
        assert_eq!(code, 0, "{log}");
    }
}
