//! The conda environment backend of WSP: real conda prefixes, solved and installed with the
//! rattler crates, without a conda installation.
//!
//! [`CondaBackend`] is a [`Backend`]:
//! - provisioning solves `python` at the requested version against the configured channels'
//!   repodata and installs the solution into the environment's root (the conda prefix);
//! - describing reads the prefix's `conda-meta/*.json` records and the Python distributions in
//!   its `site-packages`;
//! - running activates the prefix (`CONDA_PREFIX`, `<prefix>/bin` first on `PATH`, plus what
//!   its `etc/conda/activate.d` scripts export);
//! - installing solves the requested match specs together with what the prefix holds and
//!   applies the difference; uninstalling removes packages and what depends on them.
//!
//! A prefix's records and a channel's packages are untrusted ([`untrusted`]): before anything
//! is linked or unlinked, every path they name must be a plain relative path inside the prefix
//! and outside `conda-meta/`, and removal never follows a symlink in the prefix. A refusal is
//! `install-failed` (`provision-failed` when creating) and leaves the prefix as it was.
//!
//! Remote channels over HTTPS (such as the default, `conda-forge`) need the crate's `https`
//! feature, which brings in rustls; without it only `file://` and `http://` channels work and an
//! `https://` one is refused with `channel-unavailable`.
//!
//! The dev-only `wsp-testing` crate (feature `conda`) builds local `file://` channels holding
//! small `python` packages over this machine's interpreters, so that all of this runs offline.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod activation;
mod channels;
mod describe;
mod install;
mod installed;
mod link;
mod lock;
mod prefix_dir;
mod progress;
mod provision;
mod unlink;
pub mod untrusted;

use std::path::PathBuf;

use wsp_backend::{Backend, BackendError, DescribeRequest, Description, RunRequest};
use wsp_backend::{
    InstallRequest, LockInstallRequest, LockRequest, ProvisionRequest, Provisioned, ReleaseRequest,
    UninstallRequest,
};
use wsp_backend::{ResolveRequest, ResolvedInterpreter};
use wsp_exec::RunSpec;
use wsp_protocol::ExecuteResult;

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

/// The conda backend.
#[derive(Debug)]
pub struct CondaBackend {
    config: CondaConfig,
}

impl CondaBackend {
    /// A backend with the given configuration. Nothing is contacted, and nothing started,
    /// until the first request.
    pub fn new(config: CondaConfig) -> Self {
        CondaBackend { config }
    }

    /// What the first request of any conda backend in a process sets up, once: rayon's global
    /// pool (where rattler links files) with a panic handler, so that a panic there fails one
    /// request instead of aborting the process, and rustls' crypto provider. Not at
    /// construction: a server that never serves a conda request starts no pool threads and
    /// maps none of that code.
    fn started(&self) {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            link::contain_rayon_panics();
            #[cfg(feature = "https")]
            {
                // Fails only when a provider is installed already, which is as good.
                let _ = rustls::crypto::ring::default_provider().install_default();
            }
        });
    }
}

impl Backend for CondaBackend {
    async fn provision(&self, request: ProvisionRequest) -> Result<Provisioned, BackendError> {
        self.started();
        provision::provision(&self.config, &request).await
    }

    async fn describe(&self, request: DescribeRequest) -> Result<Description, BackendError> {
        self.started();
        describe::describe(&request.root).await
    }

    /// The newest python of the channels that the version matches (see `provision::resolve`).
    async fn resolve_interpreter(
        &self,
        request: ResolveRequest,
    ) -> Result<Option<ResolvedInterpreter>, BackendError> {
        self.started();
        provision::resolve(&self.config, &request).await
    }

    /// Runs a command with the prefix activated.
    async fn run(&self, request: RunRequest) -> Result<ExecuteResult, BackendError> {
        self.started();
        let activation = activation::activate(&self.config, &request.root).await;
        wsp_exec::run(RunSpec::for_request(&activation, &request)).await
    }

    async fn install(&self, request: InstallRequest) -> Result<(), BackendError> {
        self.started();
        install::install(&self.config, &request).await
    }

    async fn uninstall(&self, request: UninstallRequest) -> Result<(), BackendError> {
        self.started();
        install::uninstall(&self.config, &request).await
    }

    /// Nothing lives outside the prefix.
    async fn release(&self, _request: ReleaseRequest) -> Result<(), BackendError> {
        Ok(())
    }

    /// An `@EXPLICIT` spec of the prefix's records (`lock-unsupported` when pip installed
    /// into it).
    async fn lock(&self, request: LockRequest) -> Result<wsp_protocol::Lock, BackendError> {
        self.started();
        lock::lock(&request.root).await
    }

    async fn install_lock(&self, request: LockInstallRequest) -> Result<(), BackendError> {
        self.started();
        lock::install_lock(&self.config, &request).await
    }
}
