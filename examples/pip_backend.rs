//! A backend written from scratch: environments made by `python -m venv --without-pip`, with a
//! requirements list given at startup installed into each by the base interpreter's pip (as
//! `pip --python` does), so no environment pays for a pip of its own. Describing, running and
//! installing are the venv layout's (`VenvLayout`): `provision`, and which pip installs, are
//! all it has to write.
//!
//! `cargo run --example pip_backend -- [PIP INSTALL ARGUMENT]...` (say `rich`, or
//! `--no-index --find-links ./wheels mypkg`) runs the conformance kit against it with those
//! requirements (Python 3.12 must be installed); `tests/examples/example_backend.rs` runs it in
//! `cargo test`.

use std::path::Path;
use tokio::process::Command;
use wsp_backend::{BackendError, ProvisionRequest, Provisioned};
use wsp_conformance::{check_backend, BackendUnderTest};
use wsp_install::venv_layout::{interpreter_path, VenvLayout, VenvProvider};
use wsp_install::{no_pip, pip_of, venv_python_version, Installer};
use wsp_interpreters::Inventory;
use wsp_protocol::FailureReason;

/// `python -m venv` environments over `inventory`'s interpreters, with `requirements`
/// (arguments of `pip install`) installed into each.
pub struct PipBackend {
    pub inventory: Inventory,
    pub requirements: Vec<String>,
}

impl VenvProvider for PipBackend {
    async fn provision(&self, request: ProvisionRequest) -> Result<Provisioned, BackendError> {
        let base = self.inventory.resolve(&request.python_version).await?;
        let mut venv = Command::new(&base.executable);
        run(venv
            .args(["-m", "venv", "--without-pip"])
            .arg(&request.root))
        .await?;
        let python = interpreter_path(&request.root);
        if !self.requirements.is_empty() {
            let mut pip = Command::new(&base.executable);
            pip.args(["-m", "pip", "--python"]).arg(&python);
            pip.args(["install", "-q", "--disable-pip-version-check"]);
            run(pip.args(&self.requirements)).await?;
        }
        Ok(Provisioned {
            python_full_version: base.version,
            interpreter_path: python,
            extra: Default::default(),
        })
    }

    async fn installer(&self, root: &Path) -> Result<Installer, BackendError> {
        let version = venv_python_version(root)?;
        let request = version.parse().map_err(|_| no_pip(version))?;
        pip_of(&self.inventory.resolve(&request).await?.executable).await
    }
}

/// Runs `command` (killed if the create is cancelled); a failure says what it printed.
async fn run(command: &mut Command) -> Result<(), BackendError> {
    let output = command.kill_on_drop(true).output().await.map_err(|e| {
        BackendError::caused_by(FailureReason::SpawnFailed, format!("{command:?}"), e)
    })?;
    if output.status.success() {
        return Ok(());
    }
    let printed = String::from_utf8_lossy(&output.stderr);
    let detail = format!("{command:?} failed: {}", printed.trim());
    Err(BackendError::failed(FailureReason::ProvisionFailed, detail))
}

/// The backend for the kit, with `requirements`.
pub fn under_test(requirements: Vec<String>) -> BackendUnderTest {
    BackendUnderTest::new("pip", "3.12", move |ctx| {
        VenvLayout(PipBackend {
            inventory: ctx.inventory(),
            requirements: requirements.clone(),
        })
    })
}

#[tokio::main]
async fn main() {
    check_backend(under_test(std::env::args().skip(1).collect())).await;
}
