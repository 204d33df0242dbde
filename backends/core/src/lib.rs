//! The WSP backend interface and what every backend shares: interpreter discovery, package
//! scanning, process execution and the state store.
#![warn(missing_docs)]

pub mod backend;
pub mod common;
pub mod execute;
pub mod install;
pub mod interpreters;
pub mod packages;
pub mod store;

pub use backend::{
    boxed, BackendError, BackendRequest, BackendResponse, BoxBackend, DescribeRequest, Description,
    ProvisionRequest, Provisioned, RemoveRequest, RunRequest,
};
pub use install::{InstallRequest, UninstallRequest};
