//! [`VenvBackend`]: the venv backend, a [`Backend`] that writes venvs with [`create_venv`].

use serde_json::{Map, Value};
use wsp_backend::{Backend, BackendError, InstallRequest, UninstallRequest};
use wsp_backend::{CanRelabelRequest, PrepareSpareRequest, RelabelRequest};
use wsp_backend::{DescribeRequest, Description, ReleaseRequest, RunRequest};
use wsp_backend::{
    LockInstallRequest, LockRequest, ProvisionRequest, Provisioned, ResolveRequest,
    ResolvedInterpreter,
};
use wsp_install::{provision_python, resolve_python, Installer, PythonDownloads};
use wsp_interpreters::Inventory;
use wsp_protocol::ExecuteResult;
use wsp_protocol::FailureReason;

use crate::install::{ExternalPip, PipBase};
use crate::{create_venv, SeedOutcome, VenvMode, VenvOptions};

/// The venv backend: resolves interpreters from an [`Inventory`] and creates virtual
/// environments with [`create_venv`]; describes, runs and installs as every venv does
/// ([`wsp_install::venv_layout`]).
pub struct VenvBackend {
    inventory: Inventory,
    options: VenvOptions,
    installer: Installer,
    downloads: Option<PythonDownloads>,
    /// The seed cache pip is taken from when `options` names none.
    fallback_seed_cache: tokio::sync::OnceCell<tempfile::TempDir>,
}

impl VenvBackend {
    /// A backend resolving interpreters from `inventory` and creating environments with
    /// `options` (its `prompt` is ignored: each environment's prompt is its name). Packages
    /// are installed with the first `uv` on `PATH`, else with pip from the seed cache, run from
    /// outside the environment.
    pub fn new(inventory: Inventory, options: VenvOptions) -> Self {
        VenvBackend {
            inventory,
            options,
            installer: Installer::detect(None),
            downloads: None,
            fallback_seed_cache: tokio::sync::OnceCell::new(),
        }
    }

    /// Installs packages with `installer`: `uv pip`, or (for [`Installer::Pip`]) the seed
    /// cache's pip for the environment's Python version, run from outside the environment as
    /// `pip --python` runs it (a temporary seed cache when the options name none). No pip is
    /// put into the environment.
    pub fn with_installer(mut self, installer: Installer) -> Self {
        self.installer = installer;
        self
    }

    /// Installs a requested Python that no locator finds with uv, then uses it.
    pub fn with_python_downloads(mut self, downloads: PythonDownloads) -> Self {
        self.downloads = Some(downloads);
        self
    }

    /// The installer for the environment at `root`, and what must live while it runs: for
    /// pip, the seed cache's, replicated where a sandbox (`confined`) can read it.
    async fn installer_for(
        &self,
        root: &std::path::Path,
        confined: bool,
    ) -> Result<(Installer, Option<ExternalPip>), BackendError> {
        if self.installer != Installer::Pip {
            return Ok((self.installer.clone(), None));
        }
        let base = crate::install::pip_base(&self.inventory, root).await?;
        self.external_pip(&base, confined).await
    }

    /// The seed cache's pip for a venv of `base` (see [`VenvBackend::installer_for`]).
    async fn external_pip(
        &self,
        base: &PipBase,
        confined: bool,
    ) -> Result<(Installer, Option<ExternalPip>), BackendError> {
        let cache = match &self.options.seed_cache_dir {
            Some(dir) => dir.clone(),
            None => crate::install::fallback_cache(&self.fallback_seed_cache).await?,
        };
        let pip = crate::install::external_pip(base, self.options.mode, &cache, confined).await?;
        Ok((pip.installer.clone(), Some(pip)))
    }

    /// For an unconfined install whose pip is not in the seed cache yet: the version that pip
    /// will have (see [`crate::install::pip_to_fill`]).
    async fn pip_to_fill(&self, base: &PipBase, confined: bool) -> Option<String> {
        let cache = self.options.seed_cache_dir.as_ref().filter(|_| !confined)?;
        crate::install::pip_to_fill(base, cache).await
    }
}

impl Backend for VenvBackend {
    async fn resolve_interpreter(
        &self,
        request: ResolveRequest,
    ) -> Result<Option<ResolvedInterpreter>, BackendError> {
        let interpreter = resolve_python(
            &self.inventory,
            self.downloads.as_ref(),
            &request.python_version,
        )
        .await?;
        Ok(Some(ResolvedInterpreter {
            full_version: interpreter.version,
            path: interpreter.executable,
        }))
    }

    async fn provision(&self, request: ProvisionRequest) -> Result<Provisioned, BackendError> {
        let downloads = self.downloads.as_ref();
        let interpreter = provision_python(&self.inventory, downloads, &request).await?;
        let options = VenvOptions {
            prompt: Some(prompt_for(&request.name)),
            ..self.options.clone()
        };
        let created = create_venv(&request.root, &interpreter, &options)
            .await
            .map_err(|error| {
                let doing = format!(
                    "creating a virtual environment in {}",
                    request.root.display()
                );
                BackendError::caused_by(FailureReason::ProvisionFailed, doing, error)
            })?;
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

    /// Environments the native writer makes can be relabelled; the stdlib's cannot.
    async fn can_relabel(&self, _request: CanRelabelRequest) -> Result<bool, BackendError> {
        Ok(self.options.mode == VenvMode::Native)
    }

    /// Rewrites the prompt in `pyvenv.cfg` and the activation scripts (see `relabel.rs`).
    async fn relabel(&self, request: RelabelRequest) -> Result<(), BackendError> {
        let prompt = prompt_for(&request.name);
        let root = request.root.clone();
        let relabelled =
            tokio::task::spawn_blocking(move || crate::relabel::relabel(&root, &prompt))
                .await
                .map_err(crate::VenvError::Task)
                .and_then(|relabelled| relabelled);
        relabelled.map_err(|error| {
            let doing = format!("renaming the environment in {}", request.root.display());
            BackendError::caused_by(FailureReason::ProvisionFailed, doing, error)
        })
    }

    /// With uv as the installer, uv takes its first look at the spare's interpreter now (see
    /// [`wsp_install::prepare_installer`]); pip keeps nothing to prepare.
    async fn prepare_spare(&self, request: PrepareSpareRequest) -> Result<(), BackendError> {
        wsp_install::prepare_installer(&self.installer, &request.interpreter_path).await
    }

    async fn install(&self, request: InstallRequest) -> Result<(), BackendError> {
        if self.installer != Installer::Pip {
            return wsp_install::venv_layout::install(self.installer.clone(), request).await;
        }
        let confined = request.sandbox.is_some();
        let base = crate::install::pip_base(&self.inventory, &request.root).await?;
        if let Some(pip_version) = self.pip_to_fill(&base, confined).await {
            // The fast path needs only pip's version: the seed cache is filled only for pip.
            if wsp_install::venv_layout::install_without_pip(pip_version, &request).await? {
                return Ok(());
            }
        }
        let (installer, _pip) = self.external_pip(&base, confined).await?;
        wsp_install::venv_layout::install(installer, request).await
    }

    async fn uninstall(&self, request: UninstallRequest) -> Result<(), BackendError> {
        let confined = request.sandbox.is_some();
        let (installer, _pip) = self.installer_for(&request.root, confined).await?;
        wsp_install::venv_layout::uninstall(installer, request).await
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
        let (installer, _pip) = self.installer_for(&request.root, false).await?;
        wsp_install::lock(&request.root, &installer).await
    }

    async fn install_lock(&self, request: LockInstallRequest) -> Result<(), BackendError> {
        let confined = request.sandbox.is_some();
        let (installer, _pip) = self.installer_for(&request.root, confined).await?;
        wsp_install::venv_layout::install_lock(installer, request).await
    }
}

/// The environment's name as a prompt: names may hold any character, prompts no control
/// characters.
fn prompt_for(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_control() { '_' } else { c })
        .collect()
}
