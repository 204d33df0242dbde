//! [`VenvBackend`]: the venv backend as a `tower::Service` over [`BackendRequest`]s.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use wsp_protocol::FailureReason;

use serde_json::{Map, Value};
use wsp_backend::common;
use wsp_backend::execute::Activation;
use wsp_backend::install::Installer;
use wsp_backend::interpreters::{Inventory, ResolveError};
use wsp_backend::{
    BackendError, BackendRequest, BackendResponse, DescribeRequest, Description, ProvisionRequest,
    Provisioned, RemoveRequest, RunRequest,
};

use crate::{create_venv, interpreter_path, SeedOutcome, VenvMode, VenvOptions};

/// The venv backend: resolves interpreters from an [`Inventory`] and creates virtual
/// environments with [`create_venv`]. Cloning is cheap and shares the inventory.
#[derive(Clone)]
pub struct VenvBackend {
    inventory: Inventory,
    options: VenvOptions,
    installer: Installer,
}

impl VenvBackend {
    /// A backend resolving interpreters from `inventory` and creating environments with
    /// `options` (its `prompt` is ignored: each environment's prompt is its name). Packages
    /// are installed with the first `uv` on `PATH`, else with each environment's own pip.
    pub fn new(inventory: Inventory, options: VenvOptions) -> Self {
        VenvBackend {
            inventory,
            options,
            installer: Installer::detect(None),
        }
    }

    /// Installs packages with `installer`: `uv pip`, or the environment's own pip (seeded
    /// from the seed cache into an environment that has none).
    pub fn with_installer(mut self, installer: Installer) -> Self {
        self.installer = installer;
        self
    }

    /// What installs packages.
    pub fn installer(&self) -> &Installer {
        &self.installer
    }

    async fn handle(self, request: BackendRequest) -> Result<BackendResponse, BackendError> {
        match request {
            BackendRequest::Provision(request) => self
                .provision(request)
                .await
                .map(BackendResponse::Provisioned),
            BackendRequest::Describe(request) => {
                describe(request).await.map(BackendResponse::Described)
            }
            BackendRequest::Run(request) => run(request).await.map(BackendResponse::Ran),
            BackendRequest::Remove(request) => {
                remove(request).await.map(|()| BackendResponse::Removed)
            }
            BackendRequest::Install(request) => {
                crate::install::install(&self.installer, &self.inventory, &self.options, &request)
                    .await
                    .map(|()| BackendResponse::Installed)
            }
            BackendRequest::Uninstall(request) => {
                crate::install::uninstall(&self.installer, &self.inventory, &self.options, &request)
                    .await
                    .map(|()| BackendResponse::Uninstalled)
            }
        }
    }

    async fn provision(&self, request: ProvisionRequest) -> Result<Provisioned, BackendError> {
        let interpreter = self
            .inventory
            .resolve(&request.python_version)
            .await
            .map_err(|error| match error {
                ResolveError::Unavailable {
                    requested,
                    available,
                } => BackendError::VersionUnavailable {
                    requested,
                    available,
                },
            })?;
        let options = VenvOptions {
            prompt: Some(prompt_for(&request.name)),
            ..self.options.clone()
        };
        let created = create_venv(&request.root, &interpreter, &options)
            .await
            .map_err(|error| BackendError::failed(FailureReason::ProvisionFailed, error))?;
        let mut extra = Map::new();
        extra.insert(
            "base_interpreter".to_owned(),
            Value::String(interpreter.executable.to_string_lossy().into_owned()),
        );
        let mode = match options.mode {
            VenvMode::Native => "native",
            VenvMode::Stdlib => "stdlib",
        };
        extra.insert("venv_writer".to_owned(), Value::String(mode.to_owned()));
        if let Some(seed) = created.seed {
            let seed = match seed {
                SeedOutcome::CacheHit => "cache-hit",
                SeedOutcome::CacheFilled => "cache-filled",
                SeedOutcome::Ensurepip => "ensurepip",
            };
            extra.insert("pip_seed".to_owned(), Value::String(seed.to_owned()));
        }
        Ok(Provisioned {
            python_full_version: interpreter.version,
            interpreter_path: created.interpreter_path,
            extra,
        })
    }
}

/// The environment's name as a prompt: names may hold any character, prompts no control
/// characters.
fn prompt_for(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_control() { '_' } else { c })
        .collect()
}

async fn describe(request: DescribeRequest) -> Result<Description, BackendError> {
    common::describe_by_scan(&request.root, interpreter_path(&request.root)).await
}

async fn run(request: RunRequest) -> Result<wsp_protocol::ExecuteResult, BackendError> {
    common::run_activated(&Activation::venv(&request.root), &request).await
}

async fn remove(request: RemoveRequest) -> Result<(), BackendError> {
    match tokio::fs::remove_dir_all(&request.root).await {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(BackendError::failed(
            FailureReason::custom("remove-failed"),
            format!("cannot remove {}: {error}", request.root.display()),
        )),
    }
}

impl tower::Service<BackendRequest> for VenvBackend {
    type Response = BackendResponse;
    type Error = tower::BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<BackendResponse, tower::BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: BackendRequest) -> Self::Future {
        let backend = self.clone();
        Box::pin(async move { backend.handle(request).await.map_err(tower::BoxError::from) })
    }
}
