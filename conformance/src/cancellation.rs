//! Checks of concurrency and cancellation: creates running side by side, and a create cancelled
//! halfway (the in-process counterpart of a crash) leaving nothing behind.

use std::time::Duration;
use wsp_testing::ClientExt;

use serde_json::json;

use super::altered::Alteration;
use super::contract::{check, create};
use super::{CheckFn, Fixture};
use wsp_server::client::Client;

pub(super) fn checks() -> Vec<(&'static str, CheckFn)> {
    vec![
        check!(concurrent_creates_of_different_names_all_succeed),
        check!(a_create_cancelled_after_provisioning_leaves_no_trace),
    ]
}

async fn concurrent_creates_of_different_names_all_succeed(f: Fixture) {
    let mut client = f.client().await;
    let mut requests = Vec::new();
    for n in 0..6 {
        let params =
            json!({"name": format!("side-{n}"), "python_version": f.backend.python_version});
        requests.push(client.send("environment/create", params).await);
    }
    let mut ids = Vec::new();
    for request in requests {
        let response = client.response(request).await;
        let id = response["result"]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("{response}"));
        ids.push(id.to_owned());
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 6);
    let listed = client.ok("environment/list", json!(null)).await;
    assert_eq!(listed.as_array().map(Vec::len), Some(6));
}

async fn a_create_cancelled_after_provisioning_leaves_no_trace(f: Fixture) {
    let server = f
        // Provisions, then never answers: the request can only end by being cancelled.
        .builder_with(|backend| Alteration::StallAfterProvision.apply(backend))
        .drain_timeout(Duration::from_millis(50))
        .build();
    let mut client = Client::initialized(server).await;
    let params = json!({"name": "cancelled", "python_version": f.backend.python_version});
    let request = client.send("environment/create", params).await;
    let status = client.close().await;
    assert_eq!(status, 0, "EOF ends the session with status 0");
    let _ = request;

    let mut fresh = f.client().await;
    assert_eq!(fresh.ok("environment/list", json!(null)).await, json!([]));
    create(&mut fresh, &f, "cancelled").await;
    let roots = std::fs::read_dir(f.state_dir.join("environments"))
        .map(|entries| entries.count())
        .unwrap_or(0);
    assert_eq!(roots, 1, "only the new environment's directory is left");
}
