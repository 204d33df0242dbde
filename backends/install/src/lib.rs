//! Installing Python packages into environments: what `environment/install` and
//! `environment/uninstall` ask a backend for, and the installer the venv-layout backends share.
//!
//! The shared installer is `uv pip install --python <the environment's interpreter>` when a
//! `uv` is available, else the environment's own pip (`python -m pip`; the backend makes sure
//! pip is there first). Either runs through [`crate::execute::run`], so an install that is
//! cancelled kills everything the installer started, and nothing it starts outlives it.
//!
//! Both installers resolve the whole request before they touch the environment, so a request
//! that cannot be resolved (a missing package, conflicting requirements) changes nothing. While
//! the installer runs, the lines it prints for its own steps (resolving, downloading or
//! building, installing) become [`ProgressStep`]s.

mod command;
mod confine;
mod lock;
mod output;
mod python;
mod steps;
pub mod testing;

use std::path::{Path, PathBuf};

use tokio::sync::mpsc;

use crate::execute::{Activation, SandboxPolicy};
use crate::BackendError;

pub use command::{find_uv, Installer};
pub use confine::{install_sandbox, uninstall_sandbox};
pub use lock::{lock_environment, InstallLock, INSTALL_LOCK_FILE};
pub use output::MAX_DETAIL_BYTES;
pub use python::{resolve_python, PythonDownloads};

/// Where an installer looks for packages: the request's fields over the server's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InstallSource {
    /// Directories (absolute paths) or URLs of distributions to look in.
    pub find_links: Vec<String>,
    /// The index to use instead of the installer's default.
    pub index_url: Option<String>,
    /// Use no index at all, only `find_links`.
    pub no_index: bool,
}

/// One step of an install, as the installer reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgressStep {
    /// What happened, in the installer's words (`Resolved 3 packages in 12ms`).
    pub message: String,
    /// How far along the install is, 0–100, when that is known.
    pub percentage: Option<u32>,
}

/// Where an install sends its [`ProgressStep`]s, in order; the install returns only after its
/// last step was sent. A full channel makes the installer wait.
pub type ProgressSink = mpsc::Sender<ProgressStep>;

/// Install packages into the environment at `root`.
#[derive(Debug, Clone)]
pub struct InstallRequest {
    /// The environment's root.
    pub root: PathBuf,
    /// The environment's id (the installer runs as a command of that environment).
    pub environment_id: String,
    /// What to install: PEP 508 requirements, or conda match specs for a conda backend.
    pub packages: Vec<String>,
    /// Where to look.
    pub source: InstallSource,
    /// Install the newest matching versions even where a matching version is installed.
    pub upgrade: bool,
    /// Where the installer's steps go.
    pub progress: Option<ProgressSink>,
    /// Runs the installer in this sandbox (see [`install_sandbox`]): for an environment that
    /// has run sandboxed code. `None`: unconfined.
    pub sandbox: Option<SandboxPolicy>,
}

/// Remove packages, by name, from the environment at `root`; names that are not installed are
/// ignored.
#[derive(Debug, Clone)]
pub struct UninstallRequest {
    /// The environment's root.
    pub root: PathBuf,
    /// The environment's id.
    pub environment_id: String,
    /// The names.
    pub packages: Vec<String>,
    /// Runs the uninstaller in this sandbox (see [`uninstall_sandbox`]). `None`: unconfined.
    pub sandbox: Option<SandboxPolicy>,
}

/// Installs `request.packages` with `installer` for the environment interpreter `python`, run
/// under `activation`. A failure is [`InstallFailed`](wsp_protocol::FailureReason::InstallFailed) with the installer's own message (at
/// most [`MAX_DETAIL_BYTES`]).
pub async fn install(
    installer: &Installer,
    python: &Path,
    activation: &Activation,
    request: &InstallRequest,
) -> Result<(), BackendError> {
    let argv = installer.install_argv(python, request);
    let kind = installer.steps();
    output::run_installer(
        activation,
        &request.environment_id,
        &argv,
        kind,
        request.progress.clone(),
        request.sandbox.clone(),
    )
    .await
}

/// Uninstalls `request.packages` with `installer` (see [`install`]).
pub async fn uninstall(
    installer: &Installer,
    python: &Path,
    activation: &Activation,
    request: &UninstallRequest,
) -> Result<(), BackendError> {
    let confined = request.sandbox.is_some();
    let argv = installer.uninstall_argv(python, &request.packages, confined);
    output::run_installer(
        activation,
        &request.environment_id,
        &argv,
        installer.steps(),
        None,
        request.sandbox.clone(),
    )
    .await
}
