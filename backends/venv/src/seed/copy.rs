//! Copying a cached directory tree into an environment: hard links where the filesystem allows
//! them, byte copies where it does not.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use crate::VenvError;

/// Puts the contents of `from` into the existing directory `to`.
pub(crate) fn link_tree(from: &Path, to: &Path) -> Result<(), VenvError> {
    let mut links_work = true;
    link_dir(from, to, &mut links_work)
}

fn link_dir(from: &Path, to: &Path, links_work: &mut bool) -> Result<(), VenvError> {
    let entries = fs::read_dir(from).map_err(VenvError::io("read directory", from))?;
    for entry in entries {
        let entry = entry.map_err(VenvError::io("read directory", from))?;
        let source = entry.path();
        let target = to.join(entry.file_name());
        let kind = entry
            .file_type()
            .map_err(VenvError::io("inspect", &source))?;
        if kind.is_dir() {
            fs::create_dir(&target).map_err(VenvError::io("create directory", &target))?;
            link_dir(&source, &target, links_work)?;
        } else if kind.is_symlink() {
            let pointee = fs::read_link(&source).map_err(VenvError::io("read symlink", &source))?;
            symlink(&pointee, &target).map_err(VenvError::io("create symlink", &target))?;
        } else {
            link_file(&source, &target, links_work)?;
        }
    }
    Ok(())
}

/// Hard-links `source` at `target`, or copies it once links have failed (another filesystem,
/// a filesystem without links, a link count limit).
fn link_file(source: &Path, target: &Path, links_work: &mut bool) -> Result<(), VenvError> {
    if *links_work {
        match fs::hard_link(source, target) {
            Ok(()) => return Ok(()),
            Err(error) => {
                tracing::debug!(%error, "hard links unavailable, copying the seed instead");
                *links_work = false;
            }
        }
    }
    fs::copy(source, target)
        .map(|_| ())
        .map_err(VenvError::io("copy into place", target))
}
