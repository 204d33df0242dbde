//! Interpreters the server was given explicitly (`--python PATH`). A path that is not an
//! executable file is skipped with a warning; a pyenv shim is replaced by the pyenv
//! installations behind it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::watch::behind_shims_dirs;
use super::{behind_shims, Locator};
use crate::files::{is_executable_file, version_from_prefix};
use crate::shim::{inspect, Inspection};
use crate::{Candidate, Source};

/// Offers the configured interpreter paths.
#[derive(Debug, Clone)]
pub struct ConfiguredLocator {
    paths: Vec<PathBuf>,
    known_pyenv_root: Option<PathBuf>,
}

impl ConfiguredLocator {
    /// A locator for `paths` (relative ones are taken from the current directory); a shim
    /// into `known_pyenv_root` adds nothing, since that root is scanned by its own locator.
    pub fn new(paths: Vec<PathBuf>, known_pyenv_root: Option<PathBuf>) -> Self {
        ConfiguredLocator {
            paths,
            known_pyenv_root,
        }
    }
}

impl Locator for ConfiguredLocator {
    fn name(&self) -> &str {
        "configured"
    }

    fn find(&self) -> Vec<Candidate> {
        let mut shim_roots = BTreeSet::new();
        let mut found = Vec::new();
        for path in &self.paths {
            let executable = std::path::absolute(path).unwrap_or_else(|_| path.clone());
            if !is_executable_file(&executable) {
                tracing::warn!(
                    path = %executable.display(),
                    "configured interpreter is not an executable file; skipped"
                );
                continue;
            }
            match inspect(&executable) {
                Inspection::NotShim => found.push(Candidate {
                    version: version_from_prefix(&executable),
                    executable,
                    source: Source::Configured,
                }),
                Inspection::PyenvShim { root } => {
                    tracing::warn!(
                        path = %executable.display(),
                        "configured interpreter is a pyenv shim; using the pyenv versions behind it"
                    );
                    shim_roots.extend(root);
                }
            }
        }
        found.extend(behind_shims(shim_roots, self.known_pyenv_root.as_ref()));
        found
    }

    fn watched_paths(&self) -> Option<Vec<PathBuf>> {
        let mut paths = Vec::new();
        for interpreter in &self.paths {
            paths.push(interpreter.clone());
            paths.extend(interpreter.parent().map(Path::to_path_buf));
        }
        behind_shims_dirs(
            self.paths.iter().filter_map(|path| path.parent()),
            &mut paths,
        );
        Some(paths)
    }
}
