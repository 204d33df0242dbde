//! Python interpreter discovery and version resolution.
//!
//! Types shared by every backend that provisions from a local interpreter.

pub use wsp_protocol::{PythonVersion, VersionRequest};

use std::path::PathBuf;

/// What a queried interpreter told us about itself.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct InterpreterInfo {
    /// The real executable: absolute, symlinks resolved, never a shim.
    pub executable: PathBuf,
    /// `sys.version_info[:3]`.
    pub version: PythonVersion,
    /// `sys.base_prefix`.
    pub base_prefix: PathBuf,
    /// `sys.base_exec_prefix`.
    pub base_exec_prefix: PathBuf,
    /// `sys.implementation.name`, e.g. `cpython`.
    pub implementation: String,
    /// `sys.abiflags` (empty where the interpreter has none).
    pub abiflags: String,
}
