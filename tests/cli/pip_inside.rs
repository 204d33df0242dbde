//! `pip` inside an environment, over the real binary: `wsp exec ENV -- pip install ./x.whl`
//! with the host's pip on `PATH` fails with a message saying how to install instead, and the
//! host's site-packages is byte for byte what it was. Given a pip of its own, `pip` acts on
//! the environment; once that pip is uninstalled, it refuses again. On venv (installing with
//! pip, no uv on `PATH`) and on uv. The "host" is a Python with pip of its own, made for the
//! test, so that a regression installs into it rather than into an interpreter of the machine.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::install_support::{path_without_uv, tree_digest, wheels};
use crate::run::{assert_ok, command, stderr, text, wsp};

/// An environment holding pip (from the wheel Python 3.12 bundles), made on its own state
/// directory: its root.
fn host_with_pip(state: &Path) -> PathBuf {
    let bundled = bundled_pip().display().to_string();
    let args = ["create", "host", "--python", "3.12", "-p", "pip"];
    let made = wsp(
        state,
        &[&args[..], &["--find-links", &bundled, "--no-index"]].concat(),
    );
    assert_ok(&made, "the host is made");
    let details = assert_ok(&wsp(state, &["--json", "get", "host"]), "get host");
    let details: Value = serde_json::from_str(&details).expect("JSON");
    let root = PathBuf::from(details["extra"]["path"].as_str().expect("extra.path"));
    let version = assert_ok(
        &wsp(state, &["exec", "host", "--", "pip", "--version"]),
        "pip",
    );
    assert!(
        version.contains(&*root.to_string_lossy()),
        "the host's own pip: {version}"
    );
    root
}

/// `PATH` with the host's `bin` first; then, for the venv backend, the rest without uv (it
/// installs with pip), for the uv backend all of it.
fn path_with_host(host: &Path, backend: &str) -> String {
    let rest = match backend {
        "uv" => std::env::var("PATH").expect("PATH"),
        _ => path_without_uv(),
    };
    format!("{}:{rest}", host.join("bin").display())
}

fn pip_never_reaches_the_host(backend: &str) {
    let temp = tempfile::tempdir().unwrap();
    let host = host_with_pip(&temp.path().join("host-state"));
    let host_site = host.join("lib/python3.12/site-packages");
    assert!(host_site.join("pip").is_dir(), "the host has pip");
    let wheel = wheels(&temp.path().join("wheels")).remove(0);
    let path = path_with_host(&host, backend);
    let state = temp.path().join("state");
    crate::install_support::share_seed_cache(&state);
    let in_state = |args: &[&str]| {
        let mut command = command(&state);
        command.env("PATH", &path).args(["--backend", backend]);
        command.args(args).output().expect("wsp runs")
    };
    // The host's pip is what `pip` finds on this PATH outside any environment.
    let outside = std::process::Command::new("sh")
        .args(["-c", "command -v pip"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert_eq!(
        text(&outside.stdout).trim(),
        host.join("bin/pip").display().to_string()
    );
    assert_ok(&in_state(&["create", "env", "--python", "3.12"]), "create");
    let before = tree_digest(&host_site);
    let wheel = wheel.display().to_string();
    for argv in [
        &["pip", "install", &wheel][..],
        &["pip3", "install", &wheel],
        &["pip3.12", "install", &wheel],
        &["python", "-m", "pip", "install", &wheel],
    ] {
        let ran = in_state(&[&["exec", "env", "--"][..], argv].concat());
        assert_ne!(ran.status.code(), Some(0), "{backend}: {argv:?} succeeded");
        let said = stderr(&ran);
        let expected = if argv[0] == "python" {
            "No module named pip"
        } else {
            "pip is not installed in this environment"
        };
        assert!(said.contains(expected), "{backend}: {argv:?}: {said}");
        assert_eq!(
            tree_digest(&host_site),
            before,
            "{backend}: {argv:?} changed the host"
        );
    }
    let got = assert_ok(&in_state(&["--json", "get", "env"]), "get");
    let got: Value = serde_json::from_str(&got).expect("JSON");
    assert_eq!(
        got["installed_packages"],
        serde_json::json!([]),
        "{backend}"
    );
    let root = got["extra"]["path"]
        .as_str()
        .expect("extra.path")
        .to_owned();

    // A pip of its own replaces the stubs and acts on the environment; without it they return.
    let bundled = bundled_pip().display().to_string();
    let args = [
        "install",
        "env",
        "pip",
        "--find-links",
        &bundled,
        "--no-index",
    ];
    assert_ok(&in_state(&args), "install pip");
    let version = assert_ok(&in_state(&["exec", "env", "--", "pip", "--version"]), "pip");
    assert!(version.contains(&root), "{backend}: {version}");
    assert_ok(&in_state(&["uninstall", "env", "pip"]), "uninstall pip");
    let ran = in_state(&["exec", "env", "--", "pip", "--version"]);
    assert_eq!(ran.status.code(), Some(1), "{backend}");
    assert!(stderr(&ran).contains("pip is not installed"), "{backend}");
}

/// The directory holding the pip wheel Python 3.12 bundles.
fn bundled_pip() -> PathBuf {
    wsp_testing::conda::pyenv_root()
        .expect("pyenv")
        .join("versions/3.12.1/lib/python3.12/ensurepip/_bundled")
}

#[test]
fn pip_in_a_venv_environment_never_reaches_the_host() {
    pip_never_reaches_the_host("venv");
}

#[test]
fn pip_in_a_uv_environment_never_reaches_the_host() {
    pip_never_reaches_the_host("uv");
}
