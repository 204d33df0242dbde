//! `wsp python list` and `wsp create` without `--python`, over the real binary and pyenv's
//! interpreters; shell completions.

use std::process::Command;

use serde_json::Value;

use crate::run::{assert_ok, wsp, WSP};

fn version_key(version: &str) -> Vec<u64> {
    version
        .split('.')
        .map(|n| n.parse().expect("a number"))
        .collect()
}

#[test]
fn python_list_shows_every_interpreter_newest_first() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    let pyenv = wsp_testing::conda::pyenv_root().expect("pyenv");
    let python312 = pyenv.join("versions/3.12.1/bin/python3.12");

    let listed: Value =
        serde_json::from_str(&assert_ok(&wsp(&state, &["python", "list", "--json"]), ""))
            .expect("one JSON array");
    let listed = listed.as_array().expect("an array");
    let versions: Vec<Vec<u64>> = listed
        .iter()
        .map(|python| version_key(python["version"].as_str().expect("a version")))
        .collect();
    let mut sorted = versions.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(versions, sorted, "newest first: {listed:?}");
    assert!(
        listed
            .iter()
            .any(|python| python["path"] == python312.display().to_string()
                && python["version"] == "3.12.1"
                && python["source"] == "pyenv"),
        "{listed:?}"
    );

    let table = assert_ok(&wsp(&state, &["python", "list"]), "");
    let header: Vec<&str> = table
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert_eq!(header, ["VERSION", "SOURCE", "PATH"]);
    assert_eq!(table.lines().count(), listed.len() + 1, "{table}");

    // A configured interpreter is listed as such; the conda backend's Pythons aren't local.
    // A script of its own (a symlink would be the same file as pyenv's, listed once), reaching
    // the interpreter through a link whose name doesn't say pyenv (or it is taken for a shim).
    let bin = temp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(&python312, bin.join("real")).unwrap();
    let copy = bin.join("python3.12");
    let script = format!("#!/bin/sh\nexec '{}' \"$@\"\n", bin.join("real").display());
    crate::support::write_executable(&copy, &script);
    let copy_text = copy.display().to_string();
    let with_configured = assert_ok(
        &wsp(&state, &["python", "list", "--interpreter", &copy_text]),
        "",
    );
    assert!(
        with_configured
            .lines()
            .any(|line| line.contains("configured") && line.ends_with(&copy_text)),
        "{with_configured}"
    );
    let conda = wsp(&state, &["--backend", "conda", "python", "list"]);
    assert_eq!(conda.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&conda.stderr).contains("installs Python from its channels"));
}

#[test]
fn create_without_python_takes_the_newest_and_says_so() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    let listed: Value =
        serde_json::from_str(&assert_ok(&wsp(&state, &["python", "list", "--json"]), "")).unwrap();
    let newest = listed[0]["version"]
        .as_str()
        .expect("an interpreter")
        .to_owned();
    let minor = newest.rsplit_once('.').expect("X.Y.Z").0.to_owned();

    let created = wsp(&state, &["create", "default", "--json"]);
    let details: Value = serde_json::from_str(&assert_ok(&created, "")).expect("details");
    assert_eq!(details["python_version"], minor.as_str());
    assert_eq!(details["extra"]["python_full_version"], newest.as_str());
    let said = String::from_utf8_lossy(&created.stderr).into_owned();
    assert!(
        said.contains(&format!(
            "wsp: no --python given: using {minor}, the newest found ({newest} at "
        )),
        "{said}"
    );
}

#[test]
fn completions_for_bash_zsh_and_fish() {
    for shell in ["bash", "zsh", "fish"] {
        let output = Command::new(WSP)
            .args(["completions", shell])
            .output()
            .unwrap();
        let script = assert_ok(&output, "");
        for word in [
            "create",
            "install",
            "delete",
            "requirement",
            "python",
            "yes",
        ] {
            assert!(script.contains(word), "{shell}: {word} missing");
        }
    }
    let bash = Command::new(WSP)
        .args(["completions", "bash"])
        .output()
        .unwrap();
    let checked = Command::new("bash")
        .args(["-n", "-c", &String::from_utf8_lossy(&bash.stdout)])
        .status()
        .expect("bash runs");
    assert!(checked.success(), "the bash script parses");
    let unknown = Command::new(WSP)
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(2));
}

#[test]
fn python_list_and_create_read_the_state_directorys_wsp_toml() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let pyenv = wsp_testing::conda::pyenv_root().expect("pyenv");
    let bin = temp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(
        pyenv.join("versions/3.12.1/bin/python3.12"),
        bin.join("real"),
    )
    .unwrap();
    let configured = bin.join("python3.12");
    let script = format!("#!/bin/sh\nexec '{}' \"$@\"\n", bin.join("real").display());
    crate::support::write_executable(&configured, &script);
    let configured = configured.display().to_string();
    let file = state.join("wsp.toml");

    std::fs::write(&file, format!("python = ['{configured}']\n")).unwrap();
    let listed = assert_ok(&wsp(&state, &["python", "list"]), "");
    assert!(
        listed
            .lines()
            .any(|line| line.contains("configured") && line.ends_with(&configured)),
        "the file's interpreter is listed: {listed}"
    );

    std::fs::write(&file, "backend = 'conda'\n").unwrap();
    for args in [&["python", "list"][..], &["create", "env"]] {
        let refused = wsp(&state, args);
        assert_eq!(refused.status.code(), Some(2), "{args:?}: {refused:?}");
        let said = String::from_utf8_lossy(&refused.stderr);
        assert!(
            said.contains("installs Python from its channels"),
            "{args:?}: {said}"
        );
    }
    let overridden = wsp(&state, &["--backend", "venv", "python", "list"]);
    assert_eq!(overridden.status.code(), Some(0), "{overridden:?}");

    std::fs::write(&file, "backend = 'conda'\nbogus = 1\n").unwrap();
    let refused = wsp(&state, &["create", "env"]);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("wsp.toml") && said.contains("bogus"),
        "{said}"
    );
}
