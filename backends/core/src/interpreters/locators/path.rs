//! `python`, `pythonN` and `pythonN.M` in the directories of a search path. pyenv shims are
//! never offered: the pyenv root behind them is scanned instead. Relative `PATH` entries are
//! ignored.

use std::collections::{BTreeSet, HashSet};
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use super::{behind_shims, Locator};
use crate::interpreters::files::{is_executable_file, version_from_prefix, NameHint};
use crate::interpreters::shim::{inspect, Inspection};
use crate::interpreters::{Candidate, Source};

/// Lists the interpreters a search path offers.
pub(crate) struct PathLocator {
    search_path: OsString,
    known_pyenv_root: Option<PathBuf>,
}

impl PathLocator {
    /// A locator for `search_path`; shims into `known_pyenv_root` add nothing (it is scanned
    /// by its own locator).
    pub(crate) fn new(search_path: OsString, known_pyenv_root: Option<PathBuf>) -> Self {
        PathLocator {
            search_path,
            known_pyenv_root,
        }
    }
}

impl Locator for PathLocator {
    fn find(&self) -> Vec<Candidate> {
        let mut visited = HashSet::new();
        let mut shim_roots = BTreeSet::new();
        let mut found = Vec::new();
        for dir in std::env::split_paths(&self.search_path) {
            if !dir.is_absolute() || !visited.insert(dir.clone()) {
                continue;
            }
            for executable in interpreters_in(&dir) {
                match inspect(&executable) {
                    Inspection::NotShim => found.push(Candidate {
                        version: version_from_prefix(&executable),
                        executable,
                        source: Source::Path,
                    }),
                    Inspection::PyenvShim { root } => {
                        tracing::debug!(shim = %executable.display(), "skipping a pyenv shim");
                        shim_roots.extend(root);
                    }
                }
            }
        }
        found.extend(behind_shims(shim_roots, self.known_pyenv_root.as_ref()));
        found
    }
}

/// The executables in `dir` named like interpreters, sorted by name.
fn interpreters_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| NameHint::of(path).is_some() && is_executable_file(path))
        .collect();
    paths.sort();
    paths
}
