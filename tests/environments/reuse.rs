//! `environment/create` with `reuse` through the real binary: identical creates from several
//! servers on one state directory build one environment; the content key tells apart what
//! differs; a changed environment is not reused; names of other environments are refused.

use std::path::Path;

use serde_json::{json, Value};
use wsp_testing::Distribution;

use crate::support::{error_code, frame, request, Server};

/// A find-links directory holding one wheel, `wsp-reused` 1.0.
fn wheel_dir(scratch: &Path) -> String {
    let dir = scratch.join("wheels");
    std::fs::create_dir_all(&dir).unwrap();
    Distribution::new("wsp-reused", "1.0")
        .write_wheel(&dir)
        .unwrap();
    dir.display().to_string()
}

fn reuse_create(name: &str, python: &str, extra: Value) -> Value {
    let mut params = json!({"name": name, "python_version": python, "reuse": true});
    if let (Value::Object(params), Value::Object(extra)) = (&mut params, extra) {
        params.extend(extra);
    }
    params
}

fn environments_on_disk(state: &Path) -> usize {
    std::fs::read_dir(state.join("environments"))
        .unwrap()
        .count()
}

#[tokio::test]
async fn twenty_identical_reuse_creates_from_four_servers_build_one_environment() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    let wheels = wheel_dir(temp.path());
    // No spares: one made ahead after the build would be one more directory to count.
    let no_spares = ["--spare-environments", "0"];
    let mut servers: Vec<Server> = (0..4)
        .map(|_| Server::start_in(&state, &no_spares))
        .collect();
    for server in &mut servers {
        server.initialize().await;
    }
    for (n, server) in servers.iter_mut().enumerate() {
        let mut bytes = Vec::new();
        for i in 0..5 {
            let params = reuse_create(
                &format!("r-{n}-{i}"),
                "3.12",
                json!({"packages": ["wsp-reused"], "find_links": [wheels], "no_index": true}),
            );
            let message = request(i, "environment/create", params);
            bytes.extend(frame(&message.to_string()));
        }
        server.send_raw(&bytes).await;
    }
    let mut answers = Vec::new();
    for server in &mut servers {
        for _ in 0..5 {
            answers.push(server.recv().await);
        }
    }
    let ids: Vec<&Value> = answers.iter().map(|a| &a["result"]["id"]).collect();
    assert!(ids.iter().all(|id| id.is_string()), "{answers:?}");
    assert!(
        ids.iter().all(|id| *id == ids[0]),
        "one environment: {ids:?}"
    );
    let built = answers
        .iter()
        .filter(|a| a["result"]["extra"]["reused"] == false)
        .count();
    assert_eq!(built, 1, "{answers:?}");
    let reused = answers
        .iter()
        .filter(|a| a["result"]["extra"]["reused"] == true)
        .count();
    assert_eq!(reused, 19);
    for answer in &answers {
        let packages = &answer["result"]["installed_packages"];
        let names: Vec<&str> = packages
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p["name"].as_str())
            .collect();
        assert!(names.contains(&"wsp-reused"), "{answer}");
    }
    assert_eq!(environments_on_disk(&state), 1);
    let listed = servers[0].call(9, "environment/list", json!(null)).await;
    assert_eq!(listed["result"].as_array().unwrap().len(), 1, "{listed}");
}

#[tokio::test]
async fn the_key_tells_apart_python_packages_and_sources_and_a_changed_environment_is_not_reused() {
    let temp = tempfile::tempdir().unwrap();
    let wheels = wheel_dir(temp.path());
    let mut server = Server::start(&[]);
    server.initialize().await;
    let first = server
        .call(
            1,
            "environment/create",
            reuse_create("a", "3.12", json!({})),
        )
        .await;
    let first = &first["result"];
    assert_eq!(first["extra"]["reused"], false, "{first}");
    let full = first["extra"]["python_full_version"].as_str().unwrap();

    // The same interpreter asked for by its full version: reused, with the version it was
    // created with.
    let again = server
        .call(2, "environment/create", reuse_create("b", full, json!({})))
        .await;
    assert_eq!(again["result"]["id"], first["id"], "{again}");
    assert_eq!(again["result"]["extra"]["reused"], true);
    assert_eq!(again["result"]["python_version"], "3.12");
    assert_eq!(again["result"]["name"], "a");

    let other_python = server
        .call(
            3,
            "environment/create",
            reuse_create("c", "3.11", json!({})),
        )
        .await;
    assert_ne!(other_python["result"]["id"], first["id"], "{other_python}");
    let with_package =
        json!({"packages": ["wsp-reused"], "find_links": [wheels], "no_index": true});
    let packaged = server
        .call(
            4,
            "environment/create",
            reuse_create("d", "3.12", with_package),
        )
        .await;
    assert_ne!(packaged["result"]["id"], first["id"], "{packaged}");
    let elsewhere = wheel_dir(&temp.path().join("elsewhere"));
    let other_source =
        json!({"packages": ["wsp-reused"], "find_links": [elsewhere], "no_index": true});
    let sourced = server
        .call(
            5,
            "environment/create",
            reuse_create("e", "3.12", other_source),
        )
        .await;
    assert_ne!(
        sourced["result"]["id"], packaged["result"]["id"],
        "{sourced}"
    );

    // Made without `reuse`, an environment is never answered for one with it.
    let plain = server
        .call(
            6,
            "environment/create",
            json!({"name": "plain", "python_version": "3.12"}),
        )
        .await;
    assert_eq!(plain["result"]["extra"]["reused"], false, "{plain}");
    let still_first = server
        .call(
            7,
            "environment/create",
            reuse_create("f", "3.12", json!({})),
        )
        .await;
    assert_eq!(still_first["result"]["id"], first["id"], "{still_first}");

    // Changed by an install, it is reusable no more.
    let installed = server
        .call(
            8,
            "environment/install",
            json!({"id": first["id"], "packages": ["wsp-reused"], "find_links": [wheels], "no_index": true}),
        )
        .await;
    assert!(installed.get("result").is_some(), "{installed}");
    let rebuilt = server
        .call(
            9,
            "environment/create",
            reuse_create("g", "3.12", json!({})),
        )
        .await;
    assert_eq!(rebuilt["result"]["extra"]["reused"], false, "{rebuilt}");
    assert_ne!(rebuilt["result"]["id"], first["id"]);
    assert_eq!(rebuilt["result"]["name"], "g");
}

#[tokio::test]
async fn a_reused_answer_keeps_its_name_and_refuses_the_name_of_another_environment() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    server.create_environment(1, "other").await;
    let first = server
        .call(
            2,
            "environment/create",
            reuse_create("first", "3.12", json!({})),
        )
        .await;
    let taken = server
        .call(
            3,
            "environment/create",
            reuse_create("other", "3.12", json!({})),
        )
        .await;
    assert_eq!(error_code(&taken), -31002, "{taken}");
    let own_name = server
        .call(
            4,
            "environment/create",
            reuse_create("first", "3.12", json!({})),
        )
        .await;
    assert_eq!(
        own_name["result"]["id"], first["result"]["id"],
        "{own_name}"
    );
    assert_eq!(own_name["result"]["extra"]["reused"], true);

    // Deleted, it is built again.
    let deleted = server
        .call(
            5,
            "environment/delete",
            json!({"id": first["result"]["id"]}),
        )
        .await;
    assert!(deleted.get("result").is_some(), "{deleted}");
    let anew = server
        .call(
            6,
            "environment/create",
            reuse_create("first", "3.12", json!({})),
        )
        .await;
    assert_eq!(anew["result"]["extra"]["reused"], false, "{anew}");
    assert_ne!(anew["result"]["id"], first["result"]["id"]);
}

#[tokio::test]
async fn reuse_must_be_a_boolean() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let wrong = server
        .call(
            1,
            "environment/create",
            json!({"name": "x", "python_version": "3.12", "reuse": "yes"}),
        )
        .await;
    assert_eq!(error_code(&wrong), -32602, "{wrong}");
    assert_eq!(wrong["error"]["data"]["violations"][0]["field"], "reuse");
}
