//! The steps of a backend whose environments are virtual environments: the defaults of
//! [`Backend`](crate::Backend), and what the venv and uv backends share.
//!
//! A venv's interpreter is `<root>/bin/python`; its packages are the distributions in its
//! site-packages; it is activated by `VIRTUAL_ENV=<root>` and `<root>/bin` first on `PATH`;
//! packages go in with `uv pip --python <root>/bin/python` or its own pip.

use std::path::{Path, PathBuf};

use wsp_protocol::{ExecuteResult, FailureReason};

use crate::execute::{self, Activation, RunSpec};
use crate::install::{self, InstallRequest, Installer, UninstallRequest};
use crate::{BackendError, Description, RunRequest};

/// The interpreter of the venv at `root`: `<root>/bin/python`.
pub fn interpreter_path(root: &Path) -> PathBuf {
    root.join("bin").join("python")
}

/// The venv at `root`: its interpreter, and the distributions in its site-packages (read off
/// the async threads).
pub async fn describe(root: PathBuf) -> Result<Description, BackendError> {
    let interpreter_path = interpreter_path(&root);
    let installed = tokio::task::spawn_blocking(move || {
        crate::packages::installed_packages(&root).map_err(|e| {
            BackendError::caused_by(
                FailureReason::DescribeFailed,
                format!("cannot read the packages of {}", root.display()),
                e,
            )
        })
    })
    .await
    .map_err(|e| {
        BackendError::caused_by(FailureReason::DescribeFailed, "reading the packages", e)
    })??;
    Ok(Description {
        interpreter_path,
        installed_packages: installed,
    })
}

/// Runs `request`'s command with the venv at its root activated.
pub async fn run(request: RunRequest) -> Result<ExecuteResult, BackendError> {
    let activation = Activation::venv(&request.root);
    execute::run(RunSpec::for_request(&activation, &request)).await
}

/// Installs `request.packages` into the venv at its root with `installer` (see
/// [`install::install`]); with [`Installer::Pip`], the venv's own pip must be there.
pub async fn install(installer: Installer, request: InstallRequest) -> Result<(), BackendError> {
    let python = interpreter_path(&request.root);
    let activation = Activation::venv(&request.root);
    install::install(&installer, &python, &activation, &request).await
}

/// Uninstalls `request.packages` from the venv at its root with `installer`.
pub async fn uninstall(
    installer: Installer,
    request: UninstallRequest,
) -> Result<(), BackendError> {
    let python = interpreter_path(&request.root);
    let activation = Activation::venv(&request.root);
    install::uninstall(&installer, &python, &activation, &request).await
}
