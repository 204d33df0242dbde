//! `environment/install` and `environment/uninstall` over the real binary, with uv and with pip
//! (run from outside the environment), from distributions the tests build: local
//! `find_links`, a simple index on loopback, failures that change nothing, upgrades, and the
//! server's defaults.

use crate::install_support::{
    call_collecting, create, installed, ok, python, venv_server, version_of, wheels, IndexServer,
    With,
};
use crate::support::error_code;
use serde_json::json;
use wsp_testing::Distribution;

#[tokio::test]
async fn installs_from_find_links_show_at_once_and_import() {
    for with in With::BOTH {
        let temp = tempfile::tempdir().unwrap();
        let links = temp.path().join("wheels");
        wheels(&links);
        let mut server = venv_server(&temp.path().join("state"), with, &[]);
        let init = server.initialize().await;
        let features = init["result"]["features"].as_array().expect("features");
        assert!(features.contains(&json!("environment/install")), "{init}");
        let methods = init["result"]["methods"].as_array().expect("methods");
        assert!(methods.contains(&json!("environment/install")));
        assert!(methods.contains(&json!("environment/uninstall")));
        let env = create(&mut server, 1, "inst").await["id"].clone();
        let params = json!({"id": env, "packages": ["wsp-beta"],
            "find_links": [links.display().to_string()], "no_index": true});
        let details = ok(&mut server, 2, "environment/install", params).await;
        assert_eq!(details["id"], env);
        assert_eq!(
            version_of(&details, "wsp-alpha").as_deref(),
            Some("2.0"),
            "{with:?}"
        );
        assert_eq!(version_of(&details, "wsp-beta").as_deref(), Some("1.0"));
        let got = ok(&mut server, 3, "environment/get", json!({"id": env})).await;
        assert_eq!(installed(&got), installed(&details));
        let imported = python(
            &mut server,
            4,
            &env,
            "import wsp_alpha, wsp_beta; print(wsp_alpha.VERSION)",
        )
        .await;
        assert_eq!(imported, "2.0");
        assert_eq!(
            version_of(&got, "pip"),
            None,
            "{with:?}: no pip was put into the environment to install with: {got}"
        );
        server.finish().await;
    }
}

#[tokio::test]
async fn installs_from_a_simple_index_on_loopback() {
    for with in With::BOTH {
        let temp = tempfile::tempdir().unwrap();
        let files = wheels(&temp.path().join("built"));
        let index = IndexServer::start(&temp.path().join("index"), &files).await;
        let mut server = venv_server(&temp.path().join("state"), with, &[]);
        server.initialize().await;
        let env = create(&mut server, 1, "indexed").await["id"].clone();
        let params = json!({"id": env, "packages": ["wsp-alpha<2", "wsp-gamma"],
            "index_url": index.url});
        let details = ok(&mut server, 2, "environment/install", params).await;
        assert_eq!(
            version_of(&details, "wsp-alpha").as_deref(),
            Some("1.0"),
            "{with:?}"
        );
        assert_eq!(version_of(&details, "wsp-gamma").as_deref(), Some("1.0"));
        server.finish().await;
    }
}

#[tokio::test]
async fn a_failed_resolution_changes_nothing() {
    for with in With::BOTH {
        let temp = tempfile::tempdir().unwrap();
        let links = temp.path().join("wheels");
        wheels(&links);
        let links = links.display().to_string();
        let mut server = venv_server(&temp.path().join("state"), with, &[]);
        server.initialize().await;
        let env = create(&mut server, 1, "stable").await["id"].clone();
        let first = json!({"id": env, "packages": ["wsp-alpha==1.0"], "find_links": [links],
            "no_index": true});
        let before = ok(&mut server, 2, "environment/install", first).await;
        for (id, packages) in [
            (3, json!(["wsp-gamma", "wsp-missing"])),
            (4, json!(["wsp-alpha==1.0", "wsp-alpha==2.0"])),
            (5, json!(["wsp-gamma", "wsp-alpha>=3"])),
        ] {
            let params = json!({"id": env, "packages": packages, "find_links": [links],
                "no_index": true});
            let (_, answer) = call_collecting(&mut server, id, "environment/install", params).await;
            assert_eq!(error_code(&answer), -31004, "{answer}");
            let data = &answer["error"]["data"];
            assert_eq!(data["reason"], "install-failed");
            let detail = data["detail"].as_str().expect("detail");
            assert!(!detail.is_empty() && detail.len() <= 64 * 1024);
            assert!(
                detail.contains("wsp-"),
                "the installer's own message: {detail}"
            );
            let after = ok(&mut server, 10 + id, "environment/get", json!({"id": env})).await;
            assert_eq!(installed(&after), installed(&before), "{with:?} {packages}");
        }
        server.finish().await;
    }
}

#[tokio::test]
async fn upgrade_installs_the_newest_and_uninstall_ignores_unknown_names() {
    for with in With::BOTH {
        let temp = tempfile::tempdir().unwrap();
        let links = temp.path().join("wheels");
        wheels(&links);
        let links = links.display().to_string();
        let mut server = venv_server(&temp.path().join("state"), with, &[]);
        server.initialize().await;
        let env = create(&mut server, 1, "upgrade").await["id"].clone();
        let install = |packages: serde_json::Value, upgrade: bool| {
            json!({"id": env, "packages": packages, "find_links": [links], "no_index": true,
                   "upgrade": upgrade})
        };
        let old = ok(
            &mut server,
            2,
            "environment/install",
            install(json!(["wsp-alpha==1.0"]), false),
        )
        .await;
        assert_eq!(version_of(&old, "wsp-alpha").as_deref(), Some("1.0"));
        let kept = ok(
            &mut server,
            3,
            "environment/install",
            install(json!(["wsp-alpha"]), false),
        )
        .await;
        assert_eq!(
            version_of(&kept, "wsp-alpha").as_deref(),
            Some("1.0"),
            "{with:?}: satisfied"
        );
        let newer = ok(
            &mut server,
            4,
            "environment/install",
            install(json!(["wsp-alpha"]), true),
        )
        .await;
        assert_eq!(
            version_of(&newer, "wsp-alpha").as_deref(),
            Some("2.0"),
            "{with:?}"
        );
        let params = json!({"id": env, "packages": ["wsp-alpha", "never-installed"]});
        let removed = ok(&mut server, 5, "environment/uninstall", params).await;
        assert_eq!(version_of(&removed, "wsp-alpha"), None, "{with:?}");
        let params = json!({"id": env, "packages": ["never-installed"]});
        let same = ok(&mut server, 6, "environment/uninstall", params).await;
        assert_eq!(installed(&same), installed(&removed));
        let gone = python(
            &mut server,
            7,
            &env,
            "import importlib.util as u; print(u.find_spec('wsp_alpha'))",
        )
        .await;
        assert_eq!(gone, "None");
        server.finish().await;
    }
}

#[tokio::test]
async fn unknown_ids_and_bad_params_are_refused_before_anything_runs() {
    let temp = tempfile::tempdir().unwrap();
    let mut server = venv_server(temp.path(), With::Uv, &[]);
    server.initialize().await;
    let (_, answer) = call_collecting(
        &mut server,
        1,
        "environment/install",
        json!({"id": "env-000000000000", "packages": ["x"]}),
    )
    .await;
    assert_eq!(error_code(&answer), -31001);
    assert_eq!(answer["error"]["data"]["id"], "env-000000000000");
    let (_, answer) = call_collecting(
        &mut server,
        2,
        "environment/uninstall",
        json!({"id": "env-000000000000", "packages": ["x"]}),
    )
    .await;
    assert_eq!(error_code(&answer), -31001);
    let (_, answer) = call_collecting(
        &mut server,
        3,
        "environment/install",
        json!({"id": "env-000000000000", "packages": [], "find_links": ["rel"], "upgrade": "y"}),
    )
    .await;
    assert_eq!(error_code(&answer), -32602);
    let fields: Vec<&str> = answer["error"]["data"]["violations"]
        .as_array()
        .expect("violations")
        .iter()
        .map(|v| v["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["packages", "find_links[0]", "upgrade"]);
    server.finish().await;
}

#[tokio::test]
async fn serve_options_set_every_install_default() {
    let temp = tempfile::tempdir().unwrap();
    let links = temp.path().join("wheels");
    wheels(&links);
    let mut files = wheels(&temp.path().join("built"));
    let only_indexed = Distribution::new("wsp-delta", "1.0");
    files.push(
        only_indexed
            .write_wheel(&temp.path().join("built"))
            .unwrap(),
    );
    let index = IndexServer::start(&temp.path().join("index"), &files).await;
    let links_text = links.display().to_string();
    let args = ["--find-links", links_text.as_str(), "--no-index"];
    let mut server = venv_server(&temp.path().join("state"), With::Uv, &args);
    server.initialize().await;
    let env = create(&mut server, 1, "defaults").await["id"].clone();
    let params = json!({"id": env, "packages": ["wsp-gamma"]});
    let details = ok(&mut server, 2, "environment/install", params).await;
    assert_eq!(version_of(&details, "wsp-gamma").as_deref(), Some("1.0"));
    // A request's own index replaces the server's `--no-index`.
    let params = json!({"id": env, "packages": ["wsp-delta"]});
    let (_, answer) = call_collecting(&mut server, 3, "environment/install", params).await;
    assert_eq!(error_code(&answer), -31004, "no index by default: {answer}");
    let params = json!({"id": env, "packages": ["wsp-delta"], "no_index": false,
        "index_url": index.url});
    let details = ok(&mut server, 4, "environment/install", params).await;
    assert_eq!(version_of(&details, "wsp-delta").as_deref(), Some("1.0"));
    server.finish().await;
}
