//! What a locator reads, stamped with modification times: while no stamp changes, its previous
//! answer still holds, so a resolve does not list `PATH` and pyenv again.
//!
//! Installing or removing an interpreter adds or removes a directory entry, which changes the
//! modification time of the directory holding it; those directories are the ones stamped. A
//! file replaced in place keeps its directory's time, but the query cache is keyed by the
//! file's own state, so its facts are still re-read.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Paths, each with its modification time (`None` when it cannot be read, which is a state
/// like any other).
pub(crate) type Stamps = Vec<(PathBuf, Option<SystemTime>)>;

/// Stamps each of `paths`.
pub(crate) fn stamp(paths: Vec<PathBuf>) -> Stamps {
    paths
        .into_iter()
        .map(|path| {
            let modified = fs::metadata(&path).and_then(|m| m.modified()).ok();
            (path, modified)
        })
        .collect()
}

/// `dir` and the `bin` directory of each installation in it.
pub(super) fn installations(dir: &Path, out: &mut Vec<PathBuf>) {
    out.push(dir.to_path_buf());
    if let Ok(entries) = fs::read_dir(dir) {
        let mut bins: Vec<PathBuf> = entries.flatten().map(|e| e.path().join("bin")).collect();
        bins.sort();
        out.extend(bins);
    }
}

/// For each of `dirs` named `shims`, the installations of the pyenv root it belongs to: what
/// a shim leads to.
pub(super) fn behind_shims_dirs<'a>(
    dirs: impl IntoIterator<Item = &'a Path>,
    out: &mut Vec<PathBuf>,
) {
    for dir in dirs {
        if dir.file_name().is_some_and(|name| name == "shims") {
            if let Some(root) = dir.parent() {
                installations(&root.join("versions"), out);
            }
        }
    }
}
