//! Checks of `environment/lock` and `environment/create` with `lock` (feature
//! `environment.lock`), run on a backend whose server lists that feature: a lock names every
//! installed distribution and recreates an environment with equal `installed_packages`; a lock
//! whose hash was changed fails with `install-failed` and leaves nothing; `lock` with
//! `packages` is `-32602`, and an unknown id `-31001`.

use serde_json::{json, Map, Value};
use wsp_install::packages::normalize_name;
use wsp_server::client::Client;
use wsp_testing::{code, ClientExt};

use super::contract::check;
use super::install::source;
use super::{CheckFn, Fixture};

pub(super) fn checks() -> Vec<(&'static str, CheckFn)> {
    vec![
        check!(a_lock_recreates_the_environment),
        check!(a_tampered_lock_leaves_nothing),
        check!(lock_errors_are_31001_and_32602),
    ]
}

/// An initialized client, if the server lists `environment.lock`.
async fn locking_client(f: &Fixture) -> Option<Client> {
    let (client, init) = f.initialize().await;
    let features = init["features"].as_array().cloned().unwrap_or_default();
    if !features.contains(&json!("environment.lock")) {
        return None;
    }
    let methods = init["methods"].as_array().expect("methods");
    assert!(methods.contains(&json!("environment/lock")), "{init}");
    Some(client)
}

fn create_params(f: &Fixture, name: &str, extra: Map<String, Value>) -> Value {
    let mut params = extra;
    params.insert("name".into(), json!(name));
    params.insert("python_version".into(), json!(f.backend.python_version));
    Value::Object(params)
}

/// An environment with `wsp-kit-beta` (and so `wsp-kit-alpha`) and its lock.
async fn locked(client: &mut Client, f: &Fixture) -> (Value, Value) {
    let mut with = source(f);
    with.insert("packages".into(), json!(["wsp-kit-beta"]));
    let original = client
        .ok("environment/create", create_params(f, "original", with))
        .await;
    let lock = client
        .ok("environment/lock", json!({"id": original["id"]}))
        .await;
    (original, lock)
}

async fn a_lock_recreates_the_environment(f: Fixture) {
    let Some(mut client) = locking_client(&f).await else {
        return;
    };
    let (original, lock) = locked(&mut client, &f).await;
    let format = lock["format"].as_str().expect("format");
    assert!(
        ["pylock.toml", "conda-explicit"].contains(&format),
        "{lock}"
    );
    let text = lock["text"]
        .as_str()
        .expect("text")
        .to_lowercase()
        .replace('_', "-");
    for package in original["installed_packages"].as_array().expect("packages") {
        let name = normalize_name(package["name"].as_str().unwrap_or_default());
        assert!(text.contains(&name), "the lock names {name}: {text}");
    }
    let mut with = Map::new();
    with.insert("lock".into(), lock.clone());
    let again = client
        .ok("environment/create", create_params(&f, "again", with))
        .await;
    assert_eq!(again["installed_packages"], original["installed_packages"]);
    let relocked = client
        .ok("environment/lock", json!({"id": again["id"]}))
        .await;
    assert_eq!(relocked["format"], lock["format"]);
}

/// `text` with its first 64-hex-digit run (a SHA-256) changed in its first digit.
fn tampered(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let start = (0..bytes.len().saturating_sub(63)).find(|&i| {
        bytes[i..i + 64].iter().all(u8::is_ascii_hexdigit)
            && (i == 0 || !bytes[i - 1].is_ascii_hexdigit())
    })?;
    let replacement = if bytes[start] == b'0' { "1" } else { "0" };
    Some(format!(
        "{}{replacement}{}",
        &text[..start],
        &text[start + 1..]
    ))
}

async fn a_tampered_lock_leaves_nothing(f: Fixture) {
    let Some(mut client) = locking_client(&f).await else {
        return;
    };
    let (_, lock) = locked(&mut client, &f).await;
    let text = lock["text"].as_str().expect("text");
    let changed = tampered(text).expect("the lock carries a sha256");
    let before = client.ok("environment/list", json!(null)).await;
    for text in [changed, "this is not a lock".to_owned()] {
        let mut with = Map::new();
        with.insert(
            "lock".into(),
            json!({"format": lock["format"], "text": text}),
        );
        let error = client
            .err("environment/create", create_params(&f, "tampered", with))
            .await;
        match code(&error) {
            -31004 => assert_eq!(error["data"]["reason"], "install-failed", "{error}"),
            -32602 => assert!(
                text.starts_with("this"),
                "only text that doesn't parse: {error}"
            ),
            other => panic!("{other}: {error}"),
        }
        assert_eq!(client.ok("environment/list", json!(null)).await, before);
    }
    let leftovers = std::fs::read_dir(f.state_dir.join("environments"))
        .map(|entries| entries.count())
        .unwrap_or(0);
    assert_eq!(leftovers, 1, "only the original is on disk");
}

async fn lock_errors_are_31001_and_32602(f: Fixture) {
    let Some(mut client) = locking_client(&f).await else {
        return;
    };
    let unknown = client
        .err("environment/lock", json!({"id": "env-000000000000"}))
        .await;
    assert_eq!(code(&unknown), -31001, "{unknown}");
    let mut both = Map::new();
    both.insert("packages".into(), json!(["wsp-kit-alpha"]));
    both.insert("lock".into(), json!({"format": "pylock.toml", "text": ""}));
    let error = client
        .err("environment/create", create_params(&f, "both", both))
        .await;
    assert_eq!(code(&error), -32602, "{error}");
    let mut odd = Map::new();
    odd.insert(
        "lock".into(),
        json!({"format": "requirements.txt", "text": ""}),
    );
    let error = client
        .err("environment/create", create_params(&f, "odd", odd))
        .await;
    assert_eq!(code(&error), -32602, "{error}");
    assert_eq!(client.ok("environment/list", json!(null)).await, json!([]));
}
