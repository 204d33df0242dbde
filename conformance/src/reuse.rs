//! Checks of reuse by content, disk use and gc (`docs/PROTOCOL.md`, "Reuse by content, disk
//! use and gc"): what every backend gets from the environment service, whatever it resolves.

use serde_json::{json, Value};
use wsp_testing::ClientExt;

use super::contract::{check, create};
use super::{CheckFn, Fixture};

pub(super) fn checks() -> Vec<(&'static str, CheckFn)> {
    vec![
        check!(identical_reuse_creates_answer_one_environment),
        check!(a_change_ends_reuse),
        check!(gc_deletes_the_least_recently_used_down_to_the_bound),
    ]
}

fn reuse_params(f: &Fixture, name: &str) -> Value {
    json!({"name": name, "python_version": f.backend.python_version, "reuse": true})
}

async fn identical_reuse_creates_answer_one_environment(f: Fixture) {
    let mut client = f.client().await;
    let built = client
        .ok("environment/create", reuse_params(&f, "built"))
        .await;
    assert_eq!(built["extra"]["reused"], false, "{built}");
    let reused = client
        .ok("environment/create", reuse_params(&f, "again"))
        .await;
    assert_eq!(reused["id"], built["id"], "{reused}");
    assert_eq!(reused["name"], "built");
    assert_eq!(reused["extra"]["reused"], true);
    let plain = create(&mut client, &f, "plain").await;
    assert_eq!(plain["extra"]["reused"], false, "{plain}");
    let reused = client
        .ok("environment/create", reuse_params(&f, "third"))
        .await;
    assert_eq!(
        reused["id"], built["id"],
        "not the one made without reuse: {reused}"
    );
    let listed = client.ok("environment/list", json!(null)).await;
    assert_eq!(listed.as_array().map(Vec::len), Some(2), "{listed}");
}

async fn a_change_ends_reuse(f: Fixture) {
    let mut client = f.client().await;
    let built = client
        .ok("environment/create", reuse_params(&f, "changed"))
        .await;
    // Even an uninstall that finds nothing to remove is a change.
    let uninstall = json!({"id": built["id"], "packages": ["wsp-kit-not-installed"]});
    client.ok("environment/uninstall", uninstall).await;
    let anew = client
        .ok("environment/create", reuse_params(&f, "anew"))
        .await;
    assert_ne!(anew["id"], built["id"], "{anew}");
    assert_eq!(anew["extra"]["reused"], false);
}

async fn gc_deletes_the_least_recently_used_down_to_the_bound(f: Fixture) {
    let mut client = f.client().await;
    let older = create(&mut client, &f, "older").await;
    let newer = create(&mut client, &f, "newer").await;
    let got = client
        .ok("environment/get", json!({"id": newer["id"]}))
        .await;
    let newer_bytes = got["extra"]["disk_bytes"].as_u64().expect("disk_bytes");
    assert!(newer_bytes > 0, "{got}");
    let got = client
        .ok("environment/get", json!({"id": older["id"]}))
        .await;
    let older_bytes = got["extra"]["disk_bytes"].as_u64().expect("disk_bytes");
    // `older` is now the more recently used: `newer` goes first.
    let total = older_bytes + newer_bytes;
    let kept = client
        .ok("environment/gc", json!({"keep_bytes": total}))
        .await;
    assert_eq!(kept, json!({"deleted": [], "disk_bytes": total}));
    let collected = client
        .ok("environment/gc", json!({"keep_bytes": total - 1}))
        .await;
    assert_eq!(
        collected,
        json!({"deleted": [newer["id"]], "disk_bytes": older_bytes})
    );
    let collected = client.ok("environment/gc", json!({"keep_bytes": 0})).await;
    assert_eq!(
        collected,
        json!({"deleted": [older["id"]], "disk_bytes": 0})
    );
    assert_eq!(client.ok("environment/list", json!(null)).await, json!([]));
}
