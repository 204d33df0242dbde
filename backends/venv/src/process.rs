//! Running the helper Python processes (`-m venv`, `-m ensurepip`) with their output captured.

use std::ffi::OsString;
use std::path::Path;

use tokio::process::Command;
use wsp_install::captured_output;

use crate::VenvError;

/// At most this many characters of a failed command's output go into the error.
const OUTPUT_LIMIT: usize = 4000;

/// Runs `program args...` in `cwd` with stdin from the null device and waits for it. The child
/// is killed if the returned future is dropped. Fails with the captured output when the
/// program does not exit successfully.
///
/// `PYTHONHOME` and `PYTHONPATH` are removed: they would point the helper (and the processes
/// it starts, such as `ensurepip`'s pip) at another installation.
pub(crate) async fn run(program: &Path, args: &[OsString], cwd: &Path) -> Result<(), VenvError> {
    let command_line = describe(program, args);
    tracing::debug!(command = %command_line, "running helper");
    let output = captured_output(
        Command::new(program)
            .args(args)
            .current_dir(cwd)
            .env_remove("PYTHONHOME")
            .env_remove("PYTHONPATH"),
    )
    .await
    .map_err(|source| VenvError::Spawn {
        command: command_line.clone(),
        source,
    })?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let text = if stderr.trim().is_empty() {
        String::from_utf8_lossy(&output.stdout)
    } else {
        stderr
    };
    Err(VenvError::CommandFailed {
        command: command_line,
        status: output.status.to_string(),
        output: tail(text.trim(), OUTPUT_LIMIT),
    })
}

/// The command line as a human would type it (without shell quoting subtleties).
fn describe(program: &Path, args: &[OsString]) -> String {
    let mut line = program.to_string_lossy().into_owned();
    for arg in args {
        line.push(' ');
        line.push_str(&arg.to_string_lossy());
    }
    line
}

/// The last `limit` characters of `text`, marked when cut.
fn tail(text: &str, limit: usize) -> String {
    let count = text.chars().count();
    if count <= limit {
        return text.to_owned();
    }
    let kept: String = text.chars().skip(count - limit).collect();
    format!("...{kept}")
}
