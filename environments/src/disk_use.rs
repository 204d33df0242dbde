//! What an environment holds on disk: the apparent size of its files.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The apparent size in bytes of the files under `root`: every regular file and symlink
/// (directories count nothing), each inode once however many hard links it has here, at its
/// full size even when another link to it is outside `root` (a shared cache). Symlinks are
/// never followed. Entries that vanish or cannot be read while the walk runs are left out.
/// Blocking.
pub(crate) fn disk_bytes(root: &Path) -> io::Result<u64> {
    let mut total: u64 = 0;
    let mut seen: HashSet<(u64, u64)> = HashSet::new();
    let mut directories: Vec<PathBuf> = vec![root.to_owned()];
    let top = fs::symlink_metadata(root)?;
    if !top.is_dir() {
        return Ok(0);
    }
    while let Some(directory) = directories.pop() {
        let Ok(entries) = fs::read_dir(&directory) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(metadata) = entry.metadata() else {
                continue;
            };
            if metadata.is_dir() {
                directories.push(entry.path());
            } else if metadata.nlink() < 2 || seen.insert((metadata.dev(), metadata.ino())) {
                total = total.saturating_add(metadata.len());
            }
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hard_links_count_once_symlinks_are_not_followed_and_directories_count_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = dir.path().join("env");
        fs::create_dir_all(root.join("lib/deep")).unwrap();
        fs::write(root.join("lib/a"), vec![0u8; 1000]).unwrap();
        fs::hard_link(root.join("lib/a"), root.join("lib/deep/a-again")).unwrap();
        fs::write(outside.path().join("cached"), vec![0u8; 300]).unwrap();
        fs::hard_link(outside.path().join("cached"), root.join("from-cache")).unwrap();
        fs::write(outside.path().join("big"), vec![0u8; 100_000]).unwrap();
        std::os::unix::fs::symlink(outside.path().join("big"), root.join("link")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("dir-link")).unwrap();
        let link_bytes =
            outside.path().join("big").as_os_str().len() + outside.path().as_os_str().len();
        assert_eq!(disk_bytes(&root).unwrap(), 1000 + 300 + link_bytes as u64);
    }

    #[test]
    fn a_root_that_is_not_a_directory_holds_nothing_and_a_missing_one_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("file"), b"x").unwrap();
        assert_eq!(disk_bytes(&dir.path().join("file")).unwrap(), 0);
        assert!(disk_bytes(&dir.path().join("missing")).is_err());
    }
}
