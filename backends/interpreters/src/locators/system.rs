//! The distribution's interpreters: `python3` and `python3.N` in system directories
//! (`/usr/local/bin`, then `/usr/bin`, by default). `python` and `python2` are left out: on
//! most systems they are absent, Python 2, or a link to one of the `python3` names. Shims and
//! broken symlinks are skipped, as on `PATH`; versions come from `patchlevel.h` when the
//! headers are installed, else from a query.

use std::path::PathBuf;

use super::path::interpreters_in_dirs;
use super::Locator;
use crate::files::NameHint;
use crate::{Candidate, Source};

/// The system directories searched by default, most local first.
pub const SYSTEM_DIRS: [&str; 2] = ["/usr/local/bin", "/usr/bin"];

/// Lists the `python3` interpreters of some system directories.
#[derive(Debug, Clone)]
pub struct SystemLocator {
    dirs: Vec<PathBuf>,
    known_pyenv_root: Option<PathBuf>,
}

impl SystemLocator {
    /// A locator for `dirs`, searched in order (relative ones are ignored); shims into
    /// `known_pyenv_root` add nothing.
    pub fn new(dirs: Vec<PathBuf>, known_pyenv_root: Option<PathBuf>) -> Self {
        SystemLocator {
            dirs: dirs.into_iter().filter(|dir| dir.is_absolute()).collect(),
            known_pyenv_root,
        }
    }

    /// A locator for [`SYSTEM_DIRS`].
    pub fn standard() -> Self {
        Self::new(SYSTEM_DIRS.iter().map(PathBuf::from).collect(), None)
    }
}

impl Locator for SystemLocator {
    fn name(&self) -> &str {
        "system"
    }

    fn find(&self) -> Vec<Candidate> {
        interpreters_in_dirs(
            self.dirs.iter().cloned(),
            NameHint::is_python3,
            &Source::System,
            self.known_pyenv_root.as_ref(),
        )
    }

    fn watched_paths(&self) -> Option<Vec<PathBuf>> {
        Some(self.dirs.clone())
    }
}
