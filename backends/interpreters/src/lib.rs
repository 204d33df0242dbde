//! Python interpreter discovery and version resolution.
//!
//! A [`Locator`] lists the interpreters of one kind of source (pyenv, uv, mise, asdf, the
//! system's `/usr/bin`, `PATH`, paths the server was given, or one of your own), reading their
//! versions from files where it can; it never runs anything. The [`Inventory`] runs the
//! locators, keeps one candidate per real file, picks the interpreter for a
//! [`VersionRequest`] and queries it (runs it once, cached by path and file state) for the
//! facts in [`InterpreterInfo`]. pyenv shims (and anything else in a `shims` directory) are
//! never run.
//!
//! # Which interpreter wins
//!
//! The newest version matching the request wins. Among interpreters of one version, the
//! candidate's [`Source`] decides, in this order: pyenv, uv, mise, asdf, custom locators,
//! configured paths, system directories, `PATH`; within one source, the order its locator
//! listed them (and among custom locators, the order they were added). The same real file
//! found by two locators counts once, under the preferred source.
//!
//! # Adding a source
//!
//! A locator lists candidates and names the paths whose modification times tell that its list
//! may have changed; while none has, the inventory reuses its last list instead of asking it
//! again. [`InventoryConfig::with_locator`] adds it to the built-in ones.
//!
//! ```
//! use std::path::PathBuf;
//! use wsp_interpreters::{
//!     Candidate, Inventory, InventoryConfig, Locator, Source, VersionRequest,
//! };
//!
//! /// Interpreters a deployment keeps in `/opt/pythons/<X.Y.Z>/bin/python3`.
//! struct OptPythons {
//!     dir: PathBuf,
//! }
//!
//! impl Locator for OptPythons {
//!     fn name(&self) -> &str {
//!         "opt-pythons"
//!     }
//!
//!     fn find(&self) -> Vec<Candidate> {
//!         let Ok(entries) = std::fs::read_dir(&self.dir) else {
//!             return Vec::new();
//!         };
//!         entries
//!             .flatten()
//!             .map(|entry| Candidate {
//!                 executable: entry.path().join("bin/python3"),
//!                 // Left to a query; a version read from files saves running it.
//!                 version: entry.file_name().to_str().and_then(|name| name.parse().ok()),
//!                 source: Source::Custom("opt-pythons".into()),
//!             })
//!             .filter(|candidate| candidate.executable.is_file())
//!             .collect()
//!     }
//!
//!     fn watched_paths(&self) -> Option<Vec<PathBuf>> {
//!         // An installation added or removed changes this directory's modification time.
//!         Some(vec![self.dir.clone()])
//!     }
//! }
//!
//! # async fn example() {
//! let config = InventoryConfig::from_env().with_locator(OptPythons {
//!     dir: PathBuf::from("/opt/pythons"),
//! });
//! let inventory = Inventory::new(config);
//! let request: VersionRequest = "3.12".parse().expect("a version request");
//! match inventory.resolve_detailed(&request).await {
//!     Ok(chosen) => {
//!         let executable = chosen.info.executable.display();
//!         println!("{executable} from {}", chosen.candidate.source);
//!     }
//!     Err(unavailable) => println!("{unavailable}"),
//! }
//! # }
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod cache;
mod choose;
mod config;
mod discovery;
mod files;
mod inventory;
pub mod locators;
mod query;
mod shim;

pub use config::InventoryConfig;
pub use inventory::{Available, Inventory, ResolveError, Resolved};
pub use locators::Locator;
pub use query::QueryError;
pub use wsp_protocol::{PythonVersion, VersionRequest};

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

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
    /// The version, when files tell it; `None` when only a query can. A wrong version costs
    /// nothing but a query: the chosen interpreter is always run, and skipped if it disagrees.
    pub version: Option<PythonVersion>,
    /// Where it was found; this decides its rank among interpreters of one version.
    pub source: Source,
}

/// Where a [`Candidate`] was found.
///
/// Among candidates of one version, resolution prefers them in declaration order. pyenv, uv,
/// mise and asdf installations are complete, never shims, and their versions are read from
/// their directory names; a custom locator's come next (its author chose to list them); an
/// interpreter the server was configured with comes after those; then the system's
/// distribution interpreters; `PATH` comes last because that is where shims live.
///
/// A custom locator normally labels its candidates [`Source::Custom`], but may use any label
/// to rank them like that source (for instance [`Source::Pyenv`] for a second pyenv root).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Source {
    /// `$PYENV_ROOT/versions/*`, or the versions directory behind a pyenv shim.
    Pyenv,
    /// An interpreter installed by uv (`uv python install`).
    UvManaged,
    /// `<mise data dir>/installs/python/*`.
    Mise,
    /// `<asdf data dir>/installs/python/*`.
    Asdf,
    /// Found by a locator added with [`InventoryConfig::with_locator`]; the name is its own.
    Custom(Arc<str>),
    /// A path the server was given (`--python PATH`).
    Configured,
    /// `python3` or `python3.N` in a system directory (`/usr/local/bin`, `/usr/bin`).
    System,
    /// `python`, `python3` or `python3.N` found in a `PATH` directory.
    Path,
}

impl Source {
    /// Lower is preferred among candidates of one version.
    fn preference(&self) -> u8 {
        match self {
            Source::Pyenv => 0,
            Source::UvManaged => 1,
            Source::Mise => 2,
            Source::Asdf => 3,
            Source::Custom(_) => 4,
            Source::Configured => 5,
            Source::System => 6,
            Source::Path => 7,
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Source::Pyenv => "pyenv",
            Source::UvManaged => "uv",
            Source::Mise => "mise",
            Source::Asdf => "asdf",
            Source::Custom(name) => name,
            Source::Configured => "configured",
            Source::System => "system",
            Source::Path => "PATH",
        })
    }
}
