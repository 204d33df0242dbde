//! The WSP backend interface: the [`Backend`] trait, the requests it answers and what they
//! answer, [`BackendError`], and [`BackendService`], the one adapter that makes a backend a
//! tower service. What backends share beyond the interface lives in crates of its own: running
//! commands (`wsp-exec`), interpreter discovery (`wsp-interpreters`), installing packages and
//! the venv layout (`wsp-install`).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod backend;

pub use backend::{
    resolve_cwd, resolve_cwd_in, Answers, Backend, BackendError, BackendRequest, BackendService,
    BackendStack, BoxBackend, CanRelabelRequest, ContainmentMode, DescribeRequest, Description,
    InstallRequest, InstallSource, LockInstallRequest, LockRequest, OutputChunk, OutputSink,
    PrepareSpareRequest, ProgressSink, ProgressStep, ProvisionRequest, Provisioned, RelabelRequest,
    ReleaseRequest, ResolveRequest, ResolvedInterpreter, RunOptions, RunRequest, SandboxNetwork,
    SandboxPolicy, StdinStream, UninstallRequest, WorkingDir, DEFAULT_MAX_OUTPUT_BYTES,
};
