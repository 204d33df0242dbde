//! Installing without a pip in the environment, over the real binary: on the pip path (no uv
//! on the server's `PATH`) pip runs from the seed cache, outside the environment, so a failed
//! install changes nothing even in a fresh environment, and a one-package install adds that
//! package alone (no pip, no setuptools). The same holds with uv and on the uv backend.

use std::path::{Path, PathBuf};

use crate::install_support::{
    call_collecting, create_on, installed, ok, path_without_uv, tree_digest, venv_server, wheels,
    With,
};
use crate::support::{error_code, Server};
use serde_json::{json, Value};

/// Each way a server installs: the venv backend with uv and with pip, the uv backend.
fn servers(state: &Path) -> Vec<(&'static str, Server)> {
    vec![
        (
            "venv with uv",
            venv_server(&state.join("uv"), With::Uv, &[]),
        ),
        (
            "venv with pip",
            venv_server(&state.join("pip"), With::Pip, &[]),
        ),
        (
            "uv backend",
            Server::start_in(&state.join("uv-backend"), &["--backend", "uv"]),
        ),
    ]
}

fn site_packages(env: &Value, version: &str) -> PathBuf {
    let root = PathBuf::from(env["extra"]["path"].as_str().expect("extra.path"));
    root.join(format!("lib/python{version}/site-packages"))
}

fn install_params(env: &Value, links: &Path, packages: &[&str]) -> Value {
    json!({"id": env["id"], "packages": packages,
        "find_links": [links.display().to_string()], "no_index": true})
}

#[tokio::test]
async fn a_failed_install_into_a_fresh_environment_changes_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let links = temp.path().join("wheels");
    wheels(&links);
    for (how, mut server) in servers(&temp.path().join("state")) {
        server.initialize().await;
        // Python 3.11's ensurepip brings setuptools along with pip: both would show.
        let env = create_on(&mut server, 1, "fresh", "3.11").await;
        let site = site_packages(&env, "3.11");
        let before = tree_digest(&site);
        for (id, packages) in [
            (2, ["wsp-gamma", "wsp-missing"]),
            (3, ["wsp-alpha>=3", "wsp-gamma"]),
        ] {
            let params = install_params(&env, &links, &packages);
            let (_, answer) = call_collecting(&mut server, id, "environment/install", params).await;
            assert_eq!(error_code(&answer), -31004, "{how}: {answer}");
            assert_eq!(answer["error"]["data"]["reason"], "install-failed");
            let after = ok(
                &mut server,
                10 + id,
                "environment/get",
                json!({"id": env["id"]}),
            )
            .await;
            assert_eq!(
                installed(&after),
                [],
                "{how}: {packages:?} changed the environment"
            );
            assert_eq!(tree_digest(&site), before, "{how}: site-packages changed");
        }
        server.finish().await;
    }
}

#[tokio::test]
async fn a_one_package_install_adds_that_package_and_its_dependencies_only() {
    let temp = tempfile::tempdir().unwrap();
    let links = temp.path().join("wheels");
    wheels(&links);
    for (how, mut server) in servers(&temp.path().join("state")) {
        server.initialize().await;
        let env = create_on(&mut server, 1, "lean", "3.11").await;
        let params = install_params(&env, &links, &["wsp-gamma"]);
        let details = ok(&mut server, 2, "environment/install", params).await;
        let names = |details: &Value| -> Vec<String> {
            installed(details)
                .into_iter()
                .map(|(name, _)| name)
                .collect()
        };
        assert_eq!(names(&details), ["wsp-gamma"], "{how}");
        let params = install_params(&env, &links, &["wsp-beta"]);
        let details = ok(&mut server, 3, "environment/install", params).await;
        assert_eq!(
            names(&details),
            ["wsp-alpha", "wsp-beta", "wsp-gamma"],
            "{how}"
        );
        let params = json!({"id": env["id"], "packages": ["wsp-gamma"]});
        let details = ok(&mut server, 4, "environment/uninstall", params).await;
        assert_eq!(names(&details), ["wsp-alpha", "wsp-beta"], "{how}");
        server.finish().await;
    }
}

/// The pip-seed cache's entries in `state`.
fn seed_entries(state: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(state.join("cache/pip-seed")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("pip-") && !name.ends_with(".lock"))
        .collect()
}

#[tokio::test]
async fn an_install_without_pip_fills_no_seed_cache_and_one_pip_runs_fills_it() {
    let temp = tempfile::tempdir().unwrap();
    let links = temp.path().join("wheels");
    wheels(&links);
    // A seed cache of this server's own, empty, where other tests share a filled one.
    let state = temp.path().join("state");
    let path = path_without_uv();
    let mut server = Server::start_with_env(&state, &[], &[("PATH", &path)]);
    server.initialize().await;
    let env = create_on(&mut server, 1, "unseeded", "3.12").await;
    let params = install_params(&env, &links, &["wsp-beta"]);
    let details = ok(&mut server, 2, "environment/install", params).await;
    assert_eq!(installed(&details).len(), 2, "{details}");
    let installer = site_packages(&env, "3.12").join("wsp_beta-1.0.dist-info/INSTALLER");
    let installer = std::fs::read_to_string(&installer).expect("INSTALLER");
    assert_eq!(installer.trim(), "wsp", "installed without pip");
    assert_eq!(
        seed_entries(&state),
        Vec::<String>::new(),
        "no pip was made ready"
    );
    // An upgrade is left to pip, which the seed cache then holds.
    let mut params = install_params(&env, &links, &["wsp-alpha"]);
    params["upgrade"] = json!(true);
    let details = ok(&mut server, 3, "environment/install", params).await;
    assert!(
        installed(&details).contains(&("wsp-alpha".to_owned(), "2.0".to_owned())),
        "{details}"
    );
    assert_eq!(seed_entries(&state).len(), 1, "pip was made ready to run");
    server.finish().await;
}
