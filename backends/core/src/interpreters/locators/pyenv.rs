//! pyenv installations: `$PYENV_ROOT/versions/<name>/bin/pythonX.Y`. The version comes from
//! `<name>` when it is a plain `X.Y.Z`, else from the installation's `patchlevel.h`, else it
//! is left to a query. The shims directory is never looked at.

use std::fs;
use std::path::{Path, PathBuf};

use super::Locator;
use crate::interpreters::files::{is_executable_file, patchlevel_version, plain_version, NameHint};
use crate::interpreters::{Candidate, Source};

/// Lists the interpreters under one pyenv root.
pub(crate) struct PyenvLocator {
    root: PathBuf,
}

impl PyenvLocator {
    /// A locator for the pyenv installation at `root`.
    pub(crate) fn new(root: PathBuf) -> Self {
        PyenvLocator { root }
    }
}

impl Locator for PyenvLocator {
    fn find(&self) -> Vec<Candidate> {
        let Ok(entries) = fs::read_dir(self.root.join("versions")) else {
            return Vec::new();
        };
        let mut dirs: Vec<PathBuf> = entries
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.is_dir())
            .collect();
        dirs.sort();
        dirs.iter().filter_map(|dir| installation(dir)).collect()
    }
}

/// The interpreter of one `versions/<name>` directory.
fn installation(dir: &Path) -> Option<Candidate> {
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
            source: Source::Pyenv,
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
        source: Source::Pyenv,
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
