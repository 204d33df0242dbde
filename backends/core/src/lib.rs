//! The WSP backend interface and what every backend shares: interpreter discovery, package
//! scanning, process execution and the state store.
#![warn(missing_docs)]

pub mod backend;
pub mod execute;
pub mod install;
pub mod interpreters;
pub mod packages;
mod remove_tree;
pub mod store;
pub mod venv_layout;

pub use backend::{
    Answers, Backend, BackendError, BackendRequest, BackendService, BackendStack, BoxBackend,
    DescribeRequest, Description, ProvisionRequest, Provisioned, ReleaseRequest, RunRequest,
};
pub use install::{InstallRequest, UninstallRequest};
