//! Installing Python packages into environments: the installer the venv-layout backends
//! share, reading what an environment has installed ([`packages`]), and the venv layout
//! ([`venv_layout`]: the steps of a backend whose environments are virtual environments).
//!
//! The shared installer is `uv pip install --python <the environment's interpreter>` when a
//! `uv` is available, else pip: a pip kept outside the environment run as `--python` runs it (the
//! venv backend's, from its seed cache; [`Installer::ExternalPip`]), or the environment's own
//! (`python -m pip`). Either runs through [`wsp_exec::run`], so an install that is cancelled
//! kills everything the installer started, and nothing it starts outlives it.
//!
//! With pip, a request for wheels from local `find_links` directories and no index is first
//! offered to [`wsp_wheels`], which installs it without starting pip, with the result on disk
//! pip would give (its `INSTALLER` says `wsp`), when it can be sure to; anything else, and any
//! sandboxed install, runs pip as described. See `BENCHMARKS.md` for what that saves.
//!
//! An environment without pip gets stubs for the pip commands ([`write_pip_stubs`]), so that
//! `pip` run inside it refuses instead of finding the host's pip further along `PATH`.
//!
//! Both installers resolve the whole request before they touch the environment, so a request
//! that cannot be resolved (a missing package, conflicting requirements) changes nothing. While
//! the installer runs, the lines it prints for its own steps (resolving, downloading or
//! building, installing) become [`ProgressStep`]s.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod command;
mod confine;
mod external_pip;
mod fast_path;
mod helper;
mod index_files;
mod lock;
mod lock_install;
mod output;
mod pip_stub;
mod python;
mod steps;

pub mod packages;
pub mod pylock;
pub mod sources;
pub mod venv_layout;

use std::path::Path;

use wsp_backend::BackendError;
use wsp_exec::Activation;

pub use command::{find_uv, Installer, PIP_RUNNER};
pub use confine::{install_sandbox, uninstall_sandbox};
pub use external_pip::{no_pip, pip_of, venv_python_version, FIRST_EXTERNAL_PIP};
pub use helper::captured_output;
pub use lock::INSTALL_LOCK_FILE;
pub use lock_install::{install_lock, lock};
pub use output::MAX_DETAIL_BYTES;
pub use pip_stub::{remove_pip_stubs, write_pip_stubs};
pub use python::{provision_python, resolve_python, PythonDownloads};
/// What `environment/install` and `environment/uninstall` ask a backend for (defined with the
/// backend interface).
pub use wsp_backend::{
    InstallRequest, InstallSource, ProgressSink, ProgressStep, UninstallRequest,
};

/// Installs `request.packages` with `installer` for the environment interpreter `python`, run
/// under `activation`. A failure is [`InstallFailed`](wsp_protocol::FailureReason::InstallFailed) with the installer's own message (at
/// most [`MAX_DETAIL_BYTES`]).
pub async fn install(
    installer: &Installer,
    python: &Path,
    activation: &Activation,
    request: &InstallRequest,
) -> Result<(), BackendError> {
    // A cancelled fast-path install may still be removing what it wrote.
    wsp_wheels::settled(&request.root).await;
    let fast = installer.is_pip()
        && request.sandbox.is_none()
        && fast_path::try_install(
            fast_path::PipOf::Installer(installer),
            python,
            activation,
            request,
        )
        .await?;
    if !fast {
        let argv = installer.install_argv(python, request);
        output::run_installer(
            activation,
            &request.environment_id,
            &argv,
            installer.steps(),
            request.progress.clone(),
            request.sandbox.clone(),
        )
        .await?;
    }
    record_sources(request).await;
    Ok(())
}

/// Lets `installer` take its first look at the interpreter `python` of a new environment
/// now, ahead of the first install, where the installer keeps what it learns: uv queries an
/// interpreter it has not seen (a Python run: 50 ms in `BENCHMARKS.md`) and caches it, so
/// an install into a spare environment prepared this way starts without it. Changes nothing
/// in the environment. Nothing to do for pip.
pub async fn prepare_installer(installer: &Installer, python: &Path) -> Result<(), BackendError> {
    let Some(argv) = installer.look_argv(python) else {
        return Ok(());
    };
    let mut command = tokio::process::Command::new(&argv[0]);
    command.args(&argv[1..]);
    match helper::succeeded(&mut command, MAX_DETAIL_BYTES).await {
        Ok(_) => Ok(()),
        Err(detail) => Err(BackendError::failed(
            wsp_protocol::FailureReason::BackendError,
            format!("{} pip list failed: {detail}", argv[0]),
        )),
    }
}

/// Records where the packages of `request` came from; a failure is only logged.
async fn record_sources(request: &InstallRequest) {
    let (root, source) = (request.root.clone(), request.source.clone());
    let recorded =
        tokio::task::spawn_blocking(move || sources::record_sources(&root, &source)).await;
    if let Ok(Err(error)) = recorded {
        tracing::warn!(%error, "where the installed packages came from could not be recorded");
    }
}

/// Installs `request` without starting pip, where the fast path of [`install`] applies, as
/// a pip of `pip_version` run from outside the environment would have: a backend whose pip
/// still has to be made ready (a seed cache to fill) asks this first. `false`: nothing was
/// changed, and the request is left to [`install`].
pub async fn install_without_pip(
    pip_version: String,
    python: &Path,
    activation: &Activation,
    request: &InstallRequest,
) -> Result<bool, BackendError> {
    if request.sandbox.is_some() {
        return Ok(false);
    }
    wsp_wheels::settled(&request.root).await;
    let pip = fast_path::PipOf::Version(pip_version);
    let installed = fast_path::try_install(pip, python, activation, request).await?;
    if installed {
        record_sources(request).await;
    }
    Ok(installed)
}

/// Uninstalls `request.packages` with `installer` (see [`install`]).
pub async fn uninstall(
    installer: &Installer,
    python: &Path,
    activation: &Activation,
    request: &UninstallRequest,
) -> Result<(), BackendError> {
    wsp_wheels::settled(&request.root).await;
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
