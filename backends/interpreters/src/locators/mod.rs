//! Sources of interpreters: the [`Locator`] trait and the built-in locators.
//!
//! Each built-in locator reads one kind of source and never runs an interpreter:
//!
//! | locator | finds | [`Source`] |
//! | --- | --- | --- |
//! | [`InstallsLocator::pyenv`] | `<root>/versions/<name>/bin/pythonX.Y` | [`Source::Pyenv`] |
//! | [`UvLocator`] | `<dir>/cpython-X.Y.Z-<platform>/bin/pythonX.Y` | [`Source::UvManaged`] |
//! | [`InstallsLocator::mise`] | `<data>/installs/python/<name>/bin/pythonX.Y` | [`Source::Mise`] |
//! | [`InstallsLocator::asdf`] | `<data>/installs/python/<name>/bin/pythonX.Y` | [`Source::Asdf`] |
//! | [`ConfiguredLocator`] | the paths given | [`Source::Configured`] |
//! | [`SystemLocator`] | `python3`, `python3.N` in system directories | [`Source::System`] |
//! | [`PathLocator`] | `python`, `pythonN`, `pythonN.M` on a search path | [`Source::Path`] |
//!
//! [`InventoryConfig`](super::InventoryConfig) says which of them an inventory runs; any of
//! them can also be added again over other directories with
//! [`InventoryConfig::with_locator`](super::InventoryConfig::with_locator).

mod configured;
mod installs;
mod path;
mod system;
mod uv;
mod watch;

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;

use super::Candidate;
#[cfg(doc)]
use super::Source;

pub use configured::ConfiguredLocator;
pub use installs::InstallsLocator;
pub use path::PathLocator;
pub use system::{SystemLocator, SYSTEM_DIRS};
pub use uv::UvLocator;
pub(crate) use watch::{stamp, Stamps};

/// A source of candidate interpreters.
///
/// Locators read the file system only: they never run an interpreter (the inventory queries
/// the one it chooses, and skips it if it is not what its candidate said). A locator that
/// panics is skipped for that discovery and asked again the next time.
pub trait Locator: Send + Sync {
    /// A short name for logs, such as `pyenv` or `opt-pythons`.
    fn name(&self) -> &str;

    /// Every interpreter this source offers, in its own order of preference. Executables
    /// should exist; ones that don't are dropped.
    fn find(&self) -> Vec<Candidate>;

    /// The files and directories whose modification times change whenever [`find`]'s answer
    /// may (installing an interpreter adds an entry to a directory, which changes that
    /// directory's time). While none of them has changed, the inventory reuses the last
    /// answer. `None`, the default, means nothing tells: `find` runs on every discovery.
    ///
    /// [`find`]: Locator::find
    fn watched_paths(&self) -> Option<Vec<PathBuf>> {
        None
    }
}

/// The candidates of the pyenv roots behind shims, except `known_root` (scanned already).
fn behind_shims(roots: BTreeSet<PathBuf>, known_root: Option<&PathBuf>) -> Vec<Candidate> {
    let known = known_root.and_then(|root| fs::canonicalize(root).ok());
    roots
        .into_iter()
        .filter(|root| fs::canonicalize(root).ok() != known)
        .flat_map(|root| InstallsLocator::pyenv(root).find())
        .collect()
}
