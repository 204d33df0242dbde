//! Facts read from the file system without running anything: executable checks, interpreter
//! file names, `patchlevel.h` versions and stat stamps.

use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use super::{PythonVersion, VersionRequest};

/// How much of a small text file (a header, a script) is ever read.
pub(crate) const HEAD_LIMIT: u64 = 64 * 1024;

/// Whether `path` (symlinks followed) is a regular file with an execute bit.
pub(crate) fn is_executable_file(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// Reads at most `limit` bytes from the start of `path`.
pub(crate) fn read_head(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let mut head = Vec::new();
    fs::File::open(path)?.take(limit).read_to_end(&mut head)?;
    Ok(head)
}

/// What an interpreter's file name says about its version: `python`, `python3`, `python3.12`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct NameHint {
    major: Option<u64>,
    minor: Option<u64>,
}

impl NameHint {
    /// Parses `python`, `pythonN` or `pythonN.M` (ASCII digits); anything else is not an
    /// interpreter name.
    pub(crate) fn parse(file_name: &str) -> Option<NameHint> {
        let rest = file_name.strip_prefix("python")?;
        if rest.is_empty() {
            return Some(NameHint::default());
        }
        let number = |part: &str| {
            (!part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
                .then(|| part.parse::<u64>().ok())
                .flatten()
        };
        match rest.split_once('.') {
            None => Some(NameHint {
                major: Some(number(rest)?),
                minor: None,
            }),
            Some((major, minor)) => Some(NameHint {
                major: Some(number(major)?),
                minor: Some(number(minor)?),
            }),
        }
    }

    /// The hint of `path`'s file name, if it is an interpreter name.
    pub(crate) fn of(path: &Path) -> Option<NameHint> {
        path.file_name()?.to_str().and_then(NameHint::parse)
    }

    /// `(major, minor)` when the name carries both.
    pub(crate) fn major_minor(&self) -> Option<(u64, u64)> {
        Some((self.major?, self.minor?))
    }

    /// Whether the name is `python3` or `python3.N`.
    pub(crate) fn is_python3(self) -> bool {
        self.major == Some(3)
    }

    /// Whether an interpreter with this name could satisfy `request`.
    pub(crate) fn admits(&self, request: &VersionRequest) -> bool {
        let (major, minor) = request.major_minor();
        self.major.is_none_or(|m| m == major) && self.minor.is_none_or(|m| m == minor)
    }
}

/// A plain `X.Y.Z` (no pre-release or local suffix).
pub(crate) fn plain_version(text: &str) -> Option<PythonVersion> {
    text.parse().ok()
}

/// The `PY_VERSION` of `<prefix>/include/pythonX.Y*/patchlevel.h`, when it is a plain `X.Y.Z`
/// of that minor.
pub(crate) fn patchlevel_version(prefix: &Path, major: u64, minor: u64) -> Option<PythonVersion> {
    let stem = format!("python{major}.{minor}");
    let entries = fs::read_dir(prefix.join("include")).ok()?;
    entries.flatten().find_map(|entry| {
        let name = entry.file_name();
        let suffix = name.to_str()?.strip_prefix(&stem)?;
        if suffix.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        let header = read_head(&entry.path().join("patchlevel.h"), HEAD_LIMIT).ok()?;
        let version = py_version_define(&String::from_utf8_lossy(&header))?;
        (version.major == major && version.minor == minor).then_some(version)
    })
}

/// Finds `#define PY_VERSION "X.Y.Z"` in a header.
fn py_version_define(header: &str) -> Option<PythonVersion> {
    header.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        if words.next()? != "#define" || words.next()? != "PY_VERSION" {
            return None;
        }
        plain_version(words.next()?.trim_matches('"'))
    })
}

/// The version of the installation `executable` belongs to, read from its `patchlevel.h`:
/// the real file must be `<prefix>/bin/pythonX.Y` (or a link named so leads to it).
pub(crate) fn version_from_prefix(executable: &Path) -> Option<PythonVersion> {
    let real = fs::canonicalize(executable).ok()?;
    let (major, minor) = NameHint::of(&real)
        .and_then(|hint| hint.major_minor())
        .or_else(|| NameHint::of(executable)?.major_minor())?;
    let prefix = real.parent()?.parent()?;
    patchlevel_version(prefix, major, minor)
}

/// What identifies one state of an executable file: its resolved path, inode, size and mtime.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct FileStamp {
    /// The path with symlinks resolved.
    pub(crate) real_path: std::path::PathBuf,
    /// Inode number.
    pub(crate) inode: u64,
    /// Size in bytes.
    pub(crate) size: u64,
    /// Modification time: seconds since the epoch.
    pub(crate) mtime: i64,
    /// Modification time: nanoseconds within the second.
    pub(crate) mtime_nsec: i64,
}

impl FileStamp {
    /// Stats `path` (following symlinks).
    pub(crate) fn of(path: &Path) -> io::Result<FileStamp> {
        let real_path = fs::canonicalize(path)?;
        let meta = fs::metadata(&real_path)?;
        Ok(FileStamp {
            real_path,
            inode: meta.ino(),
            size: meta.size(),
            mtime: meta.mtime(),
            mtime_nsec: meta.mtime_nsec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpreter_names() {
        assert_eq!(NameHint::parse("python"), Some(NameHint::default()));
        assert_eq!(
            NameHint::parse("python3.12").and_then(|h| h.major_minor()),
            Some((3, 12))
        );
        assert_eq!(
            NameHint::parse("python3"),
            Some(NameHint {
                major: Some(3),
                minor: None
            })
        );
        for other in [
            "python3.12-config",
            "python3.",
            "pythonw",
            "python3.12t",
            "pypy3",
            "",
        ] {
            assert_eq!(NameHint::parse(other), None, "{other}");
        }
    }

    #[test]
    fn hints_admit_matching_requests_only() {
        let request: VersionRequest = "3.12".parse().unwrap();
        assert!(NameHint::parse("python").unwrap().admits(&request));
        assert!(NameHint::parse("python3").unwrap().admits(&request));
        assert!(NameHint::parse("python3.12").unwrap().admits(&request));
        assert!(!NameHint::parse("python3.11").unwrap().admits(&request));
        assert!(!NameHint::parse("python2").unwrap().admits(&request));
    }

    #[test]
    fn patchlevel_define() {
        let header = "#define PY_VERSION_HEX 0x030c01f0\n#define PY_VERSION      \t\"3.12.1\"\n";
        assert_eq!(py_version_define(header), "3.12.1".parse().ok());
        assert_eq!(py_version_define("#define PY_VERSION \"3.13.0rc1\""), None);
        assert_eq!(py_version_define("nothing here"), None);
    }
}
