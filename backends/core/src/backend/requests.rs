//! What the server asks a backend, one type a step, and what each step answers.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;

use tokio::sync::mpsc;
use wsp_protocol::{ExecuteResult, Lock, Package, PythonVersion, VersionRequest};

use super::{Backend, BackendError, RunOptions, SandboxPolicy, WorkingDir};

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
    /// The interpreter the server resolved `python_version` to (with
    /// [`Backend::resolve_interpreter`](crate::Backend::resolve_interpreter)) for this create,
    /// if it asked: a backend that resolves interpreters builds on this one, so that what the
    /// server derived from it (a reuse key) holds for the environment. `None`: resolve
    /// `python_version` as usual.
    pub interpreter: Option<ResolvedInterpreter>,
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

/// Find the interpreter a provision would build on (see [`Backend::resolve_interpreter`]).
#[derive(Debug, Clone)]
pub struct ResolveRequest {
    /// The Python the client asked for.
    pub python_version: VersionRequest,
}

/// The interpreter a provision would build on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedInterpreter {
    /// Its `X.Y.Z`.
    pub full_version: PythonVersion,
    /// Its executable.
    pub path: PathBuf,
}

/// Ask whether the backend can [relabel](crate::Backend::relabel) the environments it
/// provisions (answered `bool`): the server provisions spare environments ahead only for a
/// backend that says yes.
#[derive(Debug, Clone, Default)]
pub struct CanRelabelRequest;

/// Give the environment at `root`, provisioned under another name (a spare, made ahead of
/// any create), the name `name`: afterwards its files are exactly what a provision with
/// `name` would have written at `root`.
#[derive(Debug, Clone)]
pub struct RelabelRequest {
    /// The environment's root, as provisioned; never moved.
    pub root: PathBuf,
    /// The name it takes.
    pub name: String,
}

/// Ready a spare environment (provisioned ahead of the create that will take it, and
/// described) for what usually comes next: see [`Backend::prepare_spare`](crate::Backend::prepare_spare).
#[derive(Debug, Clone)]
pub struct PrepareSpareRequest {
    /// The spare's root.
    pub root: PathBuf,
    /// Its own interpreter, as provisioned.
    pub interpreter_path: PathBuf,
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
    /// ([`resolve_cwd`](super::resolve_cwd)).
    pub cwd: WorkingDir,
    /// Variables the request sets on top of the activation environment.
    pub env: BTreeMap<String, String>,
    /// stdin, timeout, output limit and streaming, resource limits.
    pub options: RunOptions,
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

/// Where an installer looks for packages: the request's fields over the server's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InstallSource {
    /// Directories (absolute paths) or URLs of distributions to look in.
    pub find_links: Vec<String>,
    /// The index to use instead of the installer's default.
    pub index_url: Option<String>,
    /// Use no index at all, only `find_links`.
    pub no_index: bool,
}

/// One step of an install, as the installer reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgressStep {
    /// What happened, in the installer's words (`Resolved 3 packages in 12ms`).
    pub message: String,
    /// How far along the install is, 0–100, when that is known.
    pub percentage: Option<u32>,
}

/// Where an install sends its [`ProgressStep`]s, in order; the install returns only after its
/// last step was sent. A full channel makes the installer wait.
pub type ProgressSink = mpsc::Sender<ProgressStep>;

/// Install packages into the environment at `root`.
#[derive(Debug, Clone)]
pub struct InstallRequest {
    /// The environment's root.
    pub root: PathBuf,
    /// The environment's id (the installer runs as a command of that environment).
    pub environment_id: String,
    /// What to install: PEP 508 requirements, or conda match specs for a conda backend.
    pub packages: Vec<String>,
    /// Where to look.
    pub source: InstallSource,
    /// Install the newest matching versions even where a matching version is installed.
    pub upgrade: bool,
    /// Where the installer's steps go.
    pub progress: Option<ProgressSink>,
    /// Runs the installer in this sandbox (`wsp_install::install_sandbox` makes one): for an environment that
    /// has run sandboxed code. `None`: unconfined.
    pub sandbox: Option<SandboxPolicy>,
}

/// Remove packages, by name, from the environment at `root`; names that are not installed are
/// ignored.
#[derive(Debug, Clone)]
pub struct UninstallRequest {
    /// The environment's root.
    pub root: PathBuf,
    /// The environment's id.
    pub environment_id: String,
    /// The names.
    pub packages: Vec<String>,
    /// Runs the uninstaller in this sandbox (`wsp_install::uninstall_sandbox`). `None`: unconfined.
    pub sandbox: Option<SandboxPolicy>,
}

/// Lock the environment at `root`: name every installed distribution with its exact version
/// and where it came from (`environment/lock`).
#[derive(Debug, Clone)]
pub struct LockRequest {
    /// The environment's root.
    pub root: PathBuf,
}

/// Install exactly what `lock` names into the environment just provisioned at `root`, checking
/// every hash the lock carries (`environment/create` with `lock`).
#[derive(Debug, Clone)]
pub struct LockInstallRequest {
    /// The environment's root.
    pub root: PathBuf,
    /// The environment's id.
    pub environment_id: String,
    /// The lock, as the client gave it.
    pub lock: Lock,
    /// Where to look for what the lock names without a file of its own.
    pub source: InstallSource,
    /// Where the installer's steps go.
    pub progress: Option<ProgressSink>,
    /// Runs the installer in this sandbox. `None`: unconfined.
    pub sandbox: Option<SandboxPolicy>,
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
    LockRequest => lock -> Lock;
    LockInstallRequest => install_lock -> ();
    ResolveRequest => resolve_interpreter -> Option<ResolvedInterpreter>;
    CanRelabelRequest => can_relabel -> bool;
    RelabelRequest => relabel -> ();
    PrepareSpareRequest => prepare_spare -> ();
}
