//! The `uv` environment backend of WSP: environments made by `uv venv`.
//!
//! The shared inventory resolves the requested Python to an absolute interpreter path, and the
//! backend runs `uv venv --python <that path>`, so uv never meets a pyenv shim (uv stops at the
//! first shim that fails to run). The result is an ordinary venv, so describing it and running
//! commands in it work as for the built-in `venv` backend; inside `environment/execute`,
//! `VIRTUAL_ENV` points at the environment, so `uv pip install` installs into it. Packages
//! are installed and uninstalled with `uv pip --python <the environment's interpreter>`.
//!
//! When no `uv` can be found the backend still starts (so the server can answer everything
//! else) and every create answers `-31004` with reason `backend-unavailable`.
#![warn(missing_docs)]

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::Stdio;
use std::sync::Arc;
use std::task::{Context, Poll};
use wsp_protocol::FailureReason;

use serde_json::Value;
use tower::{BoxError, Service};
use wsp_backend::common;
use wsp_backend::execute::Activation;
use wsp_backend::install::{self, Installer};
use wsp_backend::interpreters::{Inventory, ResolveError};
use wsp_backend::{BackendError, BackendRequest, BackendResponse, ProvisionRequest, Provisioned};

/// The `uv` backend.
#[derive(Clone)]
pub struct UvBackend {
    inner: Arc<Inner>,
}

struct Inner {
    uv: Result<PathBuf, String>,
    inventory: Inventory,
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
            inner: Arc::new(Inner { uv, inventory }),
        }
    }

    /// The `uv` executable, or why there is none.
    pub fn uv(&self) -> Result<&Path, &str> {
        self.inner.uv.as_deref().map_err(String::as_str)
    }
}

pub use wsp_backend::install::find_uv;

/// The interpreter of a venv-layout environment.
pub fn interpreter_path(root: &Path) -> PathBuf {
    root.join("bin").join("python")
}

impl Inner {
    /// `uv pip`, the only installer of this backend.
    fn installer(&self) -> Result<Installer, BackendError> {
        match &self.uv {
            Ok(uv) => Ok(Installer::Uv(uv.clone())),
            Err(reason) => Err(BackendError::failed(
                FailureReason::BackendUnavailable,
                reason,
            )),
        }
    }

    async fn provision(&self, request: ProvisionRequest) -> Result<Provisioned, BackendError> {
        let uv = self
            .uv
            .as_ref()
            .map_err(|reason| BackendError::failed(FailureReason::BackendUnavailable, reason))?;
        let interpreter = self
            .inventory
            .resolve(&request.python_version)
            .await
            .map_err(
                |ResolveError::Unavailable {
                     requested,
                     available,
                 }| {
                    BackendError::VersionUnavailable {
                        requested,
                        available,
                    }
                },
            )?;
        let output = tokio::process::Command::new(uv)
            .arg("venv")
            .arg("--quiet")
            .arg("--no-config")
            .arg("--no-project")
            .arg("--allow-existing")
            .arg("--python")
            .arg(&interpreter.executable)
            .arg(&request.root)
            .env("UV_PYTHON_DOWNLOADS", "never")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .output()
            .await
            .map_err(|e| {
                BackendError::failed(
                    FailureReason::BackendUnavailable,
                    format!("running {}: {e}", uv.display()),
                )
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
}

impl Service<BackendRequest> for UvBackend {
    type Response = BackendResponse;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<BackendResponse, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: BackendRequest) -> Self::Future {
        let inner = self.inner.clone();
        Box::pin(async move {
            let response = match request {
                BackendRequest::Provision(request) => {
                    BackendResponse::Provisioned(inner.provision(request).await?)
                }
                BackendRequest::Describe(request) => BackendResponse::Described(
                    common::describe_by_scan(&request.root, interpreter_path(&request.root))
                        .await?,
                ),
                BackendRequest::Run(request) => BackendResponse::Ran(
                    common::run_activated(&Activation::venv(&request.root), &request).await?,
                ),
                BackendRequest::Remove(_) => BackendResponse::Removed,
                BackendRequest::Install(request) => {
                    let installer = inner.installer()?;
                    let python = interpreter_path(&request.root);
                    let activation = Activation::venv(&request.root);
                    install::install(&installer, &python, &activation, &request).await?;
                    BackendResponse::Installed
                }
                BackendRequest::Uninstall(request) => {
                    let installer = inner.installer()?;
                    let python = interpreter_path(&request.root);
                    let activation = Activation::venv(&request.root);
                    install::uninstall(&installer, &python, &activation, &request).await?;
                    BackendResponse::Uninstalled
                }
            };
            Ok(response)
        })
    }
}
