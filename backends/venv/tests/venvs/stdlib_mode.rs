//! Stdlib mode (`python -m venv --without-pip`) on every pyenv Python 3, and its equivalence
//! with the native writer.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use crate::common::{assert_is_venv, block_on, for_each, python, python3_infos, python_says};
use wsp_backend_venv::{create_venv, VenvError, VenvMode, VenvOptions};

fn cfg(root: &Path) -> BTreeMap<String, String> {
    fs::read_to_string(root.join("pyvenv.cfg"))
        .expect("pyvenv.cfg exists")
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

fn stdlib() -> VenvOptions {
    VenvOptions {
        mode: VenvMode::Stdlib,
        ..VenvOptions::default()
    }
}

#[test]
fn stdlib_and_native_environments_are_equivalent_on_every_python3() {
    for_each(python3_infos(), |info| {
        let dir = tempfile::tempdir().expect("tempdir");
        let by_stdlib = dir.path().join("stdlib");
        let by_wsp = dir.path().join("native");
        let created = block_on(create_venv(&by_stdlib, info, &stdlib()))
            .unwrap_or_else(|e| panic!("{}: {e}", info.version));
        assert_eq!(created.interpreter_path, by_stdlib.join("bin/python"));
        assert_is_venv(&by_stdlib, info);
        block_on(create_venv(&by_wsp, info, &VenvOptions::default())).expect("native");

        let (stdlib_cfg, native_cfg) = (cfg(&by_stdlib), cfg(&by_wsp));
        for (key, value) in &stdlib_cfg {
            let ours = native_cfg.get(key);
            assert!(
                ours.is_some(),
                "{}: native pyvenv.cfg lacks {key}",
                info.version
            );
            if key != "command" {
                assert_eq!(ours, Some(value), "{}: {key}", info.version);
            }
        }
        for entry in ["bin/python", "bin/python3", "lib64", "include"] {
            assert!(by_stdlib.join(entry).exists(), "stdlib made {entry}");
            assert!(
                by_wsp.join(entry).exists(),
                "{}: native lacks {entry}",
                info.version
            );
        }
    });
}

#[test]
fn stdlib_mode_passes_the_prompt() {
    let info = python("3.12");
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("env");
    let options = VenvOptions {
        prompt: Some("shown".to_owned()),
        ..stdlib()
    };
    block_on(create_venv(&root, &info, &options)).expect("created");
    let activate = fs::read_to_string(root.join("bin/activate")).expect("activate");
    assert!(activate.contains("shown"));
    let prefix = python_says(&root.join("bin/python"), "import sys; print(sys.prefix)");
    assert_eq!(prefix, root.to_string_lossy());
}

#[test]
fn stdlib_failures_carry_the_interpreters_stderr() {
    let info = python("3.12");
    let dir = tempfile::tempdir().expect("tempdir");
    // A regular file where the root's `bin` directory must go makes the venv module fail.
    let root = dir.path().join("env");
    fs::create_dir(&root).expect("root");
    fs::write(root.join("bin"), "not a directory").expect("blocker");
    let error = block_on(create_venv(&root, &info, &stdlib())).expect_err("venv fails");
    let VenvError::CommandFailed { output, .. } = &error else {
        panic!("unexpected {error:?}");
    };
    assert!(
        output.contains("Error") || output.contains("error"),
        "{output}"
    );
}
