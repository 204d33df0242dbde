//! `wsp exec` runs where the user is, as `uv run` does: the server the CLI spawns admits the
//! directory it was started in and the command runs there with the environment's interpreter;
//! a relative `--cwd` is taken from there too. A server admits a `cwd` outside the environment
//! only inside its `--allow-cwd` directories, and never for a sandboxed command.

use std::path::Path;

use serde_json::json;

use crate::run::{text, wsp_in};
use crate::support::{error_code, Server};

#[test]
fn a_script_in_the_project_directory_runs_with_the_environments_python() {
    let temp = tempfile::tempdir().unwrap();
    let (project, state) = (temp.path().join("project"), temp.path().join("state"));
    std::fs::create_dir_all(project.join("sub")).unwrap();
    let script = "import os, sys; print(sys.prefix); print(os.getcwd())";
    std::fs::write(project.join("script.py"), script).unwrap();
    let made = wsp_in(
        &project,
        &state,
        &["--json", "create", "proj", "--python", "3.12"],
    );
    assert!(made.status.success(), "{}", text(&made.stderr));
    let details: serde_json::Value = serde_json::from_slice(&made.stdout).unwrap();
    let prefix = details["extra"]["path"].as_str().unwrap().to_owned();

    let ran = wsp_in(
        &project,
        &state,
        &["exec", "proj", "--", "python", "script.py"],
    );
    assert!(ran.status.success(), "{}", text(&ran.stderr));
    let project = project.canonicalize().unwrap();
    let expected = format!("{prefix}\n{}\n", project.display());
    assert_eq!(text(&ran.stdout), expected);

    let cwd = ["exec", "proj", "--cwd", "sub", "--", "python", "-c"];
    let in_sub = wsp_in(
        &project,
        &state,
        &[&cwd[..], &["import os; print(os.getcwd())"]].concat(),
    );
    assert!(in_sub.status.success(), "{}", text(&in_sub.stderr));
    assert_eq!(
        text(&in_sub.stdout).trim(),
        project.join("sub").display().to_string()
    );
}

#[tokio::test]
async fn a_server_admits_an_outside_cwd_only_in_its_allowed_directories_and_unsandboxed() {
    let temp = tempfile::tempdir().unwrap();
    let allowed = temp.path().join("allowed");
    let other = temp.path().join("other");
    std::fs::create_dir_all(&allowed).unwrap();
    std::fs::create_dir_all(&other).unwrap();
    let allowed = allowed.canonicalize().unwrap();
    let state = temp.path().join("state");

    let mut strict = Server::start_in(&state, &[]);
    let initialized = strict.initialize().await;
    assert_eq!(initialized["result"]["allowed_cwd_roots"], json!([]));
    let created = strict
        .call(
            1,
            "environment/create",
            json!({"name": "e", "python_version": "3.12"}),
        )
        .await;
    let id = created["result"]["id"].clone();
    let run_in = |dir: &Path, sandbox: bool| json!({"id": id, "argv": ["pwd"], "cwd": dir, "sandbox": sandbox});
    let refused = strict
        .call(2, "environment/execute", run_in(&allowed, false))
        .await;
    assert_eq!(
        error_code(&refused),
        -32602,
        "the seed's rule by default: {refused}"
    );
    drop(strict);

    let mut admitting = Server::start_in(&state, &["--allow-cwd", allowed.to_str().unwrap()]);
    let initialized = admitting.initialize().await;
    assert_eq!(
        initialized["result"]["allowed_cwd_roots"],
        json!([allowed.display().to_string()])
    );
    let ran = admitting
        .call(3, "environment/execute", run_in(&allowed, false))
        .await;
    assert_eq!(
        ran["result"]["stdout"],
        format!("{}\n", allowed.display()),
        "{ran}"
    );
    let elsewhere = admitting
        .call(4, "environment/execute", run_in(&other, false))
        .await;
    assert_eq!(error_code(&elsewhere), -32602, "{elsewhere}");
    let sandboxed = admitting
        .call(5, "environment/execute", run_in(&allowed, true))
        .await;
    let code = error_code(&sandboxed);
    assert!(
        code == -32602 || sandboxed["error"]["data"]["reason"] == "sandbox-unavailable",
        "a sandboxed command runs only in its environment: {sandboxed}"
    );
}
