//! What the server asks a backend, one type a step, and what each step answers.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;

use wsp_protocol::{ExecuteResult, Package};

use super::{Backend, BackendError};
use crate::install::{InstallRequest, UninstallRequest};
use crate::interpreters::{PythonVersion, VersionRequest};

/// A request to a backend: its answer type, and the [`Backend`] method that answers it.
///
/// This is what lets one `tower::Service` impl ([`super::BackendService`]) serve every step,
/// with the response type following from the request type.
pub trait BackendRequest: Send + 'static {
    /// What the backend answers.
    type Response: Send + 'static;

    /// Asks `backend` to answer this request.
    fn answer<B: Backend>(
        self,
        backend: &B,
    ) -> impl Future<Output = Result<Self::Response, BackendError>> + Send;
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

/// An environment was deleted: the store has taken it out of the index and deleted its root
/// (or moved what it could not delete to the trash, for a later sweep).
#[derive(Debug, Clone)]
pub struct ReleaseRequest {
    /// The environment's root, which no longer holds it.
    pub root: PathBuf,
    /// The environment's id.
    pub environment_id: String,
}

/// `impl BackendRequest for $request`, answered by `Backend::$method` as `$response`.
macro_rules! answered_by {
    ($($request:ty => $method:ident -> $response:ty;)*) => {$(
        impl BackendRequest for $request {
            type Response = $response;

            fn answer<B: Backend>(
                self,
                backend: &B,
            ) -> impl Future<Output = Result<$response, BackendError>> + Send {
                backend.$method(self)
            }
        }
    )*};
}

answered_by! {
    ProvisionRequest => provision -> Provisioned;
    DescribeRequest => describe -> Description;
    RunRequest => run -> ExecuteResult;
    InstallRequest => install -> ();
    UninstallRequest => uninstall -> ();
    ReleaseRequest => release -> ();
}
