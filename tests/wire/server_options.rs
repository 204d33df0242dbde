//! `wsp serve` options that change behaviour: pip seeding, the stdlib venv mode, JSON logs,
//! extra interpreters, and the uv backend's startup when uv is missing.

use crate::support::{error_code, Server};
use serde_json::{json, Value};

async fn create(server: &mut Server, id: i64, name: &str, version: &str) -> Value {
    let response = server
        .call(
            id,
            "environment/create",
            json!({"name": name, "python_version": version}),
        )
        .await;
    assert!(response.get("result").is_some(), "{response}");
    response["result"].clone()
}

#[tokio::test]
async fn seed_pip_installs_pip_from_a_cache_filled_once() {
    let mut server = Server::start(&["--seed-pip"]);
    server.initialize().await;
    let first = create(&mut server, 1, "one", "3.12").await;
    assert_eq!(first["extra"]["pip_seed"], "cache-filled");
    let second = create(&mut server, 2, "two", "3.12").await;
    assert_eq!(
        second["extra"]["pip_seed"], "cache-hit",
        "the second create reuses the cache"
    );
    assert!(
        second["installed_packages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "pip"),
        "{second}"
    );
    let ran = server
        .call(
            3,
            "environment/execute",
            json!({"id": second["id"], "argv": ["pip", "--version"]}),
        )
        .await;
    let stdout = ran["result"]["stdout"].as_str().unwrap();
    assert!(
        stdout.contains(second["extra"]["path"].as_str().unwrap()),
        "pip runs from the environment: {stdout}"
    );
}

#[tokio::test]
async fn stdlib_mode_runs_python_m_venv() {
    let mut server = Server::start(&["--stdlib-venv"]);
    server.initialize().await;
    let created = create(&mut server, 1, "stdlib", "3.11").await;
    assert_eq!(created["extra"]["venv_writer"], "stdlib");
    let ran = server
        .call(2, "environment/execute", json!({"id": created["id"], "argv": ["python", "-c", "import sys; print(sys.prefix != sys.base_prefix)"]}))
        .await;
    assert_eq!(ran["result"]["stdout"], "True\n");
}

#[tokio::test]
async fn json_logs_are_one_object_a_line_on_stderr() {
    let mut server = Server::start(&["--log-format", "json"]);
    server.initialize().await;
    server.send_raw(b"Content-Length: nope\r\n\r\n").await;
    let response = server.call(1, "environment/list", json!(null)).await;
    assert_eq!(response["result"], json!([]));
    let (_, log) = server.finish().await;
    let lines: Vec<Value> = log
        .lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{line:?} is not JSON: {e}"))
        })
        .collect();
    assert!(
        lines.iter().any(|l| l["fields"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("decode error"))),
        "{log}"
    );
}

#[tokio::test]
async fn an_interpreter_given_by_path_is_offered() {
    let temp = tempfile::tempdir().unwrap();
    let pyenv = std::env::var("PYENV_ROOT").unwrap_or_else(|_| "/root/.pyenv".into());
    // A copy of the pyenv tree under another name is found only through --python. Hard links
    // copy its 9,000 files in a fraction of a second; across file systems, a real copy.
    let hidden = temp.path().join("hidden-3.10");
    let copy = |how: &str| {
        std::process::Command::new("cp")
            .arg(how)
            .arg(format!("{pyenv}/versions/3.10.13"))
            .arg(&hidden)
            .status()
            .unwrap()
            .success()
    };
    let copied = copy("-al") || {
        let _ = std::fs::remove_dir_all(&hidden);
        copy("-a")
    };
    assert!(copied, "the pyenv tree is copied");
    let interpreter = hidden.join("bin/python3.10").display().to_string();
    // No pyenv root and no Python 3.10 on PATH: only --python can offer it.
    let env = [
        ("PYENV_ROOT", "/nonexistent"),
        ("PATH", "/usr/bin:/bin"),
        ("HOME", "/nonexistent"),
    ];
    let state = temp.path().join("state");
    let mut server = Server::start_with_env(&state, &[], &env);
    server.initialize().await;
    let unavailable = server
        .call(
            1,
            "environment/create",
            json!({"name": "configured", "python_version": "3.10"}),
        )
        .await;
    assert_eq!(error_code(&unavailable), -31003, "{unavailable}");
    drop(server);
    let mut server = Server::start_with_env(&state, &["--python", &interpreter], &env);
    server.initialize().await;
    let created = create(&mut server, 1, "configured", "3.10.13").await;
    let base = created["extra"]["base_interpreter"].as_str().unwrap();
    assert!(base.starts_with(&hidden.display().to_string()), "{base}");
}

#[tokio::test]
async fn the_uv_backend_without_uv_starts_and_answers_backend_unavailable() {
    let temp = tempfile::tempdir().unwrap();
    let no_uv = [("PATH", "/usr/bin:/bin")];
    let mut server = Server::start_with_env(temp.path(), &["--backend", "uv"], &no_uv);
    let init = server.initialize().await;
    assert_eq!(init["result"]["backend"], "uv");
    let response = server
        .call(
            1,
            "environment/create",
            json!({"name": "x", "python_version": "3.12"}),
        )
        .await;
    assert_eq!(error_code(&response), -31004);
    assert_eq!(response["error"]["data"]["reason"], "backend-unavailable");
    let (_, log) = server.finish().await;
    assert!(
        log.contains("uv backend is unavailable"),
        "a startup warning: {log}"
    );
}

#[tokio::test]
async fn a_uv_given_that_is_no_uv_is_refused_at_startup_never_ignored() {
    let temp = tempfile::tempdir().unwrap();
    let missing = temp.path().join("no-uv").display().to_string();
    for backend in ["venv", "uv"] {
        let server = Server::start(&["--backend", backend, "--uv", &missing]);
        let (status, log) = server.finish().await;
        assert_ne!(status, 0, "--backend {backend}: {log}");
        let said = format!("--uv {missing} is not an executable file");
        assert!(log.contains(&said), "--backend {backend}: {log}");
    }
}
