//! The one rule every path a record or a package names must keep: a plain relative path inside
//! the prefix, outside `conda-meta/` and the server's own files in it.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

pub use wsp_install::INSTALL_LOCK_FILE;

/// The directory of a prefix that holds its package records; only the installer writes there.
pub const METADATA_DIR: &str = "conda-meta";

/// The longest path accepted, in bytes (Linux's `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;

/// The longest part of a path accepted, in bytes (Linux's `NAME_MAX`).
pub const MAX_PART_BYTES: usize = 255;

/// Why a path is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathViolation {
    /// The path is empty.
    #[error("is empty")]
    Empty,
    /// The path starts at the file system's root.
    #[error("is absolute")]
    Absolute,
    /// A part is `.` or `..`.
    #[error("has a `{0}` part")]
    DotPart(&'static str),
    /// Two `/` in a row, or a `/` at the end.
    #[error("has an empty part")]
    EmptyPart,
    /// A NUL byte, which no file name can hold.
    #[error("holds a NUL byte")]
    Nul,
    /// Longer than [`MAX_PATH_BYTES`].
    #[error("is longer than {MAX_PATH_BYTES} bytes")]
    TooLong,
    /// A part longer than [`MAX_PART_BYTES`].
    #[error("has a part longer than {MAX_PART_BYTES} bytes")]
    PartTooLong,
    /// The path is [`METADATA_DIR`] or lies in it.
    #[error("lies in {METADATA_DIR}/, which holds the prefix's package records")]
    InMetadataDir,
    /// The path is the server's install lock of the environment.
    #[error("is the server's install lock")]
    InstallLock,
}

/// Checks that `path` names a file strictly inside a prefix: relative, made of plain parts
/// separated by single `/`, no `.` or `..`, no NUL, within the lengths Linux allows, not in
/// `conda-meta/` and not the install lock ([`INSTALL_LOCK_FILE`]), both compared ignoring ASCII
/// case, as a case-insensitive file system would.
pub fn check_relative_path(path: &Path) -> Result<(), PathViolation> {
    let bytes = path.as_os_str().as_bytes();
    if bytes.is_empty() {
        return Err(PathViolation::Empty);
    }
    if bytes.len() > MAX_PATH_BYTES {
        return Err(PathViolation::TooLong);
    }
    if bytes.contains(&0) {
        return Err(PathViolation::Nul);
    }
    if bytes[0] == b'/' {
        return Err(PathViolation::Absolute);
    }
    for (index, part) in bytes.split(|&byte| byte == b'/').enumerate() {
        match part {
            b"" => return Err(PathViolation::EmptyPart),
            b"." => return Err(PathViolation::DotPart(".")),
            b".." => return Err(PathViolation::DotPart("..")),
            _ if part.len() > MAX_PART_BYTES => return Err(PathViolation::PartTooLong),
            _ if index == 0 && part.eq_ignore_ascii_case(METADATA_DIR.as_bytes()) => {
                return Err(PathViolation::InMetadataDir)
            }
            _ if index == 0 && part.eq_ignore_ascii_case(INSTALL_LOCK_FILE.as_bytes()) => {
                return Err(PathViolation::InstallLock)
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(path: &str) -> Result<(), PathViolation> {
        check_relative_path(Path::new(path))
    }

    #[test]
    fn plain_relative_paths_pass() {
        for path in [
            "bin/python",
            "lib/python3.12/site-packages/x.py",
            "a",
            ".hidden/..x/...",
            "conda-meta.json",
            "share/conda-meta/x",
            "share/.wsp-install.lock",
            "site-packages/back\\slash",
        ] {
            assert_eq!(check(path), Ok(()), "{path}");
        }
    }

    #[test]
    fn everything_else_is_refused_with_its_reason() {
        let long_part = "x".repeat(MAX_PART_BYTES + 1);
        let long_path = "x/".repeat(MAX_PATH_BYTES / 2 + 1);
        for (path, violation) in [
            ("", PathViolation::Empty),
            ("/etc/passwd", PathViolation::Absolute),
            ("//x", PathViolation::Absolute),
            ("../x", PathViolation::DotPart("..")),
            ("lib/../../x", PathViolation::DotPart("..")),
            ("lib/..", PathViolation::DotPart("..")),
            ("./x", PathViolation::DotPart(".")),
            ("lib/./x", PathViolation::DotPart(".")),
            ("lib//x", PathViolation::EmptyPart),
            ("lib/", PathViolation::EmptyPart),
            ("lib/x\0", PathViolation::Nul),
            ("conda-meta", PathViolation::InMetadataDir),
            (
                "conda-meta/python-3.12.1-0.json",
                PathViolation::InMetadataDir,
            ),
            ("Conda-Meta/x.json", PathViolation::InMetadataDir),
            (".wsp-install.lock", PathViolation::InstallLock),
            (".wsp-install.lock/x", PathViolation::InstallLock),
            (long_part.as_str(), PathViolation::PartTooLong),
            (long_path.as_str(), PathViolation::TooLong),
        ] {
            assert_eq!(check(path), Err(violation), "{path:?}");
        }
    }
}
