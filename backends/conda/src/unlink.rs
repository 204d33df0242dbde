//! Removing packages from a prefix without ever following a symlink planted in it: every path
//! their records list, the `__pycache__` files Python wrote for their modules, the directories
//! that become empty, and the records themselves. Every path is checked before the first
//! removal, so a record that leads through a symlink refuses the request with the prefix as it
//! was.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rattler_conda_types::prefix_record::PathType;
use wsp_backend::BackendError;
use wsp_protocol::FailureReason;

use crate::installed::{refused, Installed};
use crate::prefix_dir::{os_str, Found, PrefixDir, Removal};
use crate::untrusted::METADATA_DIR;

/// Removes the `removed` packages from the prefix, leaving what `kept` lists in place;
/// `on_removed` hears of each package once it is gone.
pub(crate) fn remove_packages(
    prefix: &PrefixDir,
    removed: &[&Installed],
    kept: &[&Installed],
    mut on_removed: impl FnMut(&Installed),
) -> Result<(), BackendError> {
    let kept_paths: BTreeSet<&Path> = kept.iter().flat_map(|i| files(i)).collect();
    check_no_symlink_on_the_way(prefix, removed)?;
    let mut emptied: BTreeSet<PathBuf> = BTreeSet::new();
    for installed in removed {
        let python = installed
            .record
            .repodata_record
            .package_record
            .noarch
            .is_python();
        for path in files(installed).filter(|path| !kept_paths.contains(path)) {
            remove(prefix, path)?;
            if python && path.extension().is_some_and(|e| e == "py") {
                if let Some(cache) = remove_bytecode(prefix, path)? {
                    emptied.insert(cache);
                }
            }
            emptied.extend(path.ancestors().skip(1).map(Path::to_path_buf));
        }
        remove(prefix, &Path::new(METADATA_DIR).join(&installed.file_name))?;
        on_removed(installed);
    }
    let kept_dirs: BTreeSet<&Path> = kept
        .iter()
        .flat_map(|installed| installed.record.paths_data.paths.iter())
        .filter(|entry| entry.path_type == PathType::Directory)
        .map(|entry| entry.relative_path.as_path())
        .collect();
    let mut emptied: Vec<PathBuf> = emptied
        .into_iter()
        .filter(|dir| {
            !dir.as_os_str().is_empty()
                && dir != Path::new(METADATA_DIR)
                && !kept_dirs.contains(dir.as_path())
        })
        .collect();
    emptied.sort_by_key(|dir| std::cmp::Reverse(dir.components().count()));
    for dir in emptied {
        prefix
            .remove_dir_if_empty(&dir)
            .map_err(|error| failed(prefix, &dir, error))?;
    }
    Ok(())
}

/// The paths a record says its package put in the prefix (its `files` and `paths_data`), each
/// once.
fn files(installed: &Installed) -> impl Iterator<Item = &Path> {
    let record = &installed.record;
    let listed: BTreeSet<&Path> = record
        .files
        .iter()
        .map(PathBuf::as_path)
        .chain(
            record
                .paths_data
                .paths
                .iter()
                .map(|e| e.relative_path.as_path()),
        )
        .collect();
    listed.into_iter()
}

/// Refuses, before anything is removed, a record whose paths go through a symlink.
fn check_no_symlink_on_the_way(
    prefix: &PrefixDir,
    removed: &[&Installed],
) -> Result<(), BackendError> {
    let mut checked: BTreeSet<&Path> = BTreeSet::new();
    for installed in removed {
        for path in files(installed) {
            let Some(parent) = path.parent() else {
                continue;
            };
            if !checked.insert(parent) {
                continue;
            }
            let found = prefix
                .open_dir(parent)
                .map_err(|error| failed(prefix, parent, error))?;
            if let Found::Symlink(link) = found {
                return Err(refused(format!(
                    "{METADATA_DIR}/{} lists `{}`, and `{}` is a symlink, which removal does not \
                     follow",
                    installed.file_name,
                    path.display(),
                    link.display()
                )));
            }
        }
    }
    Ok(())
}

fn remove(prefix: &PrefixDir, path: &Path) -> Result<(), BackendError> {
    match prefix.remove(path) {
        Ok(Removal::ThroughSymlink(link)) => Err(BackendError::failed(
            FailureReason::InstallFailed,
            format!(
                "`{}` became a symlink while packages were being removed; `{}` was left, and \
                 the removal stopped part way",
                link.display(),
                path.display()
            ),
        )),
        Ok(_) => Ok(()),
        Err(error) => Err(failed(prefix, path, error)),
    }
}

/// Removes `__pycache__/<stem>.*.pyc` beside the module `path`; returns that cache directory.
fn remove_bytecode(prefix: &PrefixDir, module: &Path) -> Result<Option<PathBuf>, BackendError> {
    let (Some(parent), Some(stem)) = (module.parent(), module.file_stem()) else {
        return Ok(None);
    };
    let cache = parent.join("__pycache__");
    let Some((_, names)) = prefix
        .entries(&cache)
        .map_err(|error| failed(prefix, &cache, error))?
    else {
        return Ok(None);
    };
    let mut start = std::os::unix::ffi::OsStrExt::as_bytes(stem).to_vec();
    start.push(b'.');
    for name in names {
        if name.starts_with(&start) && name.ends_with(b".pyc") {
            remove(prefix, &cache.join(os_str(&name)))?;
        }
    }
    Ok(Some(cache))
}

fn failed(prefix: &PrefixDir, path: &Path, error: std::io::Error) -> BackendError {
    BackendError::caused_by(
        FailureReason::InstallFailed,
        format!("removing {}", prefix.path().join(path).display()),
        error,
    )
}
