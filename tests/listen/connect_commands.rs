//! Every CLI command against a running `wsp serve --listen unix:PATH` with `--connect`: what a
//! spawned server does, the shared one does, and the commands that look at this machine rather
//! than at a server say so.

use serde_json::Value;

use crate::install_support::wheels;
use crate::listen::{cli, Listening};

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

    // These read this machine, which need not be the server's: a usage error saying so.
    for local in [vec!["python", "list"], vec!["create", "no-python"]] {
        let (status, _, err) = run(local.clone()).await;
        assert_eq!(status, 2, "{local:?}: {err}");
        assert!(err.contains("--connect"), "{local:?}: {err}");
    }

    ok(run(vec!["delete", "--yes", "shared"]).await, "delete");
    let listed = ok(run(vec!["list"]).await, "list after delete");
    assert!(!listed.contains(&id), "{listed}");
    server.terminate().await;
}
