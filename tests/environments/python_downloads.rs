//! `wsp serve --python-downloads`, offline: a Python that no locator finds is installed with
//! `uv python install` from a python-build-standalone-style archive the test builds from a
//! pyenv interpreter (uv is pointed at it through its download-metadata override), then used.
//! Without the flag, the answer stays `-31003`.

use std::path::{Path, PathBuf};

use crate::support::{error_code, Server};
use serde_json::json;

/// The version packaged: one that neither `PATH` (with pyenv hidden) nor anything else offers.
const VERSION: &str = "3.10.13";

/// Writes `cpython-<VERSION>.tar.gz` (a `python/` tree: the interpreter and its standard
/// library, without site-packages' contents or the test suite) and uv's download metadata
/// naming it; returns the metadata's path.
fn build_download(dir: &Path) -> PathBuf {
    let pyenv = wsp_testing::conda::pyenv_root().expect("pyenv");
    let source = pyenv.join("versions").join(VERSION);
    assert!(source.is_dir(), "pyenv has {VERSION}");
    let script = r#"
import hashlib, io, json, os, sys, tarfile
source, out, version = sys.argv[1], sys.argv[2], sys.argv[3]
major, minor, patch = version.split(".")
short = f"python{major}.{minor}"
skipped = {"site-packages", "test", "tests", "__pycache__", "idlelib", "tkinter", "ensurepip", "lib2to3"}
archive = os.path.join(out, f"cpython-{version}.tar.gz")
with tarfile.open(archive, "w:gz", compresslevel=1) as tar:
    for root, dirs, files in os.walk(source):
        rel_root = os.path.relpath(root, source)
        dirs[:] = [d for d in dirs if d not in skipped and not (rel_root == "." and d in ("share", "include"))]
        for name in files:
            rel = os.path.normpath(os.path.join(rel_root, name))
            if rel.startswith("bin/") and name not in (short, "python3", "python"):
                continue
            tar.add(os.path.join(root, name), arcname="python/" + rel, recursive=False)
    readme = b"site-packages\n"
    info = tarfile.TarInfo(f"python/lib/{short}/site-packages/README.txt")
    info.size = len(readme)
    tar.addfile(info, io.BytesIO(readme))
digest = hashlib.sha256(open(archive, "rb").read()).hexdigest()
key = f"cpython-{version}-linux-x86_64-gnu"
metadata = {key: {
    "name": "cpython", "arch": {"family": "x86_64", "variant": None}, "os": "linux",
    "libc": "gnu", "major": int(major), "minor": int(minor), "patch": int(patch),
    "prerelease": "", "url": "file://" + archive, "sha256": digest, "variant": None,
    "build": "20240101",
}}
json.dump(metadata, open(os.path.join(out, "download-metadata.json"), "w"))
"#;
    let python = pyenv.join("versions/3.12.1/bin/python3.12");
    let status = std::process::Command::new(python)
        .arg("-c")
        .arg(script)
        .arg(&source)
        .arg(dir)
        .arg(VERSION)
        .status()
        .expect("python runs");
    assert!(status.success());
    dir.join("download-metadata.json")
}

struct Machine {
    _temp: tempfile::TempDir,
    state: PathBuf,
    env: Vec<(String, String)>,
    installs: PathBuf,
}

/// A server environment where only `/usr/bin` and uv are on `PATH`, pyenv is empty, and uv
/// installs Pythons into a fresh directory from the test's download metadata.
fn machine() -> Machine {
    let temp = tempfile::tempdir().unwrap();
    let metadata = build_download(temp.path());
    let uv = wsp_install::find_uv(None).expect("uv on PATH");
    let uv_dir = uv.parent().unwrap().display().to_string();
    let installs = temp.path().join("uv-pythons");
    let empty = temp.path().join("no-pyenv");
    std::fs::create_dir_all(&empty).unwrap();
    let path = |p: &Path| p.display().to_string();
    let env = vec![
        ("PATH".to_owned(), format!("{uv_dir}:/usr/bin:/bin")),
        ("PYENV_ROOT".to_owned(), path(&empty)),
        ("UV_PYTHON_INSTALL_DIR".to_owned(), path(&installs)),
        ("UV_PYTHON_DOWNLOADS_JSON_URL".to_owned(), path(&metadata)),
        (
            "UV_CACHE_DIR".to_owned(),
            path(&temp.path().join("uv-cache")),
        ),
        (
            "UV_PYTHON_BIN_DIR".to_owned(),
            path(&temp.path().join("uv-bin")),
        ),
        ("XDG_DATA_HOME".to_owned(), path(&temp.path().join("data"))),
    ];
    Machine {
        state: temp.path().join("state"),
        _temp: temp,
        env,
        installs,
    }
}

fn start(machine: &Machine, args: &[&str]) -> Server {
    let env: Vec<(&str, &str)> = machine
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    Server::start_with_env(&machine.state, args, &env)
}

#[tokio::test]
async fn without_the_flag_a_missing_python_is_31003() {
    let machine = machine();
    let mut server = start(&machine, &[]);
    server.initialize().await;
    let answer = server
        .call(
            1,
            "environment/create",
            json!({"name": "old", "python_version": "3.10"}),
        )
        .await;
    assert_eq!(error_code(&answer), -31003, "{answer}");
    let available = answer["error"]["data"]["available"].to_string();
    assert!(!available.contains("3.10."), "{available}");
    assert!(!machine.installs.exists(), "nothing was downloaded");
    server.finish().await;
}

#[tokio::test]
async fn with_the_flag_a_missing_python_is_installed_and_used() {
    for backend in ["venv", "uv"] {
        let machine = machine();
        let mut server = start(&machine, &["--python-downloads", "--backend", backend]);
        server.initialize().await;
        let created = server
            .call(
                1,
                "environment/create",
                json!({"name": "new", "python_version": "3.10"}),
            )
            .await;
        let details = &created["result"];
        assert_eq!(
            details["extra"]["python_full_version"], VERSION,
            "{created}"
        );
        let base = details["extra"]["base_interpreter"].as_str().expect("base");
        let installs = machine.installs.canonicalize().unwrap();
        assert!(Path::new(base).starts_with(&installs), "{backend}: {base}");
        let ran = server
            .call(
                2,
                "environment/execute",
                json!({"id": details["id"], "argv": ["python", "-c",
                    "import sys; print('%d.%d.%d' % sys.version_info[:3], sys.prefix != sys.base_prefix)"]}),
            )
            .await;
        assert_eq!(
            ran["result"]["stdout"],
            format!("{VERSION} True\n"),
            "{ran}"
        );
        let missing = server
            .call(
                3,
                "environment/create",
                json!({"name": "none", "python_version": "3.99"}),
            )
            .await;
        assert_eq!(
            error_code(&missing),
            -31003,
            "uv has no 3.99 either: {missing}"
        );
        server.finish().await;
    }
}
