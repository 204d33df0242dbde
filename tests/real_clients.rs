//! Real JSON-RPC client libraries, unmodified, each drive one full session with the real
//! `wsp serve`: initialize, create, execute, get, delete (then a get that must fail), shutdown,
//! exit. The client scripts live in `tests/clients/`; each exits 0 only when every answer is
//! right and prints what was wrong otherwise.
//!
//! Where the clients come from (`.ci/run` installs all of them):
//! - vscode-jsonrpc: `npm ci` in `tests/clients/node` (run with `node` from `PATH`);
//! - pygls and python-lsp-jsonrpc: the venv `target/ci-tools/clients-venv`, pinned by
//!   `tests/clients/python/requirements.txt`;
//! - Neovim's `vim.lsp.rpc`: Debian's `neovim` package (`nvim` on `PATH`).
//!
//! A missing client is skipped with a message, except in CI, where it is a failure.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

/// The scripts give up after 120 s on their own; this bounds a client that hangs anyway.
const CLIENT_DEADLINE: Duration = Duration::from_secs(300);

fn clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients")
}

fn clients_venv_python() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/ci-tools/clients-venv/bin/python")
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// Returns whether the client's runtime is installed; outside CI a missing one is a skip.
fn installed(present: bool, what: &str) -> bool {
    if !present {
        assert!(
            std::env::var_os("CI").is_none(),
            "{what} is missing: CI installs it (.ci/run)"
        );
        eprintln!("skipped: {what} is not installed (bash .ci/run installs it)");
    }
    present
}

/// Runs `program args... WSP serve --state-dir <fresh dir>` and asserts that the client
/// reports a right session and the server left no environment behind.
async fn run_client(program: &Path, args: &[PathBuf]) {
    let temp = tempfile::tempdir().expect("a temp dir");
    let state_dir = temp.path().join("state");
    let mut command = Command::new(program);
    command
        .args(args)
        .arg(env!("CARGO_BIN_EXE_wsp"))
        .arg("serve")
        .arg("--state-dir")
        .arg(&state_dir)
        // The clients' own caches and logs (Neovim's lsp.log) stay in the temp dir.
        .env("XDG_CACHE_HOME", temp.path().join("cache"))
        .env("XDG_STATE_HOME", temp.path().join("client-state"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let output = tokio::time::timeout(CLIENT_DEADLINE, command.output())
        .await
        .unwrap_or_else(|_| {
            panic!(
                "{} did not finish in {CLIENT_DEADLINE:?}",
                program.display()
            )
        })
        .expect("the client starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let verdict_printed =
        stdout.contains("every answer is right") || stderr.contains("every answer is right");
    assert!(
        output.status.success() && verdict_printed,
        "{} {args:?} failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}{}",
        program.display(),
        output.status,
        neovim_log(temp.path()),
    );
    let environments = state_dir.join("environments");
    let left: Vec<_> = std::fs::read_dir(&environments)
        .map(|entries| entries.flatten().map(|entry| entry.file_name()).collect())
        .unwrap_or_default();
    assert!(
        left.is_empty(),
        "the deleted environment is still on disk: {left:?}"
    );
}

/// Neovim's rpc client logs the server's stderr to its lsp.log rather than passing it on.
fn neovim_log(temp: &Path) -> String {
    ["cache", "client-state"]
        .iter()
        .filter_map(|dir| std::fs::read_to_string(temp.join(dir).join("nvim/lsp.log")).ok())
        .map(|log| format!("\nnvim lsp.log:\n{log}"))
        .collect()
}

#[tokio::test]
async fn vscode_jsonrpc_completes_a_session() {
    let node_dir = clients_dir().join("node");
    let present = on_path("node")
        && node_dir
            .join("node_modules/vscode-jsonrpc/package.json")
            .is_file();
    if installed(
        present,
        "node with vscode-jsonrpc (npm ci in tests/clients/node)",
    ) {
        run_client(Path::new("node"), &[node_dir.join("session.js")]).await;
    }
}

#[tokio::test]
async fn pygls_completes_a_session() {
    let python = clients_venv_python();
    if installed(python.is_file(), "the clients venv with pygls") {
        run_client(&python, &[clients_dir().join("python/pygls_session.py")]).await;
    }
}

#[tokio::test]
async fn python_lsp_jsonrpc_completes_a_session() {
    let python = clients_venv_python();
    if installed(python.is_file(), "the clients venv with python-lsp-jsonrpc") {
        run_client(
            &python,
            &[clients_dir().join("python/pylsp_jsonrpc_session.py")],
        )
        .await;
    }
}

#[tokio::test]
async fn neovim_lsp_rpc_completes_a_session() {
    if installed(on_path("nvim"), "nvim (Debian's neovim package)") {
        let script = clients_dir().join("nvim/session.lua");
        let luafile = format!(
            "luafile {}",
            script.display().to_string().replace(' ', "\\ ")
        );
        let args: Vec<PathBuf> = [
            "--headless",
            "-u",
            "NONE",
            "-i",
            "NONE",
            "-n",
            "--noplugin",
            "--cmd",
            &luafile,
            "--",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        run_client(Path::new("nvim"), &args).await;
    }
}
