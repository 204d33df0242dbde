//! Helper programs a backend runs to their end (`uv venv`, `uv python install`, `-m venv`), and
//! the requirements files an installer reads.

use std::io::{self, Write};
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

/// Runs `command` as [`captured_output`] does, to success: `Err` says why it could not run,
/// or holds the last `limit` bytes of what it printed on stderr when it failed.
pub(crate) async fn succeeded(command: &mut Command, limit: usize) -> Result<Output, String> {
    let program = command
        .as_std()
        .get_program()
        .to_string_lossy()
        .into_owned();
    let output = captured_output(command)
        .await
        .map_err(|e| format!("running {program}: {e}"))?;
    if output.status.success() {
        return Ok(output);
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    Err(super::output::tail(stderr.trim(), limit).to_owned())
}

/// A temporary requirements file holding `lines`, one per line, for an installer's `-r`.
pub(crate) fn requirements_file(
    lines: impl IntoIterator<Item = String>,
) -> io::Result<tempfile::NamedTempFile> {
    let mut file = tempfile::Builder::new()
        .prefix("wsp-requirements-")
        .suffix(".txt")
        .tempfile()?;
    for line in lines {
        writeln!(file, "{line}")?;
    }
    file.flush()?;
    Ok(file)
}
