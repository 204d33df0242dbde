//! `environment/lock` on conda prefixes, offline on a local channel: the explicit spec names
//! each package's URL with its hash and recreates an equal environment; a tampered hash fails
//! with `-31004 install-failed` and leaves nothing; a prefix pip installed into is refused with
//! `lock-unsupported`, naming what pip installed.

use std::path::Path;

use serde_json::json;
use wsp_testing::conda::{build_local_channel_with, CondaPackage, PythonBuild};

use crate::install_support::{
    answer, create_and_lock, environments_on_disk, installed, ok, wheels,
};
use crate::support::{error_code, Server};

/// A conda server on `state` over a local channel holding Python 3.12.1 and `wsp-demo` 1.0
/// (and Python 3.11.7 too, `with_311`).
async fn conda_server_with(temp: &Path, state: &Path, with_311: bool) -> Server {
    let mut builds = vec![PythonBuild::from_pyenv("3.12.1").expect("pyenv has Python 3.12.1")];
    if with_311 {
        builds.push(PythonBuild::from_pyenv("3.11.7").expect("pyenv has Python 3.11.7"));
    }
    let packages = [CondaPackage::new("wsp-demo", "1.0")];
    let channel = build_local_channel_with(&temp.join("channel"), &builds, &packages).unwrap();
    let args = ["--backend", "conda", "--channel", channel.as_str()];
    let mut server = Server::start_in(state, &args);
    server.initialize().await;
    server
}

async fn conda_server(temp: &Path, state: &Path) -> Server {
    conda_server_with(temp, state, false).await
}

#[tokio::test]
async fn an_explicit_spec_recreates_the_prefix_and_a_tampered_one_changes_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    let mut server = conda_server(temp.path(), &state).await;
    let params = json!({"name": "original", "python_version": "3.12", "packages": ["wsp-demo"]});
    let (original, lock) = create_and_lock(&mut server, params).await;
    assert_eq!(lock["format"], "conda-explicit", "{lock}");
    let text = lock["text"].as_str().expect("text").to_owned();
    assert!(text.lines().any(|line| line == "@EXPLICIT"), "{text}");
    let demo = text
        .lines()
        .find(|line| line.contains("wsp-demo-1.0"))
        .unwrap_or_else(|| panic!("no wsp-demo line in\n{text}"));
    let (url, hash) = demo.split_once('#').expect("a URL with #hash");
    assert!(url.starts_with("file://"), "{demo}");
    assert_eq!(hash.len(), 64, "a sha256: {demo}");
    let path = url.strip_prefix("file://").expect("a local file");
    assert_eq!(
        wsp_install::sources::sha256_of(Path::new(path)).unwrap(),
        hash
    );

    let params = json!({"name": "again", "python_version": "3.12", "lock": lock});
    let again = ok(&mut server, 3, "environment/create", params).await;
    assert_eq!(installed(&again), installed(&original), "{again}");

    let before = ok(&mut server, 4, "environment/list", json!(null)).await;
    let wrong = if hash.starts_with('0') { "1" } else { "0" };
    let tampered = text.replace(hash, &format!("{wrong}{}", &hash[1..]));
    let params = json!({"name": "tampered", "python_version": "3.12",
        "lock": {"format": "conda-explicit", "text": tampered}});
    let refused = answer(&mut server, 5, "environment/create", params).await;
    assert_eq!(error_code(&refused), -31004, "{refused}");
    assert_eq!(refused["error"]["data"]["reason"], "install-failed");
    assert_eq!(environments_on_disk(&state), 2, "nothing left behind");
    let after = ok(&mut server, 6, "environment/list", json!(null)).await;
    assert_eq!(after, before, "the index is unchanged");
    server.finish().await;
}

#[tokio::test]
async fn a_prefix_pip_installed_into_cannot_be_locked() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    let links = temp.path().join("wheels");
    wheels(&links);
    let mut server = conda_server(temp.path(), &state).await;
    let params = json!({"name": "mixed", "python_version": "3.12"});
    let (created, clean) = create_and_lock(&mut server, params).await;
    assert_eq!(
        clean["format"], "conda-explicit",
        "a conda-only prefix locks: {clean}"
    );

    let uv = wsp_install::find_uv(None).expect("uv on PATH");
    let python = created["interpreter_path"].as_str().unwrap();
    let argv = json!([
        uv,
        "pip",
        "install",
        "--python",
        python,
        "--no-index",
        "--find-links",
        links,
        "wsp-gamma"
    ]);
    let ran = ok(
        &mut server,
        3,
        "environment/execute",
        json!({"id": created["id"], "argv": argv}),
    )
    .await;
    assert_eq!(ran["exit_code"], 0, "{ran}");

    let refused = answer(
        &mut server,
        4,
        "environment/lock",
        json!({"id": created["id"]}),
    )
    .await;
    assert_eq!(error_code(&refused), -31004, "{refused}");
    assert_eq!(refused["error"]["data"]["reason"], "lock-unsupported");
    let detail = refused["error"]["data"]["detail"].as_str().unwrap();
    assert!(
        detail.contains("wsp_gamma 1.0"),
        "names what pip installed: {detail}"
    );
    server.finish().await;
}

#[tokio::test]
async fn a_lock_of_another_python_than_the_one_asked_for_changes_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    let mut server = conda_server_with(temp.path(), &state, true).await;
    let params = json!({"name": "on-312", "python_version": "3.12"});
    let (_, lock) = create_and_lock(&mut server, params).await;
    let params = json!({"name": "on-311", "python_version": "3.11", "lock": lock});
    let refused = answer(&mut server, 3, "environment/create", params).await;
    assert_eq!(error_code(&refused), -31004, "{refused}");
    assert_eq!(refused["error"]["data"]["reason"], "install-failed");
    let detail = refused["error"]["data"]["detail"].as_str().unwrap();
    assert!(detail.contains("python 3.12.1"), "{detail}");
    assert_eq!(environments_on_disk(&state), 1, "nothing left behind");
    server.finish().await;
}
