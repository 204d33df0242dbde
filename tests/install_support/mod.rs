//! Shared by the install tests: distributions built here, a loopback package index, servers
//! with or without uv, and requests whose notifications are collected.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use wsp_testing::{write_simple_index, Distribution, StaticHttpServer};

pub use crate::support::share_seed_cache;
use crate::support::{request, Server};

/// The wheels every install test uses: `wsp-alpha` 1.0 and 2.0, `wsp-beta` 1.0 (which
/// requires `wsp-alpha`), `wsp-gamma` 1.0.
pub fn wheels(dir: &Path) -> Vec<PathBuf> {
    [
        Distribution::new("wsp-alpha", "1.0"),
        Distribution::new("wsp-alpha", "2.0"),
        Distribution::new("wsp-beta", "1.0").requires("wsp-alpha"),
        Distribution::new("wsp-gamma", "1.0"),
    ]
    .iter()
    .map(|d| d.write_wheel(dir).expect("the wheel is written"))
    .collect()
}

/// The directory holding the `uv` on `PATH` (the CI script puts one there).
pub fn uv_dir() -> PathBuf {
    let uv = wsp_install::find_uv(None).expect("uv is on PATH (.ci/run installs it)");
    uv.parent().expect("uv has a directory").to_owned()
}

/// `PATH` without the directory of uv: a venv server started with it installs with pip.
pub fn path_without_uv() -> String {
    let uv_dir = uv_dir();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kept: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|dir| *dir != uv_dir && !dir.join("uv").exists())
        .collect();
    std::env::join_paths(kept)
        .expect("PATH joins")
        .to_string_lossy()
        .into_owned()
}

/// Which installer a venv server uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum With {
    /// `uv pip`.
    Uv,
    /// pip from the seed cache, run from outside the environment (no uv on the server's
    /// `PATH`).
    Pip,
}

impl With {
    pub const BOTH: [With; 2] = [With::Uv, With::Pip];
}

/// A venv server in `state_dir` installing with `with`, on the shared seed cache (pip installs
/// and `--seed-pip` take pip from it).
pub fn venv_server(state_dir: &Path, with: With, extra: &[&str]) -> Server {
    share_seed_cache(state_dir);
    match with {
        With::Uv => Server::start_in(state_dir, extra),
        With::Pip => {
            let path = path_without_uv();
            Server::start_with_env(state_dir, extra, &[("PATH", &path)])
        }
    }
}

/// A digest of the tree at `dir`: every entry's path, kind, and contents (or link target), in
/// sorted order.
pub fn tree_digest(dir: &Path) -> String {
    use sha2::{Digest, Sha256};
    fn walk(dir: &Path, base: &Path, hasher: &mut Sha256) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("the tree is readable")
            .map(|entry| entry.expect("an entry").path())
            .collect();
        entries.sort();
        for path in entries {
            let relative = path.strip_prefix(base).expect("under the base");
            hasher.update(relative.as_os_str().as_encoded_bytes());
            let kind = std::fs::symlink_metadata(&path)
                .expect("metadata")
                .file_type();
            if kind.is_symlink() {
                hasher.update(b"\0link\0");
                let target = std::fs::read_link(&path).expect("a link");
                hasher.update(target.as_os_str().as_encoded_bytes());
            } else if kind.is_dir() {
                hasher.update(b"\0dir\0");
                walk(&path, base, hasher);
            } else {
                hasher.update(b"\0file\0");
                hasher.update(std::fs::read(&path).expect("a file"));
            }
        }
    }
    let mut hasher = Sha256::new();
    walk(dir, dir, &mut hasher);
    format!("{:x}", hasher.finalize())
}

/// Sends a request and reads until its response; returns the notifications that came before
/// it and the response.
pub async fn call_collecting(
    server: &mut Server,
    id: impl Into<Value>,
    method: &str,
    params: Value,
) -> (Vec<Value>, Value) {
    let id = id.into();
    server.send(&request(id.clone(), method, params)).await;
    let mut notifications = Vec::new();
    loop {
        let message = server.recv().await;
        if message.get("id").is_none() {
            notifications.push(message);
        } else {
            assert_eq!(
                message["id"], id,
                "a response to another request: {message}"
            );
            return (notifications, message);
        }
    }
}

/// The answer (result or error) to `method` with `params`, the notifications before it aside.
pub async fn answer(server: &mut Server, id: i64, method: &str, params: Value) -> Value {
    call_collecting(server, id, method, params).await.1
}

/// Creates an environment with `params` (request 1) and locks it (request 2): its details and
/// its lock.
pub async fn create_and_lock(server: &mut Server, params: Value) -> (Value, Value) {
    let created = ok(server, 1, "environment/create", params).await;
    let lock = json!({"id": created["id"]});
    let lock = ok(server, 2, "environment/lock", lock).await;
    (created, lock)
}

/// How many environments the store at `state` holds on disk.
pub fn environments_on_disk(state: &Path) -> usize {
    std::fs::read_dir(state.join("environments"))
        .map(|entries| entries.count())
        .unwrap_or(0)
}

/// The result of a request that must succeed (notifications are skipped).
pub async fn ok(server: &mut Server, id: i64, method: &str, params: Value) -> Value {
    let (_, response) = call_collecting(server, id, method, params).await;
    match response.get("result") {
        Some(result) => result.clone(),
        None => panic!("{method} failed: {response}"),
    }
}

/// Creates environment `name` on Python 3.12 and returns its details.
pub async fn create(server: &mut Server, id: i64, name: &str) -> Value {
    create_on(server, id, name, "3.12").await
}

/// Creates environment `name` on Python `version` and returns its details.
pub async fn create_on(server: &mut Server, id: i64, name: &str, version: &str) -> Value {
    let params = json!({"name": name, "python_version": version});
    ok(server, id, "environment/create", params).await
}

/// `(name, version)` of each installed package.
pub fn installed(details: &Value) -> Vec<(String, String)> {
    details["installed_packages"]
        .as_array()
        .expect("installed_packages")
        .iter()
        .map(|p| {
            let field = |k: &str| p[k].as_str().expect("a string").to_owned();
            (field("name"), field("version"))
        })
        .collect()
}

/// The version of `name` installed, if any.
pub fn version_of(details: &Value, name: &str) -> Option<String> {
    installed(details)
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v)
}

/// Runs Python in the environment and returns its stdout, trimmed.
pub async fn python(server: &mut Server, id: i64, env: &Value, code: &str) -> String {
    let params = json!({"id": env, "argv": ["python", "-c", code]});
    let ran = ok(server, id, "environment/execute", params).await;
    assert_eq!(ran["exit_code"], 0, "{ran}");
    ran["stdout"].as_str().expect("stdout").trim().to_owned()
}

/// A simple index over `files`, served on loopback (`python -m http.server`), killed on drop.
pub struct IndexServer {
    server: StaticHttpServer,
    pub url: String,
}

impl IndexServer {
    /// Lays `files` out as a simple index in `dir` and serves it.
    pub async fn start(dir: &Path, files: &[PathBuf]) -> IndexServer {
        write_simple_index(dir, files).expect("the index is written");
        let python = wsp_testing::conda::pyenv_root()
            .expect("pyenv")
            .join("versions/3.12.1/bin/python3.12");
        let server = StaticHttpServer::start(python, dir).await;
        let url = format!("{}/simple/", server.origin());
        IndexServer { server, url }
    }

    /// Stops serving: the server is killed and reaped, so its port refuses from now on.
    pub async fn stop(self) {
        self.server.stop().await;
    }
}

/// Makes a FIFO at `path`.
pub fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
}
