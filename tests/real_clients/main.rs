//! Real JSON-RPC client libraries, unmodified, each drive sessions with the real `wsp serve`;
//! each exits 0 only when every answer is right and prints what was wrong otherwise. The client
//! scripts live in `tests/clients/`.
//! - `stdio`: vscode-jsonrpc, pygls, python-lsp-jsonrpc and Neovim's `vim.lsp.rpc`, each
//!   spawning the server on stdio;
//! - `sockets`: vscode-jsonrpc's socket transport over `--listen unix:PATH`, vscode-ws-jsonrpc
//!   (with `ws`) over `--listen ws://127.0.0.1:PORT`;
//! - `browser`: headless Chromium on a page of another origin, refused without `--allow-origin`
//!   and served with it.
//!
//! Where the clients come from (`.ci/run` installs all of them):
//! - the npm ones (vscode-jsonrpc, vscode-ws-jsonrpc, ws, playwright-core): `npm ci` in
//!   `tests/clients/node` (run with `node` from `PATH`);
//! - pygls and python-lsp-jsonrpc: the venv `target/ci-tools/clients-venv`, pinned by
//!   `tests/clients/python/requirements.txt`;
//! - Neovim's `vim.lsp.rpc` and Chromium: Debian's `neovim` and `chromium` packages.
//!
//! A missing client is skipped with a message, except in CI, where it is a failure.

mod browser;
#[path = "../listen/serve_listening.rs"]
mod serve_listening;
mod sockets;
mod stdio;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use tokio::process::Command;

/// The scripts give up after 120 s on their own; this bounds a client that hangs anyway.
const CLIENT_DEADLINE: Duration = Duration::from_secs(300);

fn clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients")
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

/// Whether `node` is on `PATH` with every npm package of `packages` installed in
/// `tests/clients/node` (outside CI a missing one is a skip).
fn node_packages_installed(packages: &[&str]) -> bool {
    let modules = clients_dir().join("node/node_modules");
    let present = on_path("node")
        && packages
            .iter()
            .all(|package| modules.join(package).join("package.json").is_file());
    installed(
        present,
        &format!("node with {packages:?} (npm ci in tests/clients/node)"),
    )
}

/// Runs `command` to its end within [`CLIENT_DEADLINE`].
async fn client_output(mut command: Command, what: &str) -> Output {
    command.kill_on_drop(true);
    tokio::time::timeout(CLIENT_DEADLINE, command.output())
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish in {CLIENT_DEADLINE:?}"))
        .unwrap_or_else(|error| panic!("{what} does not start: {error}"))
}

/// Asserts that the client exited 0 and printed its verdict; `context` ends the message
/// otherwise (the server's log, say).
fn assert_every_answer_right(output: &Output, what: &str, context: &str) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let verdict_printed =
        stdout.contains("every answer is right") || stderr.contains("every answer is right");
    assert!(
        output.status.success() && verdict_printed,
        "{what} failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}{context}",
        output.status,
    );
}

/// The environments left in the state directory `state_dir`.
fn environments_left(state_dir: &Path) -> Vec<std::ffi::OsString> {
    std::fs::read_dir(state_dir.join("environments"))
        .map(|entries| entries.flatten().map(|entry| entry.file_name()).collect())
        .unwrap_or_default()
}
