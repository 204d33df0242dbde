//! Spare environments (`wsp serve --spare-environments`): a create without packages takes the
//! environment the server made ahead after the last one like it, and answers and writes
//! exactly what it would have without it; spares are never listed, collected or journalled,
//! go away with their server, and a killed server's is swept by the next.
//!
//! The tests sync on the server's debug log lines `a spare environment is ready` and `... is
//! prepared for installs`, read from its stderr as they are written.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::support::{error_code, without_managed_pythons};

mod logged;

use logged::{Logged, READY};

use wsp_testing::entry_names as entries;

fn reservations(state: &Path) -> Value {
    let index = std::fs::read_to_string(state.join("index.json")).expect("index.json");
    let index: Value = serde_json::from_str(&index).expect("JSON");
    index["reservations"].clone()
}

/// Every file under `root`: its mode and its content (a symlink's target), with `root`'s path
/// written `ROOT`.
fn tree(root: &Path) -> BTreeMap<PathBuf, (u32, String)> {
    use std::os::unix::fs::PermissionsExt;
    let mut files = BTreeMap::new();
    let mut todo = vec![root.to_path_buf()];
    let root_text = root.to_str().expect("UTF-8");
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let content = if meta.file_type().is_symlink() {
                format!("-> {}", std::fs::read_link(&path).unwrap().display())
            } else if meta.is_dir() {
                todo.push(path.clone());
                "dir".to_owned()
            } else {
                String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned()
            };
            let relative = path.strip_prefix(root).unwrap().to_path_buf();
            let mode = meta.permissions().mode();
            files.insert(relative, (mode, content.replace(root_text, "ROOT")));
        }
    }
    files
}

/// An answer with its id and its root written `ID` and `ROOT`.
fn anonymous(details: &Value) -> String {
    let id = details["id"].as_str().unwrap();
    let root = details["extra"]["path"].as_str().unwrap();
    details.to_string().replace(root, "ROOT").replace(id, "ID")
}

/// Asserts that the environments of two answers hold the same files, modes and contents
/// (their roots written `ROOT`), leaving out the paths `skipped` says; returns how many files
/// were compared.
fn assert_same_files(
    spared: &Value,
    plain: &Value,
    skipped: fn(&Path) -> bool,
    what: &str,
) -> usize {
    let root = |details: &Value| PathBuf::from(details["extra"]["path"].as_str().unwrap());
    let kept = |root: &Path| -> BTreeMap<PathBuf, (u32, String)> {
        tree(root)
            .into_iter()
            .filter(|(path, _)| !skipped(path))
            .collect()
    };
    let (spared_tree, plain_tree) = (kept(&root(spared)), kept(&root(plain)));
    let names = |tree: &BTreeMap<PathBuf, (u32, String)>| tree.keys().cloned().collect::<Vec<_>>();
    assert_eq!(names(&spared_tree), names(&plain_tree), "{what}");
    for (path, file) in &spared_tree {
        assert_eq!(
            Some(file),
            plain_tree.get(path),
            "{what}: {}",
            path.display()
        );
    }
    spared_tree.len()
}

#[tokio::test]
async fn a_create_from_a_spare_answers_and_writes_what_one_without_does() {
    let temp = tempfile::tempdir().unwrap();
    let (with, without) = (temp.path().join("with"), temp.path().join("without"));
    let mut spared = Logged::start(&with, &[]);
    spared.server.initialize().await;
    spared.create(1, "first", "3.12").await;
    let (spare, prepare) = spared.next_spare_and_if_prepared().await;
    assert!(
        !prepare,
        "a spare made after a create without packages is not prepared"
    );
    let taken = spared.create(2, "the name ✓ 'quoted' $HOME", "3.12").await;
    assert_eq!(taken["id"], spare, "the create took the spare");
    let got = spared
        .server
        .call(3, "environment/get", json!({"id": spare}))
        .await;
    assert_eq!(got["result"]["name"], taken["name"], "{got}");

    let mut plain = Logged::start(&without, &["--spare-environments", "0"]);
    plain.server.initialize().await;
    plain.create(1, "first", "3.12").await;
    let made = plain.create(2, "the name ✓ 'quoted' $HOME", "3.12").await;
    assert_eq!(anonymous(&taken), anonymous(&made));

    let compared = assert_same_files(&taken, &made, |_| false, "the venv backend");
    assert!(compared > 10, "{compared} files");
    let spared_root = PathBuf::from(taken["extra"]["path"].as_str().unwrap());
    let cfg = std::fs::read_to_string(spared_root.join("pyvenv.cfg")).unwrap();
    assert!(
        cfg.contains("prompt = the name ✓ 'quoted' $HOME\n"),
        "{cfg}"
    );
    plain.finish().await;
    spared.finish().await;
}

/// With packages, on the venv backend and on the uv backend (both installing with uv): the
/// spare made after a create that installed is prepared for installs, the next create installs
/// into it, and the answer and the files (bytecode aside) are those of a create without spares.
#[tokio::test]
async fn a_create_with_packages_from_a_spare_answers_and_writes_what_one_without_does() {
    let temp = tempfile::tempdir().unwrap();
    let wheels = temp.path().join("wheels");
    wsp_testing::Distribution::new("wsp-spare-pkg", "1.0")
        .write_wheel(&wheels)
        .unwrap();
    let links = wheels.display().to_string();
    for backend in ["venv", "uv"] {
        let with = temp.path().join(format!("with-{backend}"));
        let without = temp.path().join(format!("without-{backend}"));
        let params = |name: &str| {
            json!({"name": name, "python_version": "3.12", "backend": backend,
                "packages": ["wsp-spare-pkg"], "find_links": [links], "no_index": true})
        };
        let mut spared = Logged::start(&with, &[]);
        spared.server.initialize().await;
        let first = spared
            .server
            .call(1, "environment/create", params("first"))
            .await;
        assert!(first.get("result").is_some(), "{first}");
        let (spare, prepare) = spared.next_spare_and_if_prepared().await;
        assert!(
            prepare,
            "{backend}: a spare made after a create that installed is prepared"
        );
        spared.prepared(&spare).await;
        let taken = spared
            .server
            .call(2, "environment/create", params("second"))
            .await;
        let taken = taken["result"].clone();
        assert_eq!(taken["id"], spare, "{backend}: the create took the spare");
        assert_eq!(
            taken["installed_packages"][0]["name"], "wsp-spare-pkg",
            "{taken}"
        );

        let mut plain = Logged::start(&without, &["--spare-environments", "0"]);
        plain.server.initialize().await;
        plain
            .server
            .call(1, "environment/create", params("first"))
            .await;
        let made = plain
            .server
            .call(2, "environment/create", params("second"))
            .await;
        let made = made["result"].clone();
        assert_eq!(anonymous(&taken), anonymous(&made), "{backend}");

        let bytecode = |path: &Path| path.components().any(|c| c.as_os_str() == "__pycache__");
        assert_same_files(&taken, &made, bytecode, backend);
        plain.finish().await;
        spared.finish().await;
    }
}

/// A failed install into a spare changes nothing: no environment, no reservation but the next
/// spare (made while the install ran), and the taken spare's files are gone.
#[tokio::test]
async fn a_failed_install_into_a_spare_leaves_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    let empty = temp.path().join("no-wheels");
    std::fs::create_dir_all(&empty).unwrap();
    let mut server = Logged::start(&state, &[]);
    server.server.initialize().await;
    let first = server.create(1, "first", "3.12").await;
    let spare = server.next_spare().await;
    let params = json!({"name": "second", "python_version": "3.12",
        "packages": ["wsp-nowhere-to-be-found"], "find_links": [empty], "no_index": true});
    let failed = server.server.call(2, "environment/create", params).await;
    assert_eq!(error_code(&failed), -31004, "{failed}");
    assert!(!state.join("environments").join(&spare).exists());
    // The only reservation left is the next spare, made while the install ran.
    let next = server.next_spare().await;
    assert_ne!(next, spare);
    let reserved = reservations(&state);
    assert_eq!(reserved.as_array().map(Vec::len), Some(1), "{reserved}");
    assert_eq!(reserved[0]["id"], next.as_str(), "{reserved}");
    let listed = server.server.call(3, "environment/list", json!(null)).await;
    assert_eq!(listed["result"][0]["id"], first["id"], "{listed}");
    assert_eq!(
        listed["result"].as_array().map(Vec::len),
        Some(1),
        "{listed}"
    );
    server.create(4, "second", "3.12").await;
    server.finish().await;
}

#[tokio::test]
async fn spares_are_never_listed_collected_or_journalled_and_go_with_their_server() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    let mut server = Logged::start(&state, &[]);
    server.server.initialize().await;
    let one = server.create(1, "one", "3.12").await;
    let spare = server.next_spare().await;
    assert_eq!(entries(&state.join("environments")).len(), 2);
    assert_eq!(reservations(&state).as_array().map(Vec::len), Some(1));

    let listed = server.server.call(2, "environment/list", json!(null)).await;
    assert_eq!(
        listed["result"],
        json!([{"id": one["id"], "name": "one", "python_version": "3.12"}])
    );
    let got = server
        .server
        .call(3, "environment/get", json!({"id": spare}))
        .await;
    assert_eq!(got["error"]["code"], -31001, "{got}");
    let collected = server
        .server
        .call(4, "environment/gc", json!({"keep_bytes": 0}))
        .await;
    assert_eq!(
        collected["result"]["deleted"],
        json!([one["id"]]),
        "{collected}"
    );
    assert_eq!(collected["result"]["disk_bytes"], 0, "{collected}");
    assert_eq!(entries(&state.join("environments")), vec![spare.clone()]);

    server.finish().await;
    // Every server sends `environment/changed` from this journal.
    let journal = std::fs::read_to_string(state.join("changes.jsonl")).unwrap();
    let one_id = one["id"].as_str().unwrap();
    assert!(
        journal.lines().all(|line| line.contains(one_id)),
        "{journal}"
    );
    assert!(!journal.contains(&spare), "{journal}");
    assert_eq!(entries(&state.join("environments")), Vec::<String>::new());
    assert_eq!(reservations(&state), json!([]));
    let locks = entries(&state.join("locks"));
    assert!(
        !locks.iter().any(|lock| lock.starts_with(&spare)),
        "{locks:?}"
    );
}

#[tokio::test]
async fn a_killed_servers_spare_is_swept_by_the_next_server() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    let mut killed = Logged::start(&state, &[]);
    killed.server.initialize().await;
    let one = killed.create(1, "one", "3.12").await;
    let spare = killed.next_spare().await;
    killed.server.child.start_kill().unwrap();
    killed.server.child.wait().await.unwrap();
    assert!(state.join("environments").join(&spare).is_dir());

    let mut next = Logged::start(&state, &["--spare-environments", "0"]);
    next.server.initialize().await;
    let two = next.create(1, "two", "3.12").await;
    let mut expected = vec![one["id"].as_str().unwrap().to_owned()];
    expected.push(two["id"].as_str().unwrap().to_owned());
    expected.sort();
    assert_eq!(entries(&state.join("environments")), expected);
    assert_eq!(reservations(&state), json!([]));
    next.finish().await;
}

#[tokio::test]
async fn another_interpreter_or_an_unusable_spare_gets_a_create_of_its_own() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    let mut server = Logged::start(&state, &[]);
    server.server.initialize().await;
    server.create(1, "a", "3.12").await;
    let spare = server.next_spare().await;
    let other = server.create(2, "b", "3.11").await;
    assert_ne!(other["id"], spare);
    let full = other["extra"]["python_full_version"].as_str().unwrap();
    assert!(full.starts_with("3.11."), "{other}");
    let root = PathBuf::from(other["extra"]["path"].as_str().unwrap());
    let cfg = std::fs::read_to_string(root.join("pyvenv.cfg")).unwrap();
    assert!(cfg.contains(&format!("version = {full}\n")), "{cfg}");
    let again = server.create(3, "c", "3.12").await;
    assert_eq!(
        again["id"], spare,
        "the 3.12 spare waited for a 3.12 create"
    );

    // A spare its backend refuses to relabel (here: not the native writer's) is removed, and
    // the create made anew.
    let refused = server.next_spare_of(&state, "3.12").await;
    let cfg_path = state.join("environments").join(&refused).join("pyvenv.cfg");
    let cfg = std::fs::read_to_string(&cfg_path).unwrap();
    let cfg: String = cfg
        .lines()
        .filter(|l| !l.starts_with("command = "))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&cfg_path, cfg).unwrap();
    let made = server.create(4, "d", "3.12").await;
    assert_ne!(made["id"], refused);
    assert!(!state.join("environments").join(&refused).exists());
    let listed = server.server.call(5, "environment/list", json!(null)).await;
    assert_eq!(
        listed["result"].as_array().map(Vec::len),
        Some(4),
        "{listed}"
    );
    server.finish().await;
    assert_eq!(entries(&state.join("environments")).len(), 4);
}

/// A create takes the spare of the last create of its request before it resolves the request
/// again; when the request no longer resolves to that spare's interpreter, the spare is
/// removed and the create answers as it would without it.
#[tokio::test]
async fn a_spare_taken_for_a_request_that_no_longer_resolves_to_it_is_removed() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    let pyenv = std::env::var("PYENV_ROOT").unwrap_or_else(|_| "/root/.pyenv".to_owned());
    let real = std::fs::canonicalize(Path::new(&pyenv).join("versions"))
        .ok()
        .and_then(|versions| std::fs::read_dir(versions).ok())
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .find(|path| {
            path.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("3.12."))
        })
        .expect("a pyenv Python 3.12");
    let versions = temp.path().join("pyenv").join("versions");
    std::fs::create_dir_all(&versions).unwrap();
    let linked = versions.join(real.file_name().unwrap());
    std::os::unix::fs::symlink(&real, &linked).unwrap();
    let mut env = without_managed_pythons(&temp.path().join("empty"));
    let root = temp.path().join("pyenv").display().to_string();
    env.retain(|(name, _)| *name != "PYENV_ROOT");
    env.push(("PYENV_ROOT", root));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut server = Logged::start_with_env(&state, &[], &env);
    server.server.initialize().await;
    server.create(1, "a", "3.12").await;
    let spare = server.next_spare().await;

    std::fs::remove_file(&linked).unwrap();
    let params = json!({"name": "b", "python_version": "3.12"});
    let unresolved = server.server.call(2, "environment/create", params).await;
    assert_eq!(error_code(&unresolved), -31003, "{unresolved}");
    assert!(!state.join("environments").join(&spare).exists());
    assert_eq!(reservations(&state), json!([]));

    std::os::unix::fs::symlink(&real, &linked).unwrap();
    let made = server.create(3, "b", "3.12").await;
    assert_ne!(made["id"], spare);
    let listed = server.server.call(4, "environment/list", json!(null)).await;
    assert_eq!(
        listed["result"].as_array().map(Vec::len),
        Some(2),
        "{listed}"
    );
    server.finish().await;
}

#[tokio::test]
async fn spare_environments_0_makes_none() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    let mut server = Logged::start(&state, &["--spare-environments", "0"]);
    server.server.initialize().await;
    let first = server.create(1, "one", "3.12").await;
    let second = server.create(2, "two", "3.12").await;
    assert_ne!(first["id"], second["id"]);
    // The stop waits for every spare being made, so one would have said so by the exit.
    let log = server.finish().await;
    assert!(!log.contains(READY), "{log}");
    assert_eq!(entries(&state.join("environments")).len(), 2);
}
