//! Python interpreter discovery and version resolution.
//!
//! One locator per kind of source (pyenv, `PATH`, uv-managed, configured paths)
//! lists candidate interpreters, reading versions from files where it can. The [`Inventory`]
//! combines them, picks the interpreter for a [`VersionRequest`] and queries it (runs it once,
//! cached by path and modification time) for the facts in [`InterpreterInfo`].

mod cache;
mod config;
mod files;
mod inventory;
mod locators;
mod query;
mod shim;

pub use config::InventoryConfig;
pub use inventory::{Inventory, ResolveError, Resolved};
pub use query::QueryError;
pub use wsp_protocol::{PythonVersion, VersionRequest};

use std::fmt;
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

/// An interpreter found on this machine, before it has been run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The executable as found (it may be a symlink).
    pub executable: PathBuf,
    /// The version, when files tell it; `None` when only a query can.
    pub version: Option<PythonVersion>,
    /// Where it was found.
    pub source: Source,
}

/// Where a [`Candidate`] was found.
///
/// Among candidates of one version, resolution prefers them in declaration order: pyenv and uv
/// installations are complete, never shims, and their versions are read from files; an
/// interpreter the server was configured with comes next; `PATH` comes last because that is
/// where shims and distribution interpreters live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// `$PYENV_ROOT/versions/*`, or the versions directory behind a pyenv shim.
    Pyenv,
    /// An interpreter installed by uv (`uv python install`).
    UvManaged,
    /// A path the server was given (`--python PATH`).
    Configured,
    /// `python`, `python3` or `python3.N` found in a `PATH` directory.
    Path,
}

impl Source {
    /// Lower is preferred among candidates of one version.
    fn preference(self) -> u8 {
        match self {
            Source::Pyenv => 0,
            Source::UvManaged => 1,
            Source::Configured => 2,
            Source::Path => 3,
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Source::Pyenv => "pyenv",
            Source::UvManaged => "uv",
            Source::Configured => "configured",
            Source::Path => "PATH",
        })
    }
}
