//! One locator per kind of source, each listing the interpreters it knows and reading their
//! versions from files; [`discover`] runs them all and keeps one candidate per real file.

mod configured;
mod path;
mod pyenv;
mod uv;
mod watch;

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::path::PathBuf;

use super::config::InventoryConfig;
use super::files::NameHint;
use super::Candidate;

pub(crate) use configured::ConfiguredLocator;
pub(crate) use path::PathLocator;
pub(crate) use pyenv::PyenvLocator;
pub(crate) use uv::UvLocator;
pub(crate) use watch::{stamps, Stamps};

/// A source of candidate interpreters. Locators read the file system only; they never run an
/// interpreter.
pub(crate) trait Locator: Send + Sync {
    /// Every interpreter this source offers, in its own order of preference.
    fn find(&self) -> Vec<Candidate>;
}

/// A discovered candidate with what discovery learnt about its file.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// The candidate as reported by its locator.
    pub(crate) candidate: Candidate,
    /// What the real file's name (else the link's name) says about the version.
    pub(crate) hint: NameHint,
}

/// The locators for `config`, in order of [`Source`](super::Source) preference.
fn locators(config: &InventoryConfig) -> Vec<Box<dyn Locator>> {
    let mut locators: Vec<Box<dyn Locator>> = Vec::new();
    if let Some(root) = &config.pyenv_root {
        locators.push(Box::new(PyenvLocator::new(root.clone())));
    }
    if let Some(dir) = &config.uv_python_dir {
        locators.push(Box::new(UvLocator::new(dir.clone())));
    }
    locators.push(Box::new(ConfiguredLocator::new(
        config.extra_interpreters.clone(),
        config.pyenv_root.clone(),
    )));
    if let Some(search_path) = &config.path {
        locators.push(Box::new(PathLocator::new(
            search_path.clone(),
            config.pyenv_root.clone(),
        )));
    }
    locators
}

/// Runs every locator and keeps one candidate per real file (symlinks resolved): the one from
/// the preferred source, and among those the first whose version is known. Candidates stay in
/// source preference order, then discovery order (`PATH` order for `PATH`).
pub(crate) fn discover(config: &InventoryConfig) -> Vec<Found> {
    let mut candidates: Vec<Candidate> = locators(config)
        .iter()
        .flat_map(|locator| locator.find())
        .collect();
    candidates.sort_by_key(|c| c.source.preference());
    let mut kept: Vec<Found> = Vec::new();
    let mut index_of_real: HashMap<PathBuf, usize> = HashMap::new();
    for candidate in candidates {
        let Ok(real) = fs::canonicalize(&candidate.executable) else {
            continue;
        };
        if let Some(&index) = index_of_real.get(&real) {
            let earlier = &mut kept[index].candidate;
            if earlier.version.is_none()
                && candidate.version.is_some()
                && earlier.source == candidate.source
            {
                *earlier = candidate;
            }
            continue;
        }
        let hint = NameHint::of(&real)
            .or_else(|| NameHint::of(&candidate.executable))
            .unwrap_or_default();
        index_of_real.insert(real, kept.len());
        kept.push(Found { candidate, hint });
    }
    kept
}

/// The candidates of the pyenv roots behind shims, except `known_root` (scanned already).
fn behind_shims(roots: BTreeSet<PathBuf>, known_root: Option<&PathBuf>) -> Vec<Candidate> {
    let known = known_root.and_then(|root| fs::canonicalize(root).ok());
    roots
        .into_iter()
        .filter(|root| fs::canonicalize(root).ok() != known)
        .flat_map(|root| PyenvLocator::new(root).find())
        .collect()
}
