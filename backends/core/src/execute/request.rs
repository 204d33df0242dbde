//! Checking the parts of an `environment/execute` request that name paths and variables.
//!
//! Each check returns the message for a `-32602` violation.

use std::path::{Path, PathBuf};

/// The working directory for a command in the environment at `root`.
///
/// `None` is the root itself. Otherwise the path must be absolute, exist, be a directory and,
/// once every symlink is resolved, lie inside the (equally resolved) root; the resolved path
/// is returned.
pub fn resolve_cwd(root: &Path, cwd: Option<&str>) -> Result<PathBuf, String> {
    let Some(cwd) = cwd else {
        return Ok(root.to_path_buf());
    };
    let requested = Path::new(cwd);
    if !requested.is_absolute() {
        return Err(format!("cwd must be an absolute path, got `{cwd}`"));
    }
    let resolved = requested
        .canonicalize()
        .map_err(|error| format!("cwd `{cwd}` cannot be resolved: {error}"))?;
    let root = root.canonicalize().map_err(|error| {
        format!(
            "the environment root {} cannot be resolved: {error}",
            root.display()
        )
    })?;
    if !resolved.starts_with(&root) {
        return Err(format!(
            "cwd `{cwd}` resolves to {}, which is outside the environment root {}",
            resolved.display(),
            root.display()
        ));
    }
    if !resolved.is_dir() {
        return Err(format!("cwd `{cwd}` is not a directory"));
    }
    Ok(resolved)
}
