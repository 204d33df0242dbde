//! The environment methods through the real `wsp serve` binary: every pyenv Python, several
//! servers on one state directory, crashes, the env-in-use rule and undeletable leftovers.

use std::path::PathBuf;

use crate::support::{error_code, request, Server};
use serde_json::{json, Value};

fn pyenv_versions() -> Vec<String> {
    let root = std::env::var("PYENV_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from("/root/.pyenv"));
    let mut versions: Vec<String> = std::fs::read_dir(root.join("versions"))
        .expect("pyenv versions are installed")
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|v| {
            v.starts_with("3.")
                && v.split('.').all(|p| p.parse::<u32>().is_ok())
                && v.split('.').count() == 3
        })
        .collect();
    versions.sort();
    versions
}

#[tokio::test]
async fn every_pyenv_python_from_3_6_is_available_by_minor_and_by_patch() {
    let versions = pyenv_versions();
    for minor in 6..=13 {
        assert!(
            versions
                .iter()
                .any(|v| v.starts_with(&format!("3.{minor}."))),
            "3.{minor} is installed: {versions:?}"
        );
    }
    let mut server = Server::start(&[]);
    server.initialize().await;
    let mut id = 1;
    for version in &versions {
        let minor = version.rsplit_once('.').unwrap().0.to_owned();
        for requested in [version.clone(), minor] {
            id += 1;
            let name = format!("py-{requested}");
            let created = server
                .call(
                    id,
                    "environment/create",
                    json!({"name": name, "python_version": requested}),
                )
                .await;
            let result = &created["result"];
            assert_eq!(result["python_version"], requested.as_str(), "{created}");
            assert_eq!(
                result["extra"]["python_full_version"],
                version.as_str(),
                "{created}"
            );
            id += 1;
            let ran = server
                .call(id, "environment/execute", json!({"id": result["id"], "argv": ["python", "-c", "import sys; print(sys.prefix == sys.base_prefix)"]}))
                .await;
            assert_eq!(
                ran["result"]["stdout"], "False\n",
                "a real venv for {requested}: {ran}"
            );
        }
    }
}

#[tokio::test]
async fn twenty_concurrent_creates_with_one_name_have_one_winner() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let mut bytes = Vec::new();
    for id in 1..=20 {
        bytes.extend(crate::support::frame(
            &request(
                id,
                "environment/create",
                json!({"name": "same", "python_version": "3.12"}),
            )
            .to_string(),
        ));
    }
    server.send_raw(&bytes).await;
    let mut winners = 0;
    for _ in 1..=20 {
        let response = server.recv().await;
        match response.get("result") {
            Some(_) => winners += 1,
            None => assert_eq!(error_code(&response), -31002, "{response}"),
        }
    }
    assert_eq!(winners, 1);
    let listed = server.call(30, "environment/list", json!(null)).await;
    assert_eq!(listed["result"].as_array().unwrap().len(), 1);
}

/// Two initialized servers on one state directory.
async fn two_servers(state: &std::path::Path) -> (Server, Server) {
    let mut a = Server::start_in(state, &[]);
    let mut b = Server::start_in(state, &[]);
    a.initialize().await;
    b.initialize().await;
    (a, b)
}

#[tokio::test]
async fn two_servers_share_one_state_directory() {
    let temp = tempfile::tempdir().unwrap();
    let (mut a, mut b) = two_servers(&temp.path().join("state")).await;
    let id = a.create_environment(1, "shared").await["id"].clone();
    let seen = b.call(1, "environment/get", json!({"id": id})).await;
    assert_eq!(seen["result"]["name"], "shared", "{seen}");
    let conflict = b
        .call(
            2,
            "environment/create",
            json!({"name": "shared", "python_version": "3.11"}),
        )
        .await;
    assert_eq!(
        error_code(&conflict),
        -31002,
        "names are unique across servers"
    );

    // Concurrent same-name creates from both servers: one winner overall.
    a.send(&request(
        3,
        "environment/create",
        json!({"name": "raced", "python_version": "3.12"}),
    ))
    .await;
    b.send(&request(
        3,
        "environment/create",
        json!({"name": "raced", "python_version": "3.12"}),
    ))
    .await;
    let outcomes = [a.recv().await, b.recv().await];
    assert_eq!(
        outcomes
            .iter()
            .filter(|r| r.get("result").is_some())
            .count(),
        1,
        "{outcomes:?}"
    );

    let deleted = b.call(4, "environment/delete", json!({"id": id})).await;
    assert_eq!(deleted["result"]["id"], id);
    let gone = a.call(5, "environment/get", json!({"id": id})).await;
    assert_eq!(error_code(&gone), -31001);
}

/// A server that lists often reads the watch of its store once per batch of requests read
/// together; a list it reads after another server's create has finished still sees it.
#[tokio::test]
async fn a_list_read_after_another_servers_create_sees_it() {
    let temp = tempfile::tempdir().unwrap();
    let (mut a, mut b) = two_servers(&temp.path().join("state")).await;
    let mut created = Vec::new();
    for round in 0..4 {
        let burst: Vec<Value> = (0..32)
            .map(|n| request(1000 + round * 100 + n, "environment/list", json!(null)))
            .collect();
        b.send(&Value::Array(burst)).await;
        let answers = b.recv().await;
        assert_eq!(answers.as_array().map(Vec::len), Some(32), "{answers}");
        let id = a.create_environment(round, &format!("seen-{round}")).await["id"].clone();
        created.push(id);
        let listed = b.call(9000 + round, "environment/list", json!(null)).await;
        let ids = crate::listed_ids(&listed);
        assert_eq!(ids.len(), created.len(), "round {round}: {listed}");
        assert!(
            created.iter().all(|id| ids.contains(&id)),
            "round {round}: {listed}"
        );
    }
}

#[tokio::test]
async fn a_command_cannot_delete_the_environment_it_runs_in() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let created = server
        .call(
            1,
            "environment/create",
            json!({"name": "home", "python_version": "3.12"}),
        )
        .await;
    let id = created["result"]["id"].as_str().unwrap().to_owned();
    let wsp = env!("CARGO_BIN_EXE_wsp");
    let state = server.state_dir.display().to_string();
    let params = json!({"id": id}).to_string();
    let argv = json!([
        wsp,
        "--state-dir",
        state,
        "call",
        "environment/delete",
        params
    ]);
    let ran = server
        .call(2, "environment/execute", json!({"id": id, "argv": argv}))
        .await;
    let result = &ran["result"];
    assert_eq!(result["exit_code"], 1, "the nested delete fails: {ran}");
    let stderr = result["stderr"].as_str().unwrap();
    assert!(
        stderr.contains("-31004") && stderr.contains("env-in-use") && stderr.contains(&id),
        "{stderr}"
    );
    // The command can still get its own environment.
    let params = json!({"id": id}).to_string();
    let argv = json!([
        wsp,
        "--state-dir",
        state,
        "--json",
        "call",
        "environment/get",
        params
    ]);
    let ran = server
        .call(3, "environment/execute", json!({"id": id, "argv": argv}))
        .await;
    assert_eq!(ran["result"]["exit_code"], 0, "{ran}");
    let still = server.call(4, "environment/get", json!({"id": id})).await;
    assert_eq!(still["result"]["id"], id.as_str());
}

#[tokio::test]
async fn undeletable_files_warn_and_are_swept_later() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let created = server
        .call(
            1,
            "environment/create",
            json!({"name": "sticky", "python_version": "3.12"}),
        )
        .await;
    let id = created["result"]["id"].clone();
    let root = PathBuf::from(created["result"]["extra"]["path"].as_str().unwrap());
    let pinned = root.join("pinned");
    std::fs::write(&pinned, "x").unwrap();
    let chattr = std::process::Command::new("chattr")
        .arg("+i")
        .arg(&pinned)
        .status()
        .expect("chattr runs");
    assert!(
        chattr.success(),
        "chattr +i needs root and a file system that supports it"
    );
    let deleted = server
        .call(2, "environment/delete", json!({"id": id}))
        .await;
    assert_eq!(
        deleted["result"]["id"], id,
        "delete still succeeds: {deleted}"
    );
    let gone = server.call(3, "environment/get", json!({"id": id})).await;
    assert_eq!(error_code(&gone), -31001);
    let trash = server.state_dir.join("trash");
    let leftovers: Vec<PathBuf> = std::fs::read_dir(&trash)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
    for entry in walk(&leftovers[0]) {
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&entry)
            .status();
    }
    let next = server
        .call(
            4,
            "environment/create",
            json!({"name": "next", "python_version": "3.12"}),
        )
        .await;
    assert!(next.get("result").is_some(), "{next}");
    assert_eq!(
        std::fs::read_dir(&trash).unwrap().count(),
        0,
        "the next create swept the leftovers"
    );
    let (_, log) = server.finish().await;
    let leftover_name = leftovers[0].display().to_string();
    let warning = log
        .lines()
        .find(|line| line.contains("could not delete the files"))
        .unwrap_or_else(|| panic!("a warning about the leftovers: {log}"));
    assert!(
        warning.contains(&leftover_name),
        "the warning names where the leftovers are, {leftover_name}: {warning}"
    );
    assert!(
        warning.contains(&root.display().to_string()),
        "the warning names the environment's own directory, {}: {warning}",
        root.display()
    );
}

fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_owned()];
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_symlink() {
                continue;
            }
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path);
            }
        }
    }
    out
}

#[tokio::test]
async fn sigkill_during_create_leaves_a_consistent_index() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    let mut expected: Vec<Value> = Vec::new();
    for round in 0..16u64 {
        let mut server = Server::start_in(&state, &[]);
        server.initialize().await;
        let listed = server.call(1, "environment/list", json!(null)).await;
        let listed = listed["result"].as_array().unwrap().clone();
        for summary in &listed {
            let got = server
                .call(2, "environment/get", json!({"id": summary["id"]}))
                .await;
            assert!(
                got.get("result").is_some(),
                "round {round}: a listed environment is whole: {got}"
            );
            let ran = server
                .call(
                    3,
                    "environment/execute",
                    json!({"id": summary["id"], "argv": ["python", "-c", "print(1)"]}),
                )
                .await;
            assert_eq!(ran["result"]["stdout"], "1\n", "round {round}: {ran}");
        }
        for known in &expected {
            assert!(
                listed.contains(known),
                "round {round}: a committed environment vanished: {known}"
            );
        }
        expected = listed;
        server
            .send(&request(
                10,
                "environment/create",
                json!({"name": format!("crash-{round}"), "python_version": "3.12"}),
            ))
            .await;
        // Kill at a different instant each round, from at once to after the create finished:
        // the delay picks the instant, it does not wait for anything.
        if round % 4 == 3 {
            let _ = server.recv().await;
        } else {
            tokio::time::sleep(std::time::Duration::from_millis(round * 6)).await;
        }
        server.child.start_kill().unwrap();
        server.child.wait().await.unwrap();
    }
    let mut server = Server::start_in(&state, &[]);
    server.initialize().await;
    let listed = server.call(1, "environment/list", json!(null)).await["result"]
        .as_array()
        .unwrap()
        .len();
    let created = server
        .call(
            2,
            "environment/create",
            json!({"name": "after", "python_version": "3.12"}),
        )
        .await;
    assert!(created.get("result").is_some());
    // Counted once the server has exited, which removes its spare environment (made after
    // the create, in the background) first.
    server.finish().await;
    let dirs = std::fs::read_dir(state.join("environments"))
        .unwrap()
        .count();
    assert_eq!(
        dirs,
        listed + 1,
        "the create swept every partial environment"
    );
}
