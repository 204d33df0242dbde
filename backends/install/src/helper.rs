//! Helper programs a backend runs to their end (`uv venv`, `uv python install`, `-m venv`).

use std::io;
use std::process::{Output, Stdio};

use tokio::process::Command;

/// Runs `command` to its end with its stdout and stderr captured and nothing on its stdin (not
/// the server's, which carries the protocol). The program is killed if the returned future is
/// dropped.
pub async fn captured_output(command: &mut Command) -> io::Result<Output> {
    command
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
}
