//! `environment/gc` and `extra.disk_bytes` through the real binary, with real environments:
//! least recently used first, never one in use, down to the bound; sizes that a independent
//! count (`find`) agrees with.

use std::collections::HashSet;
use std::path::Path;

use serde_json::{json, Value};

use crate::support::{error_code, start_sleeper, Server};

/// What `find` says the files under `root` hold: each regular file and symlink, each inode
/// once.
fn bytes_by_find(root: &Path) -> u64 {
    let output = std::process::Command::new("find")
        .arg(root)
        .args([
            "(", "-type", "f", "-o", "-type", "l", ")", "-printf", "%i %s\\n",
        ])
        .output()
        .expect("find runs");
    assert!(output.status.success());
    let mut seen = HashSet::new();
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| line.split_once(' '))
        .filter(|(inode, _)| seen.insert(inode.to_string()))
        .map(|(_, size)| size.parse::<u64>().unwrap())
        .sum()
}

async fn disk_bytes(server: &mut Server, id: i64, environment: &Value) -> u64 {
    let got = server
        .call(id, "environment/get", json!({"id": environment}))
        .await;
    got["result"]["extra"]["disk_bytes"]
        .as_u64()
        .unwrap_or_else(|| panic!("disk_bytes: {got}"))
}

#[tokio::test]
async fn disk_bytes_counts_each_file_once_as_find_does() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let created = server.create_environment(1, "sized").await;
    let root = Path::new(created["extra"]["path"].as_str().unwrap()).to_owned();
    let before = disk_bytes(&mut server, 2, &created["id"]).await;
    assert_eq!(before, bytes_by_find(&root));
    std::fs::write(root.join("blob"), vec![7u8; 1 << 20]).unwrap();
    std::fs::hard_link(root.join("blob"), root.join("blob-again")).unwrap();
    let after = disk_bytes(&mut server, 3, &created["id"]).await;
    assert_eq!(after, before + (1 << 20), "a hard link counts once");
    assert_eq!(after, bytes_by_find(&root));
}

#[tokio::test]
async fn gc_deletes_the_least_recently_used_first_and_never_one_in_use() {
    let scratch = tempfile::tempdir().unwrap();
    let mut server = Server::start(&[]);
    server.initialize().await;
    let oldest = server.create_environment(1, "oldest").await["id"].clone();
    let busy = server.create_environment(2, "busy").await["id"].clone();
    let middle = server.create_environment(3, "middle").await["id"].clone();
    let newest = server.create_environment(4, "newest").await["id"].clone();
    // Each get is a use: from least to most recently used, middle, oldest, newest, busy.
    let sizes = [
        disk_bytes(&mut server, 7, &middle).await,
        disk_bytes(&mut server, 8, &oldest).await,
        disk_bytes(&mut server, 9, &newest).await,
    ];
    let busy_bytes = disk_bytes(&mut server, 10, &busy).await;
    // The most recently used of all, and in use while every collection below runs.
    let sleeper = start_sleeper(&mut server, 11, &busy, scratch.path()).await;
    let total = busy_bytes + sizes.iter().sum::<u64>();
    // Room for all but one byte: the least recently used goes, and only it.
    let collected = server
        .call(12, "environment/gc", json!({"keep_bytes": total - 1}))
        .await;
    assert_eq!(
        collected["result"]["deleted"],
        json!([middle]),
        "{collected}"
    );
    assert_eq!(collected["result"]["disk_bytes"], total - sizes[0]);

    let collected = server
        .call(13, "environment/gc", json!({"keep_bytes": 0}))
        .await;
    assert_eq!(
        collected["result"]["deleted"],
        json!([oldest, newest]),
        "{collected}"
    );
    assert_eq!(collected["result"]["disk_bytes"], busy_bytes);
    let listed = server.call(14, "environment/list", json!(null)).await;
    assert_eq!(crate::listed_ids(&listed), [&busy], "{listed}");

    // Once the command ends, the environment is no longer in use.
    assert!(crate::support::is_running(sleeper));
    let killed = std::process::Command::new("kill")
        .args(["-9", &sleeper.to_string()])
        .status();
    assert!(killed.unwrap().success());
    let ran = server.recv().await;
    assert_eq!(ran["id"], 11, "{ran}");
    let collected = server
        .call(15, "environment/gc", json!({"keep_bytes": 0}))
        .await;
    assert_eq!(collected["result"]["deleted"], json!([busy]), "{collected}");
    assert_eq!(collected["result"]["disk_bytes"], 0);
}

#[tokio::test]
async fn gc_within_the_bound_deletes_nothing_and_bad_bounds_are_invalid_params() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let kept = server.create_environment(1, "kept").await["id"].clone();
    let bytes = disk_bytes(&mut server, 2, &kept).await;
    let collected = server
        .call(3, "environment/gc", json!({"keep_bytes": bytes}))
        .await;
    assert_eq!(
        collected["result"],
        json!({"deleted": [], "disk_bytes": bytes}),
        "{collected}"
    );
    for (id, params) in [
        (4, json!({})),
        (5, json!({"keep_bytes": -1})),
        (6, json!({"keep_bytes": "10G"})),
        (7, json!({"keep_bytes": 1.5})),
    ] {
        let refused = server.call(id, "environment/gc", params).await;
        assert_eq!(error_code(&refused), -32602, "{refused}");
        assert_eq!(
            refused["error"]["data"]["violations"][0]["field"],
            "keep_bytes"
        );
    }
}
