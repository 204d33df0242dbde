//! The conda environment backend of WSP: real conda prefixes, solved and installed with the
//! rattler crates, without a conda installation.
//!
//! [`CondaBackend`] is a `tower::Service` over the backend interface of [`wsp_backend`]:
//! - provisioning solves `python` at the requested version against the configured channels'
//!   repodata and installs the solution into the environment's root (the conda prefix);
//! - describing reads the prefix's `conda-meta/*.json` records and the Python distributions in
//!   its `site-packages`;
//! - running activates the prefix (`CONDA_PREFIX`, `<prefix>/bin` first on `PATH`, plus what
//!   its `etc/conda/activate.d` scripts export);
//! - installing solves the requested match specs together with what the prefix holds and
//!   applies the difference; uninstalling removes packages and what depends on them;
//! - removing deletes the prefix.
//!
//! Remote channels over HTTPS (such as the default, `conda-forge`) need the crate's `https`
//! feature, which brings in rustls; without it only `file://` and `http://` channels work and an
//! `https://` one is refused with `channel-unavailable`.
//!
//! The [`testing`] module builds local `file://` channels holding small `python` packages
//! over this machine's interpreters, so that all of this runs offline.
#![warn(missing_docs)]

mod activation;
mod channels;
mod describe;
mod install;
mod progress;
mod provision;
pub mod testing;

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use wsp_protocol::FailureReason;

use wsp_backend::execute::{self, RunSpec};
use wsp_backend::{BackendError, BackendRequest, BackendResponse, RemoveRequest, RunRequest};

/// The channel used when none is configured.
pub const DEFAULT_CHANNEL: &str = "conda-forge";

/// How a [`CondaBackend`] finds and caches packages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CondaConfig {
    /// The channels to solve against, highest priority first: names such as `conda-forge`
    /// or URLs, `file://` ones included. Default: `["conda-forge"]`.
    pub channels: Vec<String>,
    /// Where repodata and extracted packages are cached between environments.
    pub cache_dir: PathBuf,
    /// The conda platform (subdir) to install for, such as `linux-64`; `None` is this machine's.
    pub platform: Option<String>,
}

impl CondaConfig {
    /// The default channels with the given cache directory, for this machine's platform.
    pub fn new(cache_dir: impl Into<PathBuf>) -> Self {
        CondaConfig {
            channels: vec![DEFAULT_CHANNEL.to_owned()],
            cache_dir: cache_dir.into(),
            platform: None,
        }
    }
}

impl Default for CondaConfig {
    /// The default channels, cached in rattler's default cache directory (or, when that cannot
    /// be determined, under the system's temporary directory).
    fn default() -> Self {
        let cache_dir = rattler::default_cache_dir()
            .unwrap_or_else(|_| std::env::temp_dir().join("wsp-conda-cache"));
        CondaConfig::new(cache_dir)
    }
}

/// The conda backend: a cheap-to-clone `tower::Service` answering [`BackendRequest`]s.
#[derive(Debug, Clone)]
pub struct CondaBackend {
    config: Arc<CondaConfig>,
}

impl CondaBackend {
    /// A backend with the given configuration. Nothing is contacted until the first request.
    pub fn new(config: CondaConfig) -> Self {
        #[cfg(feature = "https")]
        {
            // Fails only when a provider is installed already, which is as good.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
        CondaBackend {
            config: Arc::new(config),
        }
    }

    /// The backend's configuration.
    pub fn config(&self) -> &CondaConfig {
        &self.config
    }

    async fn handle(
        config: Arc<CondaConfig>,
        request: BackendRequest,
    ) -> Result<BackendResponse, BackendError> {
        match request {
            BackendRequest::Provision(request) => provision::provision(&config, &request)
                .await
                .map(BackendResponse::Provisioned),
            BackendRequest::Describe(request) => describe::describe(&request.root)
                .await
                .map(BackendResponse::Described),
            BackendRequest::Run(request) => run(&config, &request).await.map(BackendResponse::Ran),
            BackendRequest::Remove(request) => {
                remove(&request).await.map(|()| BackendResponse::Removed)
            }
            BackendRequest::Install(request) => install::install(&config, &request)
                .await
                .map(|()| BackendResponse::Installed),
            BackendRequest::Uninstall(request) => install::uninstall(&config, &request)
                .await
                .map(|()| BackendResponse::Uninstalled),
        }
    }
}

impl tower::Service<BackendRequest> for CondaBackend {
    type Response = BackendResponse;
    type Error = tower::BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<BackendResponse, tower::BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: BackendRequest) -> Self::Future {
        let config = Arc::clone(&self.config);
        Box::pin(async move {
            CondaBackend::handle(config, request)
                .await
                .map_err(|error| Box::new(error) as tower::BoxError)
        })
    }
}

/// Runs a command with the prefix activated.
async fn run(
    config: &CondaConfig,
    request: &RunRequest,
) -> Result<wsp_protocol::ExecuteResult, BackendError> {
    let activation = activation::activate(config, &request.root).await;
    execute::run(RunSpec {
        activation: &activation,
        environment_id: &request.environment_id,
        argv: &request.argv,
        cwd: &request.cwd,
        env: &request.env,
        options: request.options.clone(),
    })
    .await
}

/// Deletes the prefix; a prefix that is already gone is removed.
async fn remove(request: &RemoveRequest) -> Result<(), BackendError> {
    match tokio::fs::remove_dir_all(&request.root).await {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(BackendError::failed(
            FailureReason::custom("remove-failed"),
            format!("removing {}: {error}", request.root.display()),
        )),
    }
}
