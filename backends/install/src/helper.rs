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
