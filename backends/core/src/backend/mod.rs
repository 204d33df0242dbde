//! The backend interface: the [`Backend`] trait, whose named async methods provision,
//! describe, run in, install into and uninstall from environments.
//!
//! Everything else (the state store, locks, ids, the name rules, interpreter discovery, the
//! order of checks, deleting an environment's files) is shared and lives outside the backend,
//! so a backend only does what differs between environment kinds. The defaults take the root
//! to be a virtual environment (`bin/python`, its site-packages, `VIRTUAL_ENV` activation, its
//! own pip; see [`crate::venv_layout`]), so a backend that makes venvs writes only
//! [`Backend::provision`].
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
//! }
//! ```

mod error;
mod requests;
mod service;

use std::future::Future;

use wsp_protocol::ExecuteResult;

use crate::install::{InstallRequest, Installer, UninstallRequest};
use crate::venv_layout;

pub use error::BackendError;
pub use requests::{
    BackendRequest, DescribeRequest, Description, ProvisionRequest, Provisioned, ReleaseRequest,
    RunRequest,
};
pub use service::{Answers, BackendService, BackendStack, BoxBackend};

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
    /// Default: a venv's `bin/python` and the distributions in its site-packages.
    fn describe(
        &self,
        request: DescribeRequest,
    ) -> impl Future<Output = Result<Description, BackendError>> + Send {
        venv_layout::describe(request.root)
    }

    /// Runs a command in the environment. Default: under venv activation
    /// (`VIRTUAL_ENV`, `<root>/bin` first on `PATH`).
    fn run(
        &self,
        request: RunRequest,
    ) -> impl Future<Output = Result<ExecuteResult, BackendError>> + Send {
        venv_layout::run(request)
    }

    /// Installs packages into the environment, changing nothing when they cannot be
    /// installed. Default: the environment's own pip (`<root>/bin/python -m pip install`).
    fn install(
        &self,
        request: InstallRequest,
    ) -> impl Future<Output = Result<(), BackendError>> + Send {
        venv_layout::install(Installer::Pip, request)
    }

    /// Removes packages from the environment by name, ignoring names that are not installed.
    /// Default: the environment's own pip.
    fn uninstall(
        &self,
        request: UninstallRequest,
    ) -> impl Future<Output = Result<(), BackendError>> + Send {
        venv_layout::uninstall(Installer::Pip, request)
    }

    /// Called once an environment is deleted, after the store has deleted (or set aside) its
    /// files: for backend-specific cleanup outside the root. Never delete the root here.
    /// Default: nothing to do.
    fn release(
        &self,
        request: ReleaseRequest,
    ) -> impl Future<Output = Result<(), BackendError>> + Send {
        let _ = request;
        std::future::ready(Ok(()))
    }
}
