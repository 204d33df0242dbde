//! Directories of installations, one per subdirectory `<name>/bin/pythonX.Y`: pyenv's
//! `versions`, and mise's and asdf's `installs/python` (both build with pyenv's python-build or
//! unpack standalone builds, so the layout is the same). The version comes from `<name>` when
//! it is a plain `X.Y.Z`, else from the installation's `patchlevel.h`, else it is left to a
//! query. An entry that is a symlink to a sibling (mise's `3.12 -> 3.12.1` aliases) is the
//! sibling again and is skipped. The shims directory is never looked at.

use std::fs;
use std::path::{Path, PathBuf};

use super::watch::installations;
use super::Locator;
use crate::files::{is_executable_file, patchlevel_version, plain_version, NameHint};
use crate::{Candidate, Source};

/// Lists the interpreters in one directory of installations.
#[derive(Debug, Clone)]
pub struct InstallsLocator {
    dir: PathBuf,
    source: Source,
    name: &'static str,
}

impl InstallsLocator {
    /// The installations of the pyenv at `root` (`<root>/versions/*`).
    pub fn pyenv(root: impl Into<PathBuf>) -> Self {
        Self::new(root.into().join("versions"), Source::Pyenv, "pyenv")
    }

    /// mise's Python installations; `installs` is `<mise data dir>/installs/python`.
    pub fn mise(installs: impl Into<PathBuf>) -> Self {
        Self::new(installs.into(), Source::Mise, "mise")
    }

    /// asdf's Python installations; `installs` is `<asdf data dir>/installs/python`.
    pub fn asdf(installs: impl Into<PathBuf>) -> Self {
        Self::new(installs.into(), Source::Asdf, "asdf")
    }

    fn new(dir: PathBuf, source: Source, name: &'static str) -> Self {
        InstallsLocator { dir, source, name }
    }

    /// The directory whose subdirectories are installations.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Locator for InstallsLocator {
    fn name(&self) -> &str {
        self.name
    }

    fn find(&self) -> Vec<Candidate> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut dirs: Vec<PathBuf> = entries
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.is_dir() && !is_alias_of_sibling(path))
            .collect();
        dirs.sort();
        dirs.iter()
            .filter_map(|dir| installation(dir, &self.source))
            .collect()
    }

    fn watched_paths(&self) -> Option<Vec<PathBuf>> {
        let mut paths = Vec::new();
        installations(&self.dir, &mut paths);
        Some(paths)
    }
}

/// Whether `path` is a symlink whose target is another entry of the same directory.
fn is_alias_of_sibling(path: &Path) -> bool {
    let is_link = fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink());
    if !is_link {
        return false;
    }
    let (Some(parent), Ok(target)) = (path.parent(), fs::canonicalize(path)) else {
        return false;
    };
    fs::canonicalize(parent).is_ok_and(|parent| target.parent() == Some(parent.as_path()))
}

/// The interpreter of one installation directory.
fn installation(dir: &Path, source: &Source) -> Option<Candidate> {
    let bin = dir.join("bin");
    let name = dir.file_name()?.to_str()?;
    if let Some(version) = plain_version(name) {
        let executable = [
            format!("python{}.{}", version.major, version.minor),
            format!("python{}", version.major),
            "python".to_owned(),
        ]
        .into_iter()
        .map(|file| bin.join(file))
        .find(|path| is_executable_file(path))?;
        return Some(Candidate {
            executable,
            version: Some(version),
            source: source.clone(),
        });
    }
    let (executable, major_minor) = versioned_interpreter(&bin).or_else(|| {
        ["python3", "python"]
            .into_iter()
            .map(|file| bin.join(file))
            .find(|path| is_executable_file(path))
            .map(|path| (path, None))
    })?;
    let version = major_minor.and_then(|(major, minor)| patchlevel_version(dir, major, minor));
    Some(Candidate {
        executable,
        version,
        source: source.clone(),
    })
}

/// The first `pythonX.Y` in `bin` (by name), with its `(X, Y)`.
fn versioned_interpreter(bin: &Path) -> Option<(PathBuf, Option<(u64, u64)>)> {
    let mut named: Vec<(PathBuf, (u64, u64))> = fs::read_dir(bin)
        .ok()?
        .flatten()
        .filter_map(|entry| {
            let path = entry.path();
            let major_minor = NameHint::of(&path)?.major_minor()?;
            is_executable_file(&path).then_some((path, major_minor))
        })
        .collect();
    named.sort();
    named
        .into_iter()
        .next()
        .map(|(path, major_minor)| (path, Some(major_minor)))
}
