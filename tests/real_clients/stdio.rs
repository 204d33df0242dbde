//! The clients that spawn the server on stdio: vscode-jsonrpc, pygls, python-lsp-jsonrpc and
//! Neovim's `vim.lsp.rpc`, each through one full session (initialize, create, execute, get,
//! delete, then a get that must fail, shutdown, exit).

use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::process::Command;

use crate::{
    assert_every_answer_right, client_output, clients_dir, environments_left, installed,
    node_packages_installed, on_path,
};

fn clients_venv_python() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/ci-tools/clients-venv/bin/python")
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
        .stderr(Stdio::piped());
    let what = format!("{} {args:?}", program.display());
    let output = client_output(command, &what).await;
    assert_every_answer_right(&output, &what, &neovim_log(temp.path()));
    let left = environments_left(&state_dir);
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
    if node_packages_installed(&["vscode-jsonrpc"]) {
        let node_dir = clients_dir().join("node");
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
