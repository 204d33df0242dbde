//! The backend interface: the [`Backend`] trait, whose named async methods provision,
//! describe, run in, install into and uninstall from environments.
//!
//! Everything else (the state store, locks, ids, the name rules, interpreter discovery, the
//! order of checks, deleting an environment's files) is shared and lives outside the backend,
//! so a backend only does what differs between environment kinds. The steps every backend has
//! have no defaults: a wrapper around another backend that forgets to forward one does not
//! compile, instead of silently doing something else. The optional ones (resolving an
//! interpreter ahead, spares: relabelling and preparing them) default to "not supported"
//! or to doing nothing. A backend whose environments are virtual environments
//! writes only `provision` and gets the rest from `wsp_install::venv_layout::VenvLayout`.
//!
//! [`BackendService`] turns any backend into a `tower::Service` of each request type
//! ([`ProvisionRequest`] answered with [`Provisioned`], [`DescribeRequest`] with
//! [`Description`], ...), so ordinary tower layers (`TimeoutLayer`, `ConcurrencyLimitLayer`,
//! `RateLimitLayer`) wrap it with no glue; [`BoxBackend`] holds the layered result for the
//! server.
//!
//! ```
//! use wsp_backend::{Backend, BackendError, ProvisionRequest, Provisioned};
//!
//! /// Environments that are already there: a backend over venvs someone else made.
//! struct Adopted;
//!
//! impl Backend for Adopted {
//!     async fn provision(&self, request: ProvisionRequest) -> Result<Provisioned, BackendError> {
//!         Err(BackendError::failed(
//!             wsp_protocol::FailureReason::custom("read-only"),
//!             format!("{} cannot be created here", request.name),
//!         ))
//!     }
//! #   async fn describe(&self, _: wsp_backend::DescribeRequest) -> Result<wsp_backend::Description, BackendError> { unimplemented!() }
//! #   async fn run(&self, _: wsp_backend::RunRequest) -> Result<wsp_protocol::ExecuteResult, BackendError> { unimplemented!() }
//! #   async fn install(&self, _: wsp_backend::InstallRequest) -> Result<(), BackendError> { unimplemented!() }
//! #   async fn uninstall(&self, _: wsp_backend::UninstallRequest) -> Result<(), BackendError> { unimplemented!() }
//! #   async fn release(&self, _: wsp_backend::ReleaseRequest) -> Result<(), BackendError> { unimplemented!() }
//! #   async fn lock(&self, _: wsp_backend::LockRequest) -> Result<wsp_protocol::Lock, BackendError> { unimplemented!() }
//! #   async fn install_lock(&self, _: wsp_backend::LockInstallRequest) -> Result<(), BackendError> { unimplemented!() }
//! }
//! ```

mod error;
mod requests;
mod run_options;
mod service;
mod working_dir;

use std::future::Future;

use wsp_protocol::ExecuteResult;

pub use error::BackendError;
pub use requests::{
    BackendRequest, CanRelabelRequest, DescribeRequest, Description, InstallRequest, InstallSource,
    LockInstallRequest, LockRequest, PrepareSpareRequest, ProgressSink, ProgressStep,
    ProvisionRequest, Provisioned, RelabelRequest, ReleaseRequest, ResolveRequest,
    ResolvedInterpreter, RunRequest, UninstallRequest,
};
pub use run_options::{
    ContainmentMode, OutputChunk, OutputSink, RunOptions, SandboxNetwork, SandboxPolicy,
    StdinStream, DEFAULT_MAX_OUTPUT_BYTES,
};
pub use service::{Answers, BackendService, BackendStack, BoxBackend};
pub use working_dir::{resolve_cwd, resolve_cwd_in, WorkingDir};

/// An environment backend: what one kind of environment needs done, one method a step.
///
/// Every method gets the environment's root and answers a typed [`BackendError`]. The
/// server calls them concurrently, for different environments and for the same one (never
/// two installs into one environment at once), so a backend keeps no per-request state.
/// A wrapper around another backend forwards every method it does not change.
pub trait Backend: Send + Sync + 'static {
    /// Creates an environment in `request.root`, which exists and is empty. On error the
    /// server deletes whatever the backend left there.
    fn provision(
        &self,
        request: ProvisionRequest,
    ) -> impl Future<Output = Result<Provisioned, BackendError>> + Send;

    /// Describes the environment at `request.root`: its interpreter and installed packages.
    fn describe(
        &self,
        request: DescribeRequest,
    ) -> impl Future<Output = Result<Description, BackendError>> + Send;

    /// Runs a command in the environment, with the environment activated.
    fn run(
        &self,
        request: RunRequest,
    ) -> impl Future<Output = Result<ExecuteResult, BackendError>> + Send;

    /// Installs packages into the environment, changing nothing when they cannot be
    /// installed.
    fn install(
        &self,
        request: InstallRequest,
    ) -> impl Future<Output = Result<(), BackendError>> + Send;

    /// Removes packages from the environment by name, ignoring names that are not installed.
    fn uninstall(
        &self,
        request: UninstallRequest,
    ) -> impl Future<Output = Result<(), BackendError>> + Send;

    /// The interpreter a [`provision`](Backend::provision) of `request.python_version` would
    /// build on, found without building anything: what `environment/create`'s `reuse` keys
    /// environments by. Every create asks, while the store reserves the environment's root,
    /// and hands the answer to `provision` ([`ProvisionRequest::interpreter`]). `Ok(None)` (the
    /// default): the backend only knows while provisioning, and `reuse` keys its environments
    /// by the version as the client wrote it.
    fn resolve_interpreter(
        &self,
        request: ResolveRequest,
    ) -> impl Future<Output = Result<Option<ResolvedInterpreter>, BackendError>> + Send {
        let _ = request;
        std::future::ready(Ok(None))
    }

    /// Whether this backend can [`relabel`](Backend::relabel) what it provisions. `false`
    /// (the default, and what a wrapper that does not forward it answers): the server never
    /// provisions spare environments ahead for this backend.
    fn can_relabel(
        &self,
        request: CanRelabelRequest,
    ) -> impl Future<Output = Result<bool, BackendError>> + Send {
        let _ = request;
        std::future::ready(Ok(false))
    }

    /// Renames an environment this backend provisioned at `request.root` under another name
    /// (a spare environment, made ahead of the create that takes it) to `request.name`: its
    /// files must end exactly as a provision with that name at that root would have written
    /// them. The default refuses, changing nothing; on any error the server deletes the
    /// environment and creates the client's anew.
    fn relabel(
        &self,
        request: RelabelRequest,
    ) -> impl Future<Output = Result<(), BackendError>> + Send {
        std::future::ready(Err(BackendError::failed(
            wsp_protocol::FailureReason::custom("relabel-unsupported"),
            format!(
                "this backend cannot rename the environment in {}",
                request.root.display()
            ),
        )))
    }

    /// Readies a spare environment for the create that takes it: called in the background
    /// once the spare is provisioned and described, while creates may already take it (and
    /// install into it). Do here what the first install would otherwise do first, so that a
    /// create with packages answers sooner (uv's look at the new interpreter, which it caches:
    /// 50 ms of a 10-package install here). It must change nothing that
    /// [`describe`](Backend::describe) reports; an error is only logged. The default does
    /// nothing.
    fn prepare_spare(
        &self,
        request: PrepareSpareRequest,
    ) -> impl Future<Output = Result<(), BackendError>> + Send {
        let _ = request;
        std::future::ready(Ok(()))
    }

    /// Called once an environment is deleted, after the store has deleted (or set aside) its
    /// files: for backend-specific cleanup outside the root (most backends have none and
    /// answer `Ok(())`). Never delete the root here.
    fn release(
        &self,
        request: ReleaseRequest,
    ) -> impl Future<Output = Result<(), BackendError>> + Send;

    /// Names every distribution installed in the environment, its exact version and where it
    /// came from (`environment/lock`); a backend that cannot answers `-31004` with reason
    /// [`LockUnsupported`](wsp_protocol::FailureReason::LockUnsupported).
    fn lock(
        &self,
        request: LockRequest,
    ) -> impl Future<Output = Result<wsp_protocol::Lock, BackendError>> + Send;

    /// Installs exactly what a lock names into an environment `provision` just made, checking
    /// every hash; any mismatch is [`InstallFailed`](wsp_protocol::FailureReason::InstallFailed)
    /// (the server then deletes the environment).
    fn install_lock(
        &self,
        request: LockInstallRequest,
    ) -> impl Future<Output = Result<(), BackendError>> + Send;
}
