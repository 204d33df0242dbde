//! Every CLI command against a running `wsp serve --listen unix:PATH` with `--connect`: what a
//! spawned server does, the shared one does; `python list` and `create` without `--python` ask
//! the server which interpreters it has.

use serde_json::Value;

use crate::install_support::wheels;
use crate::support::without_managed_pythons;
use crate::unix_peer::{cli, Listening};

#[tokio::test]
async fn every_command_works_over_connect() {
    let server = Listening::start(&[]).await;
    let address = format!("unix:{}", server.socket.display());
    let links = tempfile::tempdir().expect("a temp dir");
    wheels(links.path());
    let links = links.path().to_str().expect("a UTF-8 path").to_owned();
    let run = |args: Vec<&str>| {
        let mut all = vec!["--connect", &address];
        all.extend(args);
        let owned: Vec<String> = all.into_iter().map(str::to_owned).collect();
        async move {
            let args: Vec<&str> = owned.iter().map(String::as_str).collect();
            cli(&args, &[]).await
        }
    };
    let ok = |(status, out, err): (i32, String, String), what: &str| {
        assert_eq!(status, 0, "{what}: {out}{err}");
        out
    };

    let created = ok(
        run(vec!["--json", "create", "shared", "--python", "3.12"]).await,
        "create",
    );
    let created: Value = serde_json::from_str(created.trim()).expect("JSON");
    let id = created["id"].as_str().expect("an id").to_owned();
    let listed = ok(run(vec!["list"]).await, "list");
    assert!(
        listed.contains(&id) && listed.contains("shared"),
        "{listed}"
    );

    let install = [
        "install",
        "shared",
        "wsp-beta",
        "--find-links",
        &links,
        "--no-index",
    ];
    let installed = ok(run(install.to_vec()).await, "install");
    assert!(installed.contains("wsp-beta"), "{installed}");
    let got = ok(run(vec!["--json", "get", &id]).await, "get");
    let got: Value = serde_json::from_str(got.trim()).expect("JSON");
    let names: Vec<&str> = got["installed_packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(
        names.contains(&"wsp-alpha") && names.contains(&"wsp-beta"),
        "{got}"
    );
    ok(
        run(vec!["uninstall", "shared", "wsp-beta"]).await,
        "uninstall",
    );

    let code = "import sys, wsp_alpha; print(sys.prefix); sys.exit(5)";
    let (status, out, err) = run(vec!["exec", "shared", "--", "python", "-c", code]).await;
    assert_eq!(status, 5, "the command's status passes through: {err}");
    let prefix = got["extra"]["path"].as_str().expect("extra.path");
    assert_eq!(
        std::fs::canonicalize(out.trim()).expect("sys.prefix exists"),
        std::fs::canonicalize(prefix).expect("the environment exists"),
        "{err}"
    );
    let raw = ok(
        run(vec![
            "call",
            "environment/get",
            &format!(r#"{{"id":"{id}"}}"#),
        ])
        .await,
        "call",
    );
    assert!(raw.contains(&id), "{raw}");

    ok(run(vec!["delete", "--yes", "shared"]).await, "delete");
    let listed = ok(run(vec!["list"]).await, "list after delete");
    assert!(!listed.contains(&id), "{listed}");
    server.terminate().await;
}

#[tokio::test]
async fn python_list_and_the_default_python_are_the_servers() {
    let temp = tempfile::tempdir().expect("a temp dir");
    let empty = temp.path().join("empty");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let configured = wsp_testing::conda::pyenv_root()
        .expect("pyenv")
        .join("versions/3.12.1/bin/python3.12");
    let configured = configured.to_str().expect("a UTF-8 path");
    let env = without_managed_pythons(&empty);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let server = Listening::start_with_env(&["--python", configured], &env).await;
    let address = format!("unix:{}", server.socket.display());
    let json = |(status, out, err): (i32, String, String)| -> Value {
        assert_eq!(status, 0, "{out}{err}");
        serde_json::from_str(out.trim()).expect("JSON")
    };

    // This machine's newest is pyenv's, which the server doesn't see.
    let state = temp.path().join("state");
    let state = state.to_str().expect("a UTF-8 path");
    let here = json(cli(&["--state-dir", state, "python", "list", "--json"], &[]).await);
    assert_eq!(here[0]["source"], "pyenv", "{here}");
    assert_ne!(here[0]["version"], "3.12.1", "{here}");

    let listed = json(cli(&["--connect", &address, "python", "list", "--json"], &[]).await);
    let listed = listed.as_array().expect("an array");
    assert_eq!(
        listed[0],
        serde_json::json!({"version": "3.12.1", "source": "configured", "path": configured})
    );
    assert!(
        listed.iter().all(|python| python["source"] != "pyenv"),
        "{listed:?}"
    );
    let (status, table, err) = cli(&["--connect", &address, "python", "list"], &[]).await;
    assert_eq!(status, 0, "{err}");
    let lines: Vec<Vec<&str>> = table
        .lines()
        .map(|line| line.split_whitespace().collect())
        .collect();
    assert_eq!(lines[0], ["VERSION", "SOURCE", "PATH"], "{table}");
    assert_eq!(lines[1], ["3.12.1", "configured", configured], "{table}");
    assert_eq!(lines.len(), listed.len() + 1, "{table}");

    let (status, out, err) = cli(&["--connect", &address, "--json", "create", "dflt"], &[]).await;
    let created = json((status, out, err.clone()));
    assert_eq!(created["python_version"], "3.12", "{created}");
    assert_eq!(
        created["extra"]["python_full_version"], "3.12.1",
        "{created}"
    );
    let said = format!("using 3.12, the newest the server lists (3.12.1 at {configured})");
    assert!(err.contains(&said), "{err}");
    server.terminate().await;

    // A conda server's creates take Python from its channels: the list says nothing of them.
    let conda = Listening::start_with_env(&["--backend", "conda"], &env).await;
    let address = format!("unix:{}", conda.socket.display());
    let (status, _, err) = cli(&["--connect", &address, "create", "no-python"], &[]).await;
    assert_eq!(status, 2, "{err}");
    assert!(err.contains("installs Python from its channels"), "{err}");
    conda.terminate().await;
}
