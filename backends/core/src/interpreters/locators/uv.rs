//! Interpreters installed by uv: `<dir>/cpython-X.Y.Z-<platform>/bin/pythonX.Y`, the version
//! read from the directory name. Other implementations, pre-releases and free-threaded builds
//! are not offered.

use std::fs;
use std::path::PathBuf;

use super::Locator;
use crate::interpreters::files::{is_executable_file, plain_version};
use crate::interpreters::{Candidate, Source};

/// Lists the CPython interpreters in uv's install directory.
pub(crate) struct UvLocator {
    dir: PathBuf,
}

impl UvLocator {
    /// A locator for uv's install directory `dir`.
    pub(crate) fn new(dir: PathBuf) -> Self {
        UvLocator { dir }
    }
}

impl Locator for UvLocator {
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
}
