//! The `uv` environment backend of WSP: environments made by `uv venv`.
//!
//! The shared inventory resolves the requested Python to an absolute interpreter path, and the
//! backend runs `uv venv --python <that path>`, so uv never meets a pyenv shim (uv stops at the
//! first shim that fails to run). The result is an ordinary venv, so describing it and running
//! commands in it are the venv layout's ([`venv_layout`]), as for the built-in `venv` backend;
//! inside `environment/execute`, `VIRTUAL_ENV` points at the environment, so `uv pip install`
//! installs into it. Packages are installed and uninstalled with
//! `uv pip --python <the environment's interpreter>`. `uv venv` puts no pip into the
//! environment, so `bin/pip` is a stub that refuses ([`wsp_install::write_pip_stubs`]) rather
//! than let `pip` find the host's.
//!
//! When no `uv` can be found the backend still starts (so the server can answer everything
//! else) and every create answers `-31004` with reason `backend-unavailable`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::path::{Path, PathBuf};

use serde_json::Value;
use wsp_backend::{Backend, BackendError, InstallRequest, UninstallRequest};
use wsp_backend::{CanRelabelRequest, PrepareSpareRequest, RelabelRequest};
use wsp_backend::{DescribeRequest, Description, ReleaseRequest, RunRequest};
use wsp_backend::{
    LockInstallRequest, LockRequest, ProvisionRequest, Provisioned, ResolveRequest,
    ResolvedInterpreter,
};
use wsp_install::venv_layout::{self, interpreter_path};
use wsp_install::{captured_output, provision_python, resolve_python, Installer, PythonDownloads};
use wsp_interpreters::Inventory;
use wsp_protocol::ExecuteResult;
use wsp_protocol::FailureReason;

pub use wsp_install::find_uv;

/// The `uv` backend.
pub struct UvBackend {
    uv: Result<PathBuf, String>,
    inventory: Inventory,
    downloads: Option<PythonDownloads>,
}

impl UvBackend {
    /// A backend running `uv` (`configured`, else the first `uv` on `PATH`), resolving
    /// interpreters with `inventory`.
    pub fn new(configured: Option<PathBuf>, inventory: Inventory) -> Self {
        let uv = find_uv(configured);
        if let Err(reason) = &uv {
            tracing::warn!("the uv backend is unavailable: {reason}");
        }
        UvBackend {
            uv,
            inventory,
            downloads: None,
        }
    }

    /// Installs a requested Python that no locator finds with uv, then uses it.
    pub fn with_python_downloads(mut self, downloads: PythonDownloads) -> Self {
        self.downloads = Some(downloads);
        self
    }

    /// The `uv` executable, or why there is none.
    pub fn uv(&self) -> Result<&Path, BackendError> {
        self.uv
            .as_deref()
            .map_err(|reason| BackendError::failed(FailureReason::BackendUnavailable, reason))
    }

    /// `uv pip`, the only installer of this backend.
    fn installer(&self) -> Result<Installer, BackendError> {
        Ok(Installer::Uv(self.uv()?.to_owned()))
    }
}

impl Backend for UvBackend {
    async fn resolve_interpreter(
        &self,
        request: ResolveRequest,
    ) -> Result<Option<ResolvedInterpreter>, BackendError> {
        let versions = &request.python_version;
        let interpreter =
            resolve_python(&self.inventory, self.downloads.as_ref(), versions).await?;
        Ok(Some(ResolvedInterpreter {
            full_version: interpreter.version,
            path: interpreter.executable,
        }))
    }

    async fn provision(&self, request: ProvisionRequest) -> Result<Provisioned, BackendError> {
        let uv = self.uv()?;
        let downloads = self.downloads.as_ref();
        let interpreter = provision_python(&self.inventory, downloads, &request).await?;
        let output = captured_output(
            tokio::process::Command::new(uv)
                .args([
                    "venv",
                    "--quiet",
                    "--no-config",
                    "--no-project",
                    "--allow-existing",
                ])
                .arg("--python")
                .arg(&interpreter.executable)
                .arg(&request.root)
                .env("UV_PYTHON_DOWNLOADS", "never"),
        )
        .await
        .map_err(|e| {
            let running = format!("running {}", uv.display());
            BackendError::caused_by(FailureReason::BackendUnavailable, running, e)
        })?;
        if !output.status.success() {
            return Err(BackendError::failed(
                FailureReason::ProvisionFailed,
                format!(
                    "uv venv failed ({}): {}",
                    output.status,
                    String::from_utf8_lossy(&output.stderr).trim()
                ),
            ));
        }
        let interpreter_path = interpreter_path(&request.root);
        if !interpreter_path.exists() {
            return Err(BackendError::failed(
                FailureReason::ProvisionFailed,
                format!("uv venv left no {}", interpreter_path.display()),
            ));
        }
        let root = request.root.clone();
        tokio::task::spawn_blocking(move || wsp_install::write_pip_stubs(&root))
            .await
            .map_err(|e| BackendError::caused_by(FailureReason::ProvisionFailed, "pip stubs", e))?
            .map_err(|e| {
                BackendError::caused_by(FailureReason::ProvisionFailed, "writing pip stubs", e)
            })?;
        let mut extra = serde_json::Map::new();
        extra.insert("uv".into(), Value::String(uv.display().to_string()));
        extra.insert(
            "base_interpreter".into(),
            Value::String(interpreter.executable.display().to_string()),
        );
        Ok(Provisioned {
            python_full_version: interpreter.version,
            interpreter_path,
            extra,
        })
    }

    /// What `uv venv` writes holds the root, never the environment's name (no `--prompt` is
    /// given): a spare made ahead is already what a provision under any name writes.
    async fn can_relabel(&self, _request: CanRelabelRequest) -> Result<bool, BackendError> {
        Ok(true)
    }

    /// Nothing to rewrite (see [`UvBackend::can_relabel`]).
    async fn relabel(&self, _request: RelabelRequest) -> Result<(), BackendError> {
        Ok(())
    }

    /// uv takes its first look at the spare's interpreter now, ahead of the first install
    /// (see [`wsp_install::prepare_installer`]).
    async fn prepare_spare(&self, request: PrepareSpareRequest) -> Result<(), BackendError> {
        wsp_install::prepare_installer(&self.installer()?, &request.interpreter_path).await
    }

    async fn install(&self, request: InstallRequest) -> Result<(), BackendError> {
        venv_layout::install(self.installer()?, request).await
    }

    async fn uninstall(&self, request: UninstallRequest) -> Result<(), BackendError> {
        venv_layout::uninstall(self.installer()?, request).await
    }

    async fn describe(&self, request: DescribeRequest) -> Result<Description, BackendError> {
        wsp_install::venv_layout::describe(request.root).await
    }

    async fn run(&self, request: RunRequest) -> Result<ExecuteResult, BackendError> {
        wsp_install::venv_layout::run(request).await
    }

    async fn release(&self, _request: ReleaseRequest) -> Result<(), BackendError> {
        Ok(())
    }

    async fn lock(&self, request: LockRequest) -> Result<wsp_protocol::Lock, BackendError> {
        wsp_install::lock(&request.root, &self.installer()?).await
    }

    async fn install_lock(&self, request: LockInstallRequest) -> Result<(), BackendError> {
        venv_layout::install_lock(self.installer()?, request).await
    }
}
