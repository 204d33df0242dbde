//! Interpreters installed by uv: `<dir>/cpython-X.Y.Z-<platform>/bin/pythonX.Y`, the version
//! read from the directory name. Other implementations, pre-releases and free-threaded builds
//! are not offered.
//!
//! uv's directory is `$UV_PYTHON_INSTALL_DIR`, else `$XDG_DATA_HOME/uv/python`, else
//! `~/.local/share/uv/python` (see [`InventoryConfig::from_env`]).
//!
//! [`InventoryConfig::from_env`]: crate::InventoryConfig::from_env

use std::fs;
use std::path::PathBuf;

use super::watch::installations;
use super::Locator;
use crate::files::{is_executable_file, plain_version};
use crate::{Candidate, Source};

/// Lists the CPython interpreters in uv's install directory.
#[derive(Debug, Clone)]
pub struct UvLocator {
    dir: PathBuf,
}

impl UvLocator {
    /// A locator for uv's install directory `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        UvLocator { dir: dir.into() }
    }
}

impl Locator for UvLocator {
    fn name(&self) -> &str {
        "uv"
    }

    fn find(&self) -> Vec<Candidate> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut found: Vec<Candidate> = entries
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name();
                let (version, _platform) =
                    name.to_str()?.strip_prefix("cpython-")?.split_once('-')?;
                let version = plain_version(version)?;
                let executable = entry
                    .path()
                    .join("bin")
                    .join(format!("python{}.{}", version.major, version.minor));
                is_executable_file(&executable).then_some(Candidate {
                    executable,
                    version: Some(version),
                    source: Source::UvManaged,
                })
            })
            .collect();
        found.sort_by(|a, b| a.executable.cmp(&b.executable));
        found
    }

    fn watched_paths(&self) -> Option<Vec<PathBuf>> {
        let mut paths = Vec::new();
        installations(&self.dir, &mut paths);
        Some(paths)
    }
}
