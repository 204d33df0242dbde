//! Checks of installs in time: one install at a time per environment, a delete waiting for an
//! install, and `$/progress` (`begin`, the backend's own steps as `report`s, `end`, all before
//! the answer).
//!
//! The ordering checks hold installs inside the backend with a gate (a wrapper that lets an
//! install through only when the check says so), so they check the server's rules with any
//! backend's installer.

use std::sync::Arc;
use std::time::Duration;
use wsp_testing::ClientExt;

use serde_json::{json, Value};
use tokio::sync::{mpsc, Semaphore};
use wsp_backend::BoxBackend;

use super::altered::Alteration;
use super::contract::{check, create};
use super::install::{install_params, source, version_of};
use super::{CheckFn, Fixture};
use wsp_server::client::Client;
use wsp_testing::code;

pub(super) fn checks() -> Vec<(&'static str, CheckFn)> {
    vec![
        check!(installs_into_one_environment_run_one_at_a_time),
        check!(a_delete_waits_for_an_install),
        check!(install_progress_comes_before_the_answer),
        check!(create_progress_comes_before_the_answer),
    ]
}

/// How long a check waits to see that something does not happen.
const QUIET: Duration = Duration::from_millis(500);

/// Holds each install at the backend's door: it says so on `entered`, then waits for a permit
/// of `release`.
struct Gate {
    entered: mpsc::UnboundedReceiver<()>,
    release: Arc<Semaphore>,
}

fn gated(backend: BoxBackend) -> (BoxBackend, Gate) {
    let (tell, entered) = mpsc::unbounded_channel();
    let release = Arc::new(Semaphore::new(0));
    let gate = Alteration::GateInstalls {
        entered: tell,
        release: release.clone(),
    };
    (gate.apply(backend), Gate { entered, release })
}

/// A client of a server whose backend is gated, and the gate.
async fn gated_client(f: &Fixture) -> (Client, Gate) {
    let mut gate = None;
    let server = f.server_with(|backend| {
        let (wrapped, made) = gated(backend);
        gate = Some(made);
        wrapped
    });
    let gate = gate.expect("the server wrapped its backend");
    (Client::initialized(server).await, gate)
}

async fn installs_into_one_environment_run_one_at_a_time(f: Fixture) {
    let (mut client, mut gate) = gated_client(&f).await;
    let id = create(&mut client, &f, "serial").await["id"].clone();
    let first = client
        .send(
            "environment/install",
            install_params(&f, &id, &["wsp-kit-alpha==1.0"], json!({})),
        )
        .await;
    gate.entered
        .recv()
        .await
        .expect("the first install reaches the backend");
    let second = client
        .send(
            "environment/install",
            install_params(&f, &id, &["wsp-kit-beta"], json!({})),
        )
        .await;
    let overlapping = tokio::time::timeout(QUIET, gate.entered.recv()).await;
    assert!(
        overlapping.is_err(),
        "a second install reached the backend while the first ran"
    );
    gate.release.add_permits(1);
    gate.entered
        .recv()
        .await
        .expect("the second install goes next");
    gate.release.add_permits(1);
    let first = client.response(first).await;
    let second = client.response(second).await;
    assert!(first.get("result").is_some(), "{first}");
    let details = &second["result"];
    assert_eq!(
        version_of(details, "wsp-kit-beta").as_deref(),
        Some("1.0"),
        "{second}"
    );
}

async fn a_delete_waits_for_an_install(f: Fixture) {
    let (mut client, mut gate) = gated_client(&f).await;
    let id = create(&mut client, &f, "held").await["id"].clone();
    let install = client
        .send(
            "environment/install",
            install_params(&f, &id, &["wsp-kit-alpha"], json!({})),
        )
        .await;
    gate.entered
        .recv()
        .await
        .expect("the install reaches the backend");
    let delete = client.send("environment/delete", json!({"id": id})).await;
    let early = tokio::time::timeout(QUIET, client.next_response()).await;
    assert!(
        early.is_err(),
        "nothing is answered while the install runs: {early:?}"
    );
    gate.release.add_permits(1);
    let first = client.next_response().await;
    assert_eq!(
        first["id"],
        json!(install),
        "the install answers first: {first}"
    );
    assert_eq!(
        version_of(&first["result"], "wsp-kit-alpha").as_deref(),
        Some("2.0")
    );
    let deleted = client.response(delete).await;
    assert_eq!(deleted["result"]["id"], id, "{deleted}");
    let error = client.err("environment/get", json!({"id": id})).await;
    assert_eq!(code(&error), -31001);
}

/// The `$/progress` values for `token` among `notifications`, checked: they are
/// `begin` (with a title), at least one `report`, `end`, percentages never decreasing and at
/// most 100. Panics naming the values otherwise.
pub fn progress_values(notifications: &[Value], token: &Value) -> Vec<Value> {
    let values: Vec<Value> = notifications
        .iter()
        .filter(|n| n["method"] == "$/progress" && &n["params"]["token"] == token)
        .map(|n| n["params"]["value"].clone())
        .collect();
    let kinds: Vec<&str> = values.iter().filter_map(|v| v["kind"].as_str()).collect();
    assert!(kinds.len() >= 3, "begin, a report, end: {values:?}");
    assert_eq!(kinds.first(), Some(&"begin"), "{kinds:?}");
    assert!(values[0]["title"].is_string(), "{values:?}");
    assert_eq!(kinds.last(), Some(&"end"), "{kinds:?}");
    assert!(
        kinds[1..kinds.len() - 1].iter().all(|k| *k == "report"),
        "{kinds:?}"
    );
    let percentages: Vec<u64> = values
        .iter()
        .filter_map(|v| v["percentage"].as_u64())
        .collect();
    assert!(
        percentages.windows(2).all(|w| w[0] <= w[1]),
        "{percentages:?}"
    );
    assert!(percentages.iter().all(|p| *p <= 100), "{percentages:?}");
    values
}

fn report_messages(values: &[Value]) -> Vec<String> {
    values
        .iter()
        .filter(|v| v["kind"] == "report")
        .filter_map(|v| v["message"].as_str().map(str::to_owned))
        .collect()
}

async fn install_progress_comes_before_the_answer(f: Fixture) {
    let mut client = f.client().await;
    let id = create(&mut client, &f, "progress").await["id"].clone();
    client.take_notifications();
    let token = json!("kit-install");
    let params = install_params(
        &f,
        &id,
        &["wsp-kit-beta"],
        json!({"work_done_token": token}),
    );
    let request = client.send("environment/install", params).await;
    let answer = client.response(request).await;
    assert!(answer.get("result").is_some(), "{answer}");
    let values = progress_values(&client.take_notifications(), &token);
    let reports = report_messages(&values);
    assert!(
        reports
            .iter()
            .any(|m| m.contains("wsp-kit-beta") || m.contains("wsp_kit_beta")),
        "the installer's own steps name what it installs: {reports:?}"
    );
    let params = install_params(&f, &id, &["wsp-kit-alpha"], json!({}));
    client.ok("environment/install", params).await;
    assert!(
        client.take_notifications().is_empty(),
        "no token, no progress"
    );
}

async fn create_progress_comes_before_the_answer(f: Fixture) {
    let mut client = f.client().await;
    let token = json!(42);
    let mut params = source(&f);
    params.insert("name".into(), json!("made"));
    params.insert("python_version".into(), json!(f.backend.python_version));
    params.insert("packages".into(), json!(["wsp-kit-alpha"]));
    params.insert("work_done_token".into(), token.clone());
    let request = client
        .send("environment/create", Value::Object(params))
        .await;
    let answer = client.response(request).await;
    assert!(answer.get("result").is_some(), "{answer}");
    let values = progress_values(&client.take_notifications(), &token);
    assert!(
        report_messages(&values).len() >= 2,
        "provisioning and installing: {values:?}"
    );
    let plain = json!({"name": "plain", "python_version": f.backend.python_version,
                       "work_done_token": "plain"});
    let request = client.send("environment/create", plain).await;
    client.response(request).await;
    let values = progress_values(&client.take_notifications(), &json!("plain"));
    assert!(!report_messages(&values).is_empty(), "{values:?}");
}
