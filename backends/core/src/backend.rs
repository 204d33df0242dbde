//! The backend interface: a `tower::Service` that provisions, describes, runs in and removes
//! environments.
//!
//! Everything else (the state store, locks, ids, the name rules, interpreter discovery, the
//! order of checks) is shared and lives outside the backend, so a backend only does the four
//! things that differ between environment kinds. Because it is an ordinary `Service`, a backend
//! can be wrapped in any tower layer (`TimeoutLayer`, `ConcurrencyLimitLayer`, `RateLimitLayer`)
//! and still plugs into the server: the server accepts any error that converts into
//! [`tower::BoxError`] and reads a [`BackendError`] out of it when there is one.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use wsp_protocol::{ExecuteResult, FailureReason, Package};

use crate::interpreters::{PythonVersion, VersionRequest};

/// One request to a backend.
#[derive(Debug, Clone)]
pub enum BackendRequest {
    /// Create an environment in an empty directory.
    Provision(ProvisionRequest),
    /// Describe an existing environment.
    Describe(DescribeRequest),
    /// Run a command inside an existing environment.
    Run(RunRequest),
    /// Remove an environment's files.
    Remove(RemoveRequest),
    /// Install packages into an existing environment (`environment/install`, and
    /// `environment/create` with `packages` before the environment is committed).
    Install(crate::install::InstallRequest),
    /// Remove packages from an existing environment (`environment/uninstall`).
    Uninstall(crate::install::UninstallRequest),
}

/// The answer to a [`BackendRequest`]; the variant matches the request's.
#[derive(Debug, Clone)]
pub enum BackendResponse {
    /// Answer to [`BackendRequest::Provision`].
    Provisioned(Provisioned),
    /// Answer to [`BackendRequest::Describe`].
    Described(Description),
    /// Answer to [`BackendRequest::Run`].
    Ran(ExecuteResult),
    /// Answer to [`BackendRequest::Remove`].
    Removed,
    /// Answer to [`BackendRequest::Install`].
    Installed,
    /// Answer to [`BackendRequest::Uninstall`].
    Uninstalled,
}

/// Create an environment at `root`.
#[derive(Debug, Clone)]
pub struct ProvisionRequest {
    /// The environment's root. It exists and is empty; the backend fills it.
    pub root: PathBuf,
    /// The environment's name, for messages and metadata.
    pub name: String,
    /// The Python the client asked for.
    pub python_version: VersionRequest,
}

/// What provisioning produced.
#[derive(Debug, Clone)]
pub struct Provisioned {
    /// The resolved `X.Y.Z`.
    pub python_full_version: PythonVersion,
    /// The environment's own interpreter: absolute, inside `root`.
    pub interpreter_path: PathBuf,
    /// Backend-specific facts merged into the environment's `extra`.
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// Describe the environment at `root`.
#[derive(Debug, Clone)]
pub struct DescribeRequest {
    /// The environment's root.
    pub root: PathBuf,
}

/// What a backend knows about a live environment.
#[derive(Debug, Clone)]
pub struct Description {
    /// The environment's own interpreter: absolute, inside the root.
    pub interpreter_path: PathBuf,
    /// Installed distributions, sorted by normalized name.
    pub installed_packages: Vec<Package>,
}

/// Run a command in the environment at `root`.
#[derive(Debug, Clone)]
pub struct RunRequest {
    /// The environment's root.
    pub root: PathBuf,
    /// The environment's id, exported to the child as `WSP_ENVIRONMENT_ID`.
    pub environment_id: String,
    /// The command; never empty.
    pub argv: Vec<String>,
    /// The working directory: resolved once, inside `root`, and held open
    /// ([`crate::execute::resolve_cwd`]).
    pub cwd: crate::execute::WorkingDir,
    /// Variables the request sets on top of the activation environment.
    pub env: BTreeMap<String, String>,
    /// stdin, timeout, output limit and streaming, resource limits.
    pub options: crate::execute::RunOptions,
}

/// Remove the environment at `root`.
#[derive(Debug, Clone)]
pub struct RemoveRequest {
    /// The environment's root.
    pub root: PathBuf,
}

/// Why a backend request failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BackendError {
    /// No interpreter or package satisfies the requested Python version (`-31003`).
    #[error("Python {requested} is not available")]
    VersionUnavailable {
        /// The version as the client asked for it.
        requested: String,
        /// The versions that are available, ascending.
        available: Vec<String>,
    },
    /// Anything else (`-31004`): a typed `reason`, a human-readable `detail`, and the error
    /// that caused it, if any, kept whole so that its chain can be logged.
    #[error("{reason}: {detail}")]
    Failed {
        /// The machine-readable cause.
        reason: FailureReason,
        /// A human-readable explanation.
        detail: String,
        /// The underlying error.
        #[source]
        source: Option<Arc<dyn std::error::Error + Send + Sync>>,
    },
}

impl BackendError {
    /// A [`BackendError::Failed`] with the given reason and detail and no source.
    pub fn failed(reason: FailureReason, detail: impl std::fmt::Display) -> Self {
        BackendError::Failed {
            reason,
            detail: detail.to_string(),
            source: None,
        }
    }

    /// A [`BackendError::Failed`] caused by `source`: `detail` says what was being done, the
    /// source why it failed (the detail on the wire ends with the source's message).
    pub fn caused_by(
        reason: FailureReason,
        detail: impl std::fmt::Display,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        BackendError::Failed {
            reason,
            detail: format!("{detail}: {source}"),
            source: Some(Arc::new(source)),
        }
    }

    /// The error's sources, outermost first, each as its message (for logs).
    pub fn source_chain(&self) -> Vec<String> {
        let mut chain = Vec::new();
        let mut next = std::error::Error::source(self);
        while let Some(error) = next {
            chain.push(error.to_string());
            next = error.source();
        }
        chain
    }
}

/// A type-erased backend, as the server stores it. Build one from any backend with
/// [`boxed`].
pub type BoxBackend =
    tower::util::BoxCloneSyncService<BackendRequest, BackendResponse, tower::BoxError>;

/// Type-erases any backend service, wrapped in any tower layers.
///
/// The service need not be `Clone` (tower's `RateLimit` and `Buffer`-less stacks are not): it
/// is shared behind a lock that is held only while the service becomes ready and is called, so
/// its backpressure still applies and the response futures still run concurrently.
pub fn boxed<S>(service: S) -> BoxBackend
where
    S: tower::Service<BackendRequest, Response = BackendResponse> + Send + 'static,
    S::Error: Into<tower::BoxError>,
    S::Future: Send + 'static,
{
    BoxBackend::new(Shared {
        inner: std::sync::Arc::new(tokio::sync::Mutex::new(service)),
    })
}

struct Shared<S> {
    inner: std::sync::Arc<tokio::sync::Mutex<S>>,
}

impl<S> Clone for Shared<S> {
    fn clone(&self) -> Self {
        Shared {
            inner: self.inner.clone(),
        }
    }
}

type BackendFuture = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<BackendResponse, tower::BoxError>> + Send>,
>;

impl<S> tower::Service<BackendRequest> for Shared<S>
where
    S: tower::Service<BackendRequest, Response = BackendResponse> + Send + 'static,
    S::Error: Into<tower::BoxError>,
    S::Future: Send + 'static,
{
    type Response = BackendResponse;
    type Error = tower::BoxError;
    type Future = BackendFuture;

    fn poll_ready(
        &mut self,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), tower::BoxError>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: BackendRequest) -> BackendFuture {
        let inner = self.inner.clone();
        Box::pin(async move {
            let response = {
                let mut service = inner.lock().await;
                let ready = tower::ServiceExt::ready(&mut *service)
                    .await
                    .map_err(Into::into)?;
                ready.call(request)
            };
            response.await.map_err(Into::into)
        })
    }
}
