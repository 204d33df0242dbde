//! Each environment knows its backend: one state directory holds a venv, a uv and a conda
//! environment, and every server on it serves each with the backend that made it, whatever its
//! own `--backend` (the default for new environments) is. A server that can't run a backend
//! refuses that backend's environments with `backend-unavailable` and never touches them.

use std::path::Path;

use serde_json::{json, Value};
use wsp_testing::conda::{build_local_channel, PythonBuild};

use crate::install_support::path_without_uv;
use crate::support::{error_code, Server};

async fn ok(server: &mut Server, method: &str, params: Value) -> Value {
    let response = server.call(7, method, params).await;
    assert!(response.get("error").is_none(), "{method}: {response}");
    response["result"].clone()
}

/// A server on `state` with `--backend default` and the local channel, initialized, and what
/// its `initialize` answered.
async fn server(state: &Path, default: &str, channel: &str) -> (Server, Value) {
    let args = ["--backend", default, "--channel", channel];
    let mut server = Server::start_in(state, &args);
    let initialized = server.initialize().await;
    (server, initialized)
}

#[tokio::test]
async fn every_server_serves_each_environment_with_the_backend_that_made_it() {
    let temp = tempfile::tempdir().unwrap();
    let builds = [PythonBuild::from_pyenv("3.12.1").expect("pyenv has Python 3.12.1")];
    let channel = build_local_channel(&temp.path().join("channel"), &builds).unwrap();
    let state = temp.path().join("state");

    let (mut maker, initialized) = server(&state, "venv", channel.as_str()).await;
    let backends = &initialized["result"]["backends"];
    assert_eq!(*backends, json!(["conda", "uv", "venv"]), "{initialized}");
    let mut ids = Vec::new();
    for backend in ["venv", "uv", "conda"] {
        let params = json!({"name": backend, "python_version": "3.12", "backend": backend});
        let created = ok(&mut maker, "environment/create", params).await;
        assert_eq!(created["extra"]["backend"], backend, "{created}");
        ids.push(created["id"].clone());
    }
    let by_default = json!({"name": "plain", "python_version": "3.12"});
    let plain = ok(&mut maker, "environment/create", by_default).await;
    assert_eq!(plain["extra"]["backend"], "venv", "the server's default");
    let mut seen_first = Vec::new();
    for id in &ids {
        seen_first.push(ok(&mut maker, "environment/get", json!({"id": id})).await);
    }
    let conda_packages = &seen_first[2]["installed_packages"];
    assert!(
        conda_packages.to_string().contains("\"python\""),
        "the conda backend lists python: {conda_packages}"
    );
    drop(maker);

    for default in ["uv", "conda", "venv"] {
        let (mut other, _) = server(&state, default, channel.as_str()).await;
        for (id, first) in ids.iter().zip(&seen_first) {
            let seen = ok(&mut other, "environment/get", json!({"id": id})).await;
            assert_eq!(&seen, first, "get under --backend {default}");
        }
    }
}

#[tokio::test]
async fn a_backend_this_server_cannot_run_is_refused_and_its_environment_untouched() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    let mut maker = Server::start_in(&state, &["--backend", "uv"]);
    maker.initialize().await;
    let params = json!({"name": "made-by-uv", "python_version": "3.12"});
    let created = ok(&mut maker, "environment/create", params).await;
    let (id, root) = (created["id"].clone(), created["extra"]["path"].clone());
    drop(maker);

    let path = path_without_uv();
    let mut without_uv = Server::start_with_env(&state, &[], &[("PATH", &path)]);
    let initialized = without_uv.initialize().await;
    assert_eq!(initialized["result"]["backends"], json!(["conda", "venv"]));
    for (method, params) in [
        ("environment/get", json!({"id": id})),
        ("environment/execute", json!({"id": id, "argv": ["true"]})),
        (
            "environment/install",
            json!({"id": id, "packages": ["six"]}),
        ),
        (
            "environment/uninstall",
            json!({"id": id, "packages": ["six"]}),
        ),
        ("environment/delete", json!({"id": id})),
        (
            "environment/create",
            json!({"name": "more", "python_version": "3.12", "backend": "uv"}),
        ),
    ] {
        let response = without_uv.call(8, method, params).await;
        assert_eq!(error_code(&response), -31004, "{method}: {response}");
        assert_eq!(response["error"]["data"]["reason"], "backend-unavailable");
        assert_eq!(response["error"]["data"]["backend"], "uv", "{response}");
    }
    let unknown = json!({"name": "x", "python_version": "3.12", "backend": "pixi"});
    let response = without_uv.call(9, "environment/create", unknown).await;
    assert_eq!(response["error"]["data"]["backend"], "pixi", "{response}");
    let listed = ok(&mut without_uv, "environment/list", json!({})).await;
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    let root = Path::new(root.as_str().unwrap());
    assert!(root.join("pyvenv.cfg").is_file(), "the files stay");
}
