//! The steps of a backend whose environments are virtual environments: what the venv and uv
//! backends share, and [`VenvLayout`], which makes a backend that only provisions venvs
//! ([`VenvProvider`]) a whole [`Backend`].
//!
//! A venv's interpreter is `<root>/bin/python`; its packages are the distributions in its
//! site-packages; it is activated by `VIRTUAL_ENV=<root>` and `<root>/bin` first on `PATH`;
//! packages go in with `uv pip --python <root>/bin/python` or its own pip.

use std::future::Future;
use std::path::{Path, PathBuf};

use wsp_backend::{Backend, BackendError, DescribeRequest, Description, ProvisionRequest};
use wsp_backend::{InstallRequest, Provisioned, ReleaseRequest, RunRequest, UninstallRequest};
use wsp_backend::{LockInstallRequest, LockRequest, ResolveRequest, ResolvedInterpreter};
use wsp_exec::{Activation, RunSpec};
use wsp_protocol::{ExecuteResult, FailureReason};

use crate::Installer;

/// A backend whose environments are virtual environments, as far as it differs from any
/// other: how it makes one, and which installer it uses. [`VenvLayout`] adds the rest.
pub trait VenvProvider: Send + Sync + 'static {
    /// Creates a venv in `request.root`, which exists and is empty (see
    /// [`Backend::provision`]).
    fn provision(
        &self,
        request: ProvisionRequest,
    ) -> impl Future<Output = Result<Provisioned, BackendError>> + Send;

    /// The interpreter a provision would build on (see [`Backend::resolve_interpreter`]).
    /// Default: only known while provisioning.
    fn resolve_interpreter(
        &self,
        request: ResolveRequest,
    ) -> impl Future<Output = Result<Option<ResolvedInterpreter>, BackendError>> + Send {
        let _ = request;
        std::future::ready(Ok(None))
    }

    /// The installer for `install` and `uninstall` in the venv at `root`. Default: the venv's
    /// own pip. [`crate::pip_of`] gives a pip from outside it, so the venv needs none.
    fn installer(
        &self,
        root: &Path,
    ) -> impl Future<Output = Result<Installer, BackendError>> + Send {
        let _ = root;
        std::future::ready(Ok(Installer::Pip))
    }
}

/// A [`VenvProvider`] as a [`Backend`]: it provisions, and every other step is the venv
/// layout's ([`describe`], [`run`], [`install()`], [`uninstall`]; nothing to release).
#[derive(Debug, Clone)]
pub struct VenvLayout<P>(pub P);

impl<P: VenvProvider> Backend for VenvLayout<P> {
    async fn provision(&self, request: ProvisionRequest) -> Result<Provisioned, BackendError> {
        self.0.provision(request).await
    }

    async fn describe(&self, request: DescribeRequest) -> Result<Description, BackendError> {
        describe(request.root).await
    }

    async fn resolve_interpreter(
        &self,
        request: ResolveRequest,
    ) -> Result<Option<ResolvedInterpreter>, BackendError> {
        self.0.resolve_interpreter(request).await
    }

    async fn run(&self, request: RunRequest) -> Result<ExecuteResult, BackendError> {
        run(request).await
    }

    async fn install(&self, request: InstallRequest) -> Result<(), BackendError> {
        install(self.0.installer(&request.root).await?, request).await
    }

    async fn uninstall(&self, request: UninstallRequest) -> Result<(), BackendError> {
        uninstall(self.0.installer(&request.root).await?, request).await
    }

    async fn release(&self, _request: ReleaseRequest) -> Result<(), BackendError> {
        Ok(())
    }

    async fn lock(&self, request: LockRequest) -> Result<wsp_protocol::Lock, BackendError> {
        let installer = self.0.installer(&request.root).await?;
        crate::lock(&request.root, &installer).await
    }

    async fn install_lock(&self, request: LockInstallRequest) -> Result<(), BackendError> {
        install_lock(self.0.installer(&request.root).await?, request).await
    }
}

/// Installs exactly what `request.lock` names into the venv at its root with `installer` (see
/// [`crate::install_lock`]).
pub async fn install_lock(
    installer: Installer,
    request: LockInstallRequest,
) -> Result<(), BackendError> {
    let python = interpreter_path(&request.root);
    let activation = Activation::venv(&request.root);
    crate::install_lock(&installer, &python, &activation, &request).await
}

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
    wsp_exec::run(RunSpec::for_request(&activation, &request)).await
}

/// Installs `request.packages` into the venv at its root with `installer` (see
/// [`crate::install`]); with [`Installer::Pip`], the venv's own pip must be there.
pub async fn install(installer: Installer, request: InstallRequest) -> Result<(), BackendError> {
    let python = interpreter_path(&request.root);
    let activation = Activation::venv(&request.root);
    crate::install(&installer, &python, &activation, &request).await
}

/// [`crate::install_without_pip`] into the venv at the request's root.
pub async fn install_without_pip(
    pip_version: String,
    request: &InstallRequest,
) -> Result<bool, BackendError> {
    let python = interpreter_path(&request.root);
    let activation = Activation::venv(&request.root);
    crate::install_without_pip(pip_version, &python, &activation, request).await
}

/// Uninstalls `request.packages` from the venv at its root with `installer`.
///
/// pip removes a directory whose every file it uninstalls, so uninstalling the last
/// distribution of a site-packages removes the directory itself: it is made again. Uninstalling
/// pip removes its scripts, so the pip stubs ([`crate::write_pip_stubs`]) take the free names
/// again. Neither is done in a confined environment, whose layout may be planted symlinks.
pub async fn uninstall(
    installer: Installer,
    request: UninstallRequest,
) -> Result<(), BackendError> {
    let python = interpreter_path(&request.root);
    let activation = Activation::venv(&request.root);
    let confined = request.sandbox.is_some();
    let root = request.root.clone();
    let site_packages = if confined {
        Vec::new()
    } else {
        let root = root.clone();
        tokio::task::spawn_blocking(move || crate::packages::site_packages_dirs(&root))
            .await
            .unwrap_or_default()
    };
    crate::uninstall(&installer, &python, &activation, &request).await?;
    if !confined {
        let restored = tokio::task::spawn_blocking(move || {
            for dir in &site_packages {
                std::fs::create_dir_all(dir)?;
            }
            crate::write_pip_stubs(&root)
        })
        .await;
        if let Ok(Err(error)) = restored {
            tracing::warn!(%error, "the layout could not be restored after an uninstall");
        }
    }
    Ok(())
}
