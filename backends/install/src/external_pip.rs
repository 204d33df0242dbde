//! A pip from outside a venv, for a backend that gives its environments none: the pip installed
//! with one of the machine's interpreters, run by the environment's interpreter as
//! `pip --python` runs it ([`Installer::ExternalPip`]).

use std::path::{Path, PathBuf};

use tokio::process::Command;
use wsp_backend::BackendError;
use wsp_protocol::FailureReason;

use crate::{captured_output, Installer, PIP_RUNNER};

/// The first pip that can run itself under another interpreter (`--python`).
pub const FIRST_EXTERNAL_PIP: &str = "22.3";

/// Asks `interpreter` where its `pip` package lives.
const WHERE_IS_PIP: &str = "import os, pip; print(os.path.dirname(os.path.dirname(pip.__file__)))";

/// The pip installed with `interpreter` (a base interpreter of the machine, never an
/// environment's), as the installer of other environments. Fails when it has no pip, or one
/// older than pip 22.3.
pub async fn pip_of(interpreter: &Path) -> Result<Installer, BackendError> {
    let mut command = Command::new(interpreter);
    command.args(["-I", "-c", WHERE_IS_PIP]);
    let output = captured_output(&mut command).await.map_err(|error| {
        BackendError::caused_by(
            FailureReason::InstallFailed,
            format!("asking {} for its pip", interpreter.display()),
            error,
        )
    })?;
    let printed = String::from_utf8_lossy(&output.stdout);
    let dir = PathBuf::from(printed.trim());
    if !output.status.success() || !dir.join(PIP_RUNNER).is_file() {
        return Err(no_pip(format!(
            "{} has no pip {FIRST_EXTERNAL_PIP} or newer to install into other environments",
            interpreter.display()
        )));
    }
    Ok(Installer::ExternalPip(dir))
}

/// `3.Y` of the venv at `root`, from its `lib/python3.Y` (or `python3.Yt`) directory: read off
/// the layout, never by running its interpreter, so nothing of the environment runs outside an
/// install's sandbox.
pub fn venv_python_version(root: &Path) -> Result<String, BackendError> {
    let lib = root.join("lib");
    let entries = std::fs::read_dir(&lib)
        .map_err(|error| no_pip(format!("{} cannot be read: {error}", lib.display())))?;
    let mut versions: Vec<String> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let version = name
                .strip_prefix("python")?
                .trim_end_matches('t')
                .to_owned();
            entry.path().is_dir().then_some(version)
        })
        .collect();
    versions.sort();
    versions.dedup();
    match versions.as_slice() {
        [version] => Ok(version.clone()),
        _ => Err(no_pip(format!(
            "{} holds no single pythonX.Y directory",
            lib.display()
        ))),
    }
}

/// An install with pip that cannot start, saying why.
pub fn no_pip(detail: String) -> BackendError {
    BackendError::failed(
        FailureReason::InstallFailed,
        format!("cannot install with pip: {detail}"),
    )
}
