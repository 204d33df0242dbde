//! A package's own metadata (`info/paths.json`, `info/link.json`) as untrusted input: every
//! path it would link, mapped where `noarch: python` maps it, is checked before anything is
//! linked.

use std::io;
use std::path::{Path, PathBuf};

use rattler::install::PythonInfo;
use rattler_conda_types::package::{IndexJson, LinkJson, NoArchLinks, PackageFile, PathsJson};

use super::paths::{check_relative_path, PathViolation};

/// The largest `info/*.json` file read from an extracted package.
pub const PACKAGE_METADATA_LIMIT: u64 = 64 << 20;

/// Why a package is refused.
#[derive(Debug, thiserror::Error)]
pub enum PackageViolation {
    /// A metadata file cannot be used: missing, a symlink, too large, or not what it should be.
    #[error("{file}: {source}")]
    Unusable {
        /// The file, relative to the package.
        file: &'static str,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A path the package would link is refused.
    #[error("it would link `{path}`, which {violation}")]
    Path {
        /// The path in the prefix, lossily as text.
        path: String,
        /// What is wrong with it.
        violation: PathViolation,
    },
    /// A `noarch: python` package with no Python to install it for.
    #[error("it is a noarch: python package, and there is no python to link it for")]
    NoPython,
    /// A `noarch: python` package whose `link.json` is not the Python kind.
    #[error("it is a noarch: python package, and its info/link.json is not for python")]
    NotPythonLinks,
}

/// Parses an `info/paths.json` and checks each entry's path with [`check_relative_path`].
pub fn check_paths_json(bytes: &[u8]) -> Result<PathsJson, PackageViolation> {
    let paths: PathsJson =
        serde_json::from_slice(bytes).map_err(|error| PackageViolation::Unusable {
            file: "info/paths.json",
            source: error.into(),
        })?;
    for entry in &paths.paths {
        checked(&entry.relative_path)?;
    }
    Ok(paths)
}

/// Where the package's files and entry points land in the prefix, each checked. A
/// `noarch: python` package (`python` is then the Python it is linked for) has its
/// `site-packages/` and `python-scripts/` mapped as the installer maps them (the mapping
/// comes from the channel's `python` record, so the mapped paths are checked too), and gets a
/// `bin/<command>` per entry point of its `link.json`.
pub fn link_targets(
    paths: &PathsJson,
    noarch_python: Option<(&PythonInfo, Option<&LinkJson>)>,
) -> Result<Vec<PathBuf>, PackageViolation> {
    let mut targets = Vec::with_capacity(paths.paths.len());
    for entry in &paths.paths {
        let target = match noarch_python {
            Some((python, _)) => python
                .get_python_noarch_target_path(&entry.relative_path)
                .into_owned(),
            None => entry.relative_path.clone(),
        };
        checked(&target)?;
        targets.push(target);
    }
    if let Some((python, Some(link))) = noarch_python {
        let NoArchLinks::Python(links) = &link.noarch else {
            return Err(PackageViolation::NotPythonLinks);
        };
        for entry_point in &links.entry_points {
            let target = python.bin_dir.join(&entry_point.command);
            checked(&target)?;
            targets.push(target);
        }
    }
    Ok(targets)
}

/// Checks the package extracted at `dir` (in the package cache) and returns where its files
/// land in the prefix. `python` is the Python of the prefix being installed, if any.
pub fn check_extracted_package(
    dir: &Path,
    python: Option<&PythonInfo>,
) -> Result<Vec<PathBuf>, PackageViolation> {
    let index: IndexJson = parse(dir, "info/index.json")?.ok_or(PackageViolation::Unusable {
        file: "info/index.json",
        source: io::ErrorKind::NotFound.into(),
    })?;
    let paths = match read(dir, "info/paths.json")? {
        Some(bytes) => check_paths_json(&bytes)?,
        None => {
            let paths = PathsJson::from_deprecated_package_directory(dir).map_err(|source| {
                PackageViolation::Unusable {
                    file: "info/files",
                    source,
                }
            })?;
            for entry in &paths.paths {
                checked(&entry.relative_path)?;
            }
            paths
        }
    };
    if !index.noarch.is_python() {
        return link_targets(&paths, None);
    }
    let python = python.ok_or(PackageViolation::NoPython)?;
    let link: Option<LinkJson> = parse(dir, "info/link.json")?;
    link_targets(&paths, Some((python, link.as_ref())))
}

fn checked(path: &Path) -> Result<(), PackageViolation> {
    check_relative_path(path).map_err(|violation| PackageViolation::Path {
        path: path.to_string_lossy().into_owned(),
        violation,
    })
}

/// The bytes of `dir/file`, `None` if it does not exist.
fn read(dir: &Path, file: &'static str) -> Result<Option<Vec<u8>>, PackageViolation> {
    match wsp_install::packages::read_untrusted_file(&dir.join(file), PACKAGE_METADATA_LIMIT) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(PackageViolation::Unusable { file, source }),
    }
}

fn parse<T: PackageFile>(dir: &Path, file: &'static str) -> Result<Option<T>, PackageViolation> {
    let Some(bytes) = read(dir, file)? else {
        return Ok(None);
    };
    T::from_slice(&bytes)
        .map(Some)
        .map_err(|source| PackageViolation::Unusable { file, source })
}
