//! Native-mode environments on every pyenv Python 3: a real venv, the stdlib's layout and
//! `pyvenv.cfg` keys, and clear errors for what cannot work.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use crate::common::{assert_is_venv, block_on, for_each, python, python3_infos, site_packages};
use wsp_backend_venv::{create_venv, interpreter_path, VenvError, VenvMode, VenvOptions};

fn read_cfg(root: &Path) -> BTreeMap<String, String> {
    fs::read_to_string(root.join("pyvenv.cfg"))
        .expect("pyvenv.cfg exists")
        .lines()
        .filter_map(|line| line.split_once(" = "))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

#[test]
fn native_environments_work_on_every_python3() {
    for_each(python3_infos(), |info| {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("env");
        let created = block_on(create_venv(&root, info, &VenvOptions::default()))
            .unwrap_or_else(|e| panic!("{}: {e}", info.version));
        assert_eq!(created.interpreter_path, root.join("bin/python"));
        assert_eq!(created.seed, None);
        assert_is_venv(&root, info);
        assert!(site_packages(&root, info).is_dir());
        assert_eq!(
            fs::read_link(root.join("lib64")).ok().as_deref(),
            Some(Path::new("lib"))
        );
        assert_eq!(
            fs::read_link(root.join("bin/python")).ok().as_deref(),
            Some(info.executable.as_path())
        );
        assert!(fs::read_to_string(root.join(".gitignore")).is_ok_and(|t| t.ends_with("*\n")));
        for script in ["activate", "activate.fish", "activate.csh"] {
            assert!(root.join("bin").join(script).is_file(), "{script}");
        }
        assert!(!root.join(".pyvenv.cfg.partial").exists());
    });
}

#[test]
fn pyvenv_cfg_has_the_keys_tools_read() {
    let info = python("3.12");
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("env");
    let options = VenvOptions {
        prompt: Some("my project".to_owned()),
        ..VenvOptions::default()
    };
    block_on(create_venv(&root, &info, &options)).expect("created");
    let cfg = read_cfg(&root);
    let home = info.executable.parent().expect("exe has a directory");
    assert_eq!(cfg["home"], home.to_string_lossy());
    assert_eq!(cfg["include-system-site-packages"], "false");
    assert_eq!(cfg["version"], info.version.to_string());
    assert_eq!(cfg["version_info"], info.version.to_string());
    assert_eq!(cfg["implementation"], "CPython");
    assert_eq!(cfg["executable"], info.executable.to_string_lossy());
    assert_eq!(cfg["prompt"], "my project");
    assert!(cfg["command"].contains("wsp"), "{}", cfg["command"]);
}

#[test]
fn stdlib_keys_are_a_subset_of_native_keys() {
    let info = python("3.12");
    let dir = tempfile::tempdir().expect("tempdir");
    let native = dir.path().join("native");
    let stdlib = dir.path().join("stdlib");
    block_on(create_venv(&native, &info, &VenvOptions::default())).expect("native");
    let options = VenvOptions {
        mode: VenvMode::Stdlib,
        ..VenvOptions::default()
    };
    block_on(create_venv(&stdlib, &info, &options)).expect("stdlib");
    let (native_cfg, stdlib_cfg) = (read_cfg(&native), read_cfg(&stdlib));
    for (key, value) in &stdlib_cfg {
        assert!(
            native_cfg.contains_key(key),
            "native pyvenv.cfg lacks {key}"
        );
        if key != "command" {
            assert_eq!(&native_cfg[key], value, "{key}");
        }
    }
}

#[test]
fn python2_is_rejected_clearly_in_both_modes() {
    let info = python("2.7");
    for mode in [VenvMode::Native, VenvMode::Stdlib] {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("env");
        let options = VenvOptions {
            mode,
            ..VenvOptions::default()
        };
        let error = block_on(create_venv(&root, &info, &options)).expect_err("2.7 has no venv");
        assert!(
            matches!(error, VenvError::UnsupportedInterpreter { .. }),
            "{error:?}"
        );
        let message = error.to_string();
        assert!(
            message.contains("2.7") && message.contains("3.3"),
            "{message}"
        );
        assert!(!root.exists(), "nothing is written for {mode:?}");
    }
}

#[test]
fn an_existing_environment_is_not_overwritten() {
    let info = python("3.12");
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("env");
    block_on(create_venv(&root, &info, &VenvOptions::default())).expect("first");
    let error = block_on(create_venv(&root, &info, &VenvOptions::default()))
        .expect_err("the second create collides");
    assert!(matches!(error, VenvError::Io { .. }), "{error:?}");
}

#[test]
fn control_characters_are_rejected_before_anything_is_written() {
    let info = python("3.12");
    let dir = tempfile::tempdir().expect("tempdir");
    let options = VenvOptions {
        prompt: Some("two\nlines".to_owned()),
        ..VenvOptions::default()
    };
    let root = dir.path().join("env");
    let error = block_on(create_venv(&root, &info, &options)).expect_err("bad prompt");
    assert!(
        matches!(error, VenvError::InvalidInput { what: "prompt", .. }),
        "{error:?}"
    );
    let odd_root = dir.path().join("new\nline");
    let error =
        block_on(create_venv(&odd_root, &info, &VenvOptions::default())).expect_err("bad root");
    assert!(matches!(error, VenvError::InvalidInput { .. }), "{error:?}");
    assert!(!root.exists() && !odd_root.exists());
}

#[test]
fn a_missing_executable_is_an_error_not_a_broken_environment() {
    let mut info = python("3.12");
    let dir = tempfile::tempdir().expect("tempdir");
    info.executable = dir.path().join("no-such-python");
    let root = dir.path().join("env");
    let error = block_on(create_venv(&root, &info, &VenvOptions::default())).expect_err("missing");
    assert!(matches!(error, VenvError::InvalidInput { .. }), "{error:?}");
    assert!(!root.join("pyvenv.cfg").exists());
}

#[test]
fn roots_with_spaces_and_quotes_work() {
    let info = python("3.12");
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("it's a \"dir\" $HOME");
    block_on(create_venv(&root, &info, &VenvOptions::default())).expect("created");
    assert_is_venv(&root, &info);
}

#[test]
fn interpreter_path_is_bin_python() {
    assert_eq!(
        interpreter_path(Path::new("/e")),
        Path::new("/e/bin/python")
    );
}
