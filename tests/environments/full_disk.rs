//! `wsp serve` on a full file system: `environment/create` fails naming the cause, while
//! `environment/delete` answers a result and frees the environment's space.
//!
//! The state directory lives on a small tmpfs the test mounts (as root, which CI is);
//! elsewhere the test skips, except when `CI` is set.

use std::path::PathBuf;

use crate::support::{error_code, Server};
use serde_json::json;
use wsp_testing::small_fs::{fill, free_bytes, SmallFs};

#[tokio::test]
async fn on_a_full_disk_delete_answers_and_frees_the_space_while_create_names_the_cause() {
    let Some(fs) = SmallFs::tmpfs(16 << 20) else {
        return;
    };
    let mut server = Server::start_in(&fs.path().join("state"), &[]);
    server.initialize().await;
    let created = server
        .call(
            1,
            "environment/create",
            json!({"name": "big", "python_version": "3.12"}),
        )
        .await;
    let id = created["result"]["id"].clone();
    let root = PathBuf::from(created["result"]["extra"]["path"].as_str().unwrap());
    // What an install would have put there: 4 MiB of files.
    let lib = root.join("lib").join("payload");
    std::fs::create_dir_all(&lib).unwrap();
    for n in 0..128 {
        std::fs::write(lib.join(format!("f{n}")), vec![1u8; 32 << 10]).unwrap();
    }
    fill(&fs.path().join("filler"));
    let before = free_bytes(fs.path());

    let refused = server
        .call(
            2,
            "environment/create",
            json!({"name": "no-room", "python_version": "3.12"}),
        )
        .await;
    assert_eq!(error_code(&refused), -31004, "{refused}");
    assert_eq!(
        refused["error"]["data"]["reason"], "state-store",
        "{refused}"
    );
    assert!(
        refused.to_string().contains("No space left on device"),
        "{refused}"
    );

    let deleted = server
        .call(3, "environment/delete", json!({"id": id}))
        .await;
    assert_eq!(deleted["result"]["id"], id, "{deleted}");
    // A create waits for the deletions still running, so once it answers the space is back;
    // and it succeeds on the disk that was full.
    let after = server
        .call(
            4,
            "environment/create",
            json!({"name": "after", "python_version": "3.12"}),
        )
        .await;
    assert!(after.get("result").is_some(), "{after}");
    assert!(!root.exists(), "the environment's files are still there");
    let freed = free_bytes(fs.path()).saturating_sub(before);
    // The 4 MiB, less the new environment and the refilled space reserve.
    assert!(freed >= 3 << 20, "only {freed} bytes freed");
    let listed = server.call(5, "environment/list", json!({})).await;
    let names: Vec<&str> = listed["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|summary| summary["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["after"], "{listed}");
    let (code, log) = server.finish().await;
    assert_eq!(code, 0, "{log}");
}
