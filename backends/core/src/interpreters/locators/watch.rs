//! What discovery reads, stamped with modification times: while no stamp changes, a previous
//! discovery still holds, so a resolve does not list `PATH` and pyenv again.
//!
//! Installing or removing an interpreter adds or removes a directory entry, which changes the
//! modification time of the directory holding it; those directories are the ones stamped. A
//! file replaced in place keeps its directory's time, but the query cache is keyed by the
//! file's own state, so its facts are still re-read.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::interpreters::config::InventoryConfig;

/// The directories discovery reads under `config`, each with its modification time (`None`
/// when it cannot be read, which is a state like any other).
pub(crate) type Stamps = Vec<(PathBuf, Option<SystemTime>)>;

/// Stamps every directory discovery reads under `config`.
pub(crate) fn stamps(config: &InventoryConfig) -> Stamps {
    let mut dirs = Vec::new();
    if let Some(root) = &config.pyenv_root {
        installations(&root.join("versions"), &mut dirs);
    }
    if let Some(dir) = &config.uv_python_dir {
        installations(dir, &mut dirs);
    }
    for interpreter in &config.extra_interpreters {
        dirs.push(interpreter.clone());
        dirs.extend(interpreter.parent().map(Path::to_path_buf));
    }
    if let Some(search_path) = &config.path {
        for dir in std::env::split_paths(search_path) {
            if dir.file_name().is_some_and(|name| name == "shims") {
                if let Some(root) = dir.parent() {
                    installations(&root.join("versions"), &mut dirs);
                }
            }
            dirs.push(dir);
        }
    }
    dirs.into_iter()
        .map(|dir| {
            let modified = fs::metadata(&dir).and_then(|m| m.modified()).ok();
            (dir, modified)
        })
        .collect()
}

/// `dir` and the `bin` directory of each installation in it.
fn installations(dir: &Path, out: &mut Vec<PathBuf>) {
    out.push(dir.to_path_buf());
    if let Ok(entries) = fs::read_dir(dir) {
        let mut bins: Vec<PathBuf> = entries.flatten().map(|e| e.path().join("bin")).collect();
        bins.sort();
        out.extend(bins);
    }
}
