//! `environment/lock` and `environment/create` with `lock` over the real binary, offline from
//! local wheels: on the venv backend (installing with uv, and with pip) and the uv backend, a
//! lock recreates an environment with equal `installed_packages`; a tampered hash fails with
//! `-31004 install-failed` and leaves nothing behind; `lock` with `packages` is `-32602`. An
//! environment installed from an index (a simple index served on loopback) is locked with
//! that index's files and their hashes, and recreated from it.

use serde_json::json;

use crate::install_support::{
    answer, create_and_lock, environments_on_disk, installed, ok, path_without_uv, venv_server,
    wheels, IndexServer, With,
};
use crate::support::{error_code, Server};

/// The servers under test: a label, the server's extra arguments, and its installer.
/// No spares: a create that takes one makes the next at once, which would be one more
/// directory in the counts of what a refused create leaves.
const SERVERS: [(&str, &[&str], With); 3] = [
    (
        "venv, uv installing",
        &["--spare-environments", "0"],
        With::Uv,
    ),
    (
        "venv, pip installing",
        &["--spare-environments", "0"],
        With::Pip,
    ),
    (
        "uv backend",
        &["--backend", "uv", "--spare-environments", "0"],
        With::Uv,
    ),
];

/// The `sha256` the lock gives the file named `file_name`.
fn sha256_in(lock: &str, file_name: &str) -> String {
    let table: toml::Table = toml::from_str(lock).expect("the lock is TOML");
    let packages = table["packages"].as_array().expect("packages");
    packages
        .iter()
        .flat_map(|package| package.get("wheels").and_then(|w| w.as_array()).cloned())
        .flatten()
        .find(|wheel| wheel.get("name").and_then(|n| n.as_str()) == Some(file_name))
        .and_then(|wheel| wheel["hashes"]["sha256"].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("no sha256 for {file_name} in\n{lock}"))
}

#[tokio::test]
async fn a_lock_recreates_the_environment_offline_and_a_tampered_one_changes_nothing() {
    for (label, args, with) in SERVERS {
        let temp = tempfile::tempdir().unwrap();
        let links = temp.path().join("wheels");
        let files = wheels(&links);
        let state = temp.path().join("state");
        let mut server = venv_server(&state, with, args);
        let initialized = server.initialize().await;
        let features = &initialized["result"]["features"];
        assert!(
            features
                .as_array()
                .unwrap()
                .contains(&json!("environment.lock")),
            "{label}: {features}"
        );

        let params = json!({"name": "original", "python_version": "3.12",
            "packages": ["wsp-beta"], "find_links": [links], "no_index": true});
        let (original, lock) = create_and_lock(&mut server, params).await;
        assert_eq!(lock["format"], "pylock.toml", "{label}: {lock}");
        let text = lock["text"].as_str().expect("text");
        let alpha = files
            .iter()
            .find(|f| f.to_string_lossy().contains("wsp_alpha-2.0"))
            .expect("the alpha 2.0 wheel (what wsp-beta gets)");
        assert!(text.contains(&*alpha.to_string_lossy()), "{label}: {text}");
        let digest = wsp_install::sources::sha256_of(alpha).unwrap();
        let alpha_name = alpha.file_name().unwrap().to_string_lossy();
        assert_eq!(sha256_in(text, &alpha_name), digest, "{label}");

        let params = json!({"name": "again", "python_version": "3.12",
            "lock": lock, "no_index": true});
        let again = answer(&mut server, 3, "environment/create", params).await;
        let again = &again["result"];
        assert_eq!(installed(again), installed(&original), "{label}: {again}");
        assert_eq!(installed(again).len(), 2, "{label}");

        let before = ok(&mut server, 4, "environment/list", json!(null)).await;
        let wrong = if digest.starts_with('0') { "1" } else { "0" };
        let tampered = text.replace(&digest, &format!("{wrong}{}", &digest[1..]));
        let params = json!({"name": "tampered", "python_version": "3.12",
            "lock": {"format": "pylock.toml", "text": tampered}, "no_index": true});
        let refused = answer(&mut server, 5, "environment/create", params).await;
        assert_eq!(error_code(&refused), -31004, "{label}: {refused}");
        assert_eq!(refused["error"]["data"]["reason"], "install-failed");
        let detail = refused["error"]["data"]["detail"].to_string();
        assert!(detail.contains("sha256"), "{label}: {detail}");
        assert_eq!(
            environments_on_disk(&state),
            2,
            "{label}: nothing left behind"
        );
        let after = ok(&mut server, 6, "environment/list", json!(null)).await;
        assert_eq!(after, before, "{label}: the index is unchanged");
        server.finish().await;
    }
}

/// The lock's `[[packages]]` entry for `name`.
fn entry_of(lock: &str, name: &str) -> toml::Value {
    let table: toml::Table = toml::from_str(lock).expect("the lock is TOML");
    table["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .find(|package| package["name"].as_str() == Some(name))
        .unwrap_or_else(|| panic!("no {name} in\n{lock}"))
        .clone()
}

#[tokio::test]
async fn an_index_sourced_lock_lists_the_index_files_with_their_hashes_and_recreates() {
    for (label, args, with) in SERVERS {
        let temp = tempfile::tempdir().unwrap();
        let files = wheels(&temp.path().join("built"));
        let index = IndexServer::start(&temp.path().join("index"), &files).await;
        let state = temp.path().join("state");
        let mut server = venv_server(&state, with, args);
        server.initialize().await;

        let params = json!({"name": "original", "python_version": "3.12",
            "packages": ["wsp-beta"], "index_url": index.url});
        let (original, lock) = create_and_lock(&mut server, params).await;
        let text = lock["text"].as_str().expect("text");
        let alpha = entry_of(text, "wsp-alpha");
        assert_eq!(alpha["version"].as_str(), Some("2.0"), "{label}: {text}");
        assert_eq!(alpha["index"].as_str(), Some(index.url.as_str()), "{label}");
        // uv reports every file of the version on the index, pip the one wheel it would
        // install: here both are the one wheel of wsp-alpha 2.0.
        let wheel = &alpha["wheels"].as_array().expect("wheels")[0];
        let name = "wsp_alpha-2.0-py3-none-any.whl";
        assert_eq!(wheel["name"].as_str(), Some(name), "{label}: {text}");
        let url = wheel["url"].as_str().expect("a url");
        assert!(
            url.starts_with("http://127.0.0.1:") && url.ends_with(name),
            "{url}"
        );
        let built = files.iter().find(|f| f.ends_with(name)).expect("built");
        let digest = wsp_install::sources::sha256_of(built).unwrap();
        assert_eq!(sha256_in(text, name), digest, "{label}");

        let params = json!({"name": "again", "python_version": "3.12", "lock": lock});
        let again = answer(&mut server, 3, "environment/create", params).await;
        assert_eq!(
            installed(&again["result"]),
            installed(&original),
            "{label}: {again}"
        );

        {
            let before = ok(&mut server, 4, "environment/list", json!(null)).await;
            let wrong = if digest.starts_with('0') { "1" } else { "0" };
            let tampered = text.replace(&digest, &format!("{wrong}{}", &digest[1..]));
            let params = json!({"name": "tampered", "python_version": "3.12",
                "lock": {"format": "pylock.toml", "text": tampered}});
            let refused = answer(&mut server, 5, "environment/create", params).await;
            assert_eq!(error_code(&refused), -31004, "{label}: {refused}");
            assert_eq!(refused["error"]["data"]["reason"], "install-failed");
            let detail = refused["error"]["data"]["detail"].to_string();
            // uv: "Hash mismatch"; pip: "... DO NOT MATCH THE HASHES ...".
            assert!(detail.to_lowercase().contains("hash"), "{label}: {detail}");
            assert_eq!(environments_on_disk(&state), 2, "{label}: nothing left");
            let after = ok(&mut server, 6, "environment/list", json!(null)).await;
            assert_eq!(after, before, "{label}: the index is unchanged");
        }
        server.finish().await;
    }
}

#[tokio::test]
async fn what_an_index_cannot_report_is_locked_without_files_and_the_rest_with_them() {
    for (label, args, with) in SERVERS {
        let temp = tempfile::tempdir().unwrap();
        let files = wheels(&temp.path().join("built"));
        let reachable = IndexServer::start(&temp.path().join("a"), &files).await;
        let gone = IndexServer::start(&temp.path().join("b"), &files).await;
        let state = temp.path().join("state");
        crate::support::share_seed_cache(&state);
        // uv gives up on a refused connection at once instead of retrying for seconds, and
        // keeps no index page that it could answer from once the page is gone.
        let path = path_without_uv();
        let mut env = vec![("UV_HTTP_RETRIES", "0"), ("UV_NO_CACHE", "1")];
        if matches!(with, With::Pip) {
            env.push(("PATH", &path));
        }
        let mut server = Server::start_with_env(&state, args, &env);
        server.initialize().await;
        let params = json!({"name": "two-indexes", "python_version": "3.12",
            "packages": ["wsp-beta"], "index_url": reachable.url});
        let created = ok(&mut server, 1, "environment/create", params).await;
        let params = json!({"id": created["id"], "packages": ["wsp-gamma"],
            "index_url": gone.url});
        ok(&mut server, 2, "environment/install", params).await;
        let gone_url = gone.url.clone();
        gone.stop().await;
        // wsp-beta's page is gone from the index that is still there: the two pins of that
        // index fail together; uv is then asked for each on its own, pip (seconds a run) is not.
        std::fs::remove_dir_all(temp.path().join("a/simple/wsp-beta")).expect("the page goes");

        let lock = ok(
            &mut server,
            3,
            "environment/lock",
            json!({"id": created["id"]}),
        )
        .await;
        let text = lock["text"].as_str().expect("text");
        let alpha = entry_of(text, "wsp-alpha");
        assert_eq!(
            alpha["index"].as_str(),
            Some(reachable.url.as_str()),
            "{label}"
        );
        let alpha_files = alpha.get("wheels").and_then(|w| w.as_array()).map(Vec::len);
        match with {
            With::Uv => assert_eq!(alpha_files, Some(1), "{label}: {text}"),
            With::Pip => assert_eq!(alpha_files, None, "{label}: {text}"),
        }
        for (name, index) in [("wsp-beta", &reachable.url), ("wsp-gamma", &gone_url)] {
            let entry = entry_of(text, name);
            assert_eq!(
                entry["index"].as_str(),
                Some(index.as_str()),
                "{label}: {text}"
            );
            assert!(entry.get("wheels").is_none(), "{label}: {text}");
        }
        server.finish().await;
    }
}

#[tokio::test]
async fn lock_with_packages_or_an_unknown_format_is_invalid_params() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    let mut server = venv_server(&state, With::Uv, &[]);
    server.initialize().await;
    let lock = json!({"format": "pylock.toml", "text": "lock-version = \"1.0\"\n"});
    let both = json!({"name": "both", "python_version": "3.12",
        "lock": lock, "packages": ["wsp-alpha"]});
    let refused = answer(&mut server, 1, "environment/create", both).await;
    assert_eq!(error_code(&refused), -32602, "{refused}");
    let violations = refused["error"]["data"]["violations"].to_string();
    assert!(violations.contains("exclusive"), "{violations}");

    let unknown = json!({"name": "odd", "python_version": "3.12",
        "lock": {"format": "poetry.lock", "text": ""}});
    let refused = answer(&mut server, 2, "environment/create", unknown).await;
    assert_eq!(error_code(&refused), -32602, "{refused}");
    assert!(refused["error"]["data"]["violations"]
        .to_string()
        .contains("lock.format"));

    let garbage = json!({"name": "garbage", "python_version": "3.12",
        "lock": {"format": "pylock.toml", "text": "not [ toml"}});
    let refused = answer(&mut server, 3, "environment/create", garbage).await;
    assert_eq!(error_code(&refused), -31004, "{refused}");
    assert_eq!(refused["error"]["data"]["reason"], "install-failed");
    assert_eq!(environments_on_disk(&state), 0, "nothing left behind");
    let listed = ok(&mut server, 4, "environment/list", json!(null)).await;
    assert_eq!(listed, json!([]));
    server.finish().await;
}
