//! `python`, `pythonN` and `pythonN.M` in the directories of a search path. Shims (pyenv's,
//! or anything in a directory named `shims`, such as mise's and asdf's) are never offered: the
//! pyenv root behind a pyenv shim is scanned instead. Relative `PATH` entries are ignored.

use std::collections::{BTreeSet, HashSet};
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use super::watch::behind_shims_dirs;
use super::{behind_shims, Locator};
use crate::files::{is_executable_file, version_from_prefix, NameHint};
use crate::shim::{inspect, Inspection};
use crate::{Candidate, Source};

/// Lists the interpreters a search path offers.
#[derive(Debug, Clone)]
pub struct PathLocator {
    search_path: OsString,
    known_pyenv_root: Option<PathBuf>,
}

impl PathLocator {
    /// A locator for `search_path` (`PATH`'s format); shims into `known_pyenv_root` add
    /// nothing, since that root is scanned by its own locator.
    pub fn new(search_path: impl Into<OsString>, known_pyenv_root: Option<PathBuf>) -> Self {
        PathLocator {
            search_path: search_path.into(),
            known_pyenv_root,
        }
    }

    fn dirs(&self) -> impl Iterator<Item = PathBuf> + '_ {
        std::env::split_paths(&self.search_path).filter(|dir| dir.is_absolute())
    }
}

impl Locator for PathLocator {
    fn name(&self) -> &str {
        "PATH"
    }

    fn find(&self) -> Vec<Candidate> {
        interpreters_in_dirs(
            self.dirs(),
            |_| true,
            &Source::Path,
            self.known_pyenv_root.as_ref(),
        )
    }

    fn watched_paths(&self) -> Option<Vec<PathBuf>> {
        let dirs: Vec<PathBuf> = self.dirs().collect();
        let mut paths = Vec::new();
        behind_shims_dirs(dirs.iter().map(PathBuf::as_path), &mut paths);
        paths.extend(dirs);
        Some(paths)
    }
}

/// The interpreters in `dirs` (each directory once, in order) whose names `accept`, labelled
/// `source`. Shims are skipped, and the pyenv roots behind them other than `known_pyenv_root`
/// are scanned instead.
pub(super) fn interpreters_in_dirs(
    dirs: impl Iterator<Item = PathBuf>,
    accept: impl Fn(NameHint) -> bool,
    source: &Source,
    known_pyenv_root: Option<&PathBuf>,
) -> Vec<Candidate> {
    let mut visited = HashSet::new();
    let mut shim_roots = BTreeSet::new();
    let mut found = Vec::new();
    for dir in dirs {
        if !visited.insert(dir.clone()) {
            continue;
        }
        for executable in interpreters_in(&dir, &accept) {
            match inspect(&executable) {
                Inspection::NotShim => found.push(Candidate {
                    version: version_from_prefix(&executable),
                    executable,
                    source: source.clone(),
                }),
                Inspection::PyenvShim { root } => {
                    tracing::debug!(shim = %executable.display(), "skipping a shim");
                    shim_roots.extend(root);
                }
            }
        }
    }
    found.extend(behind_shims(shim_roots, known_pyenv_root));
    found
}

/// The executables in `dir` named like interpreters that `accept` takes, sorted by name.
/// Broken symlinks and non-executable files are left out.
fn interpreters_in(dir: &Path, accept: impl Fn(NameHint) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| NameHint::of(path).is_some_and(&accept) && is_executable_file(path))
        .collect();
    paths.sort();
    paths
}
