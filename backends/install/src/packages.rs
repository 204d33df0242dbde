//! Scanning the distributions installed in an environment, without starting Python.
//!
//! Every `*.dist-info` directory (its `METADATA`) and `*.egg-info` directory (its `PKG-INFO`)
//! or file in the environment's `site-packages` directories is one distribution. Only the
//! header block of the metadata is read, up to its first blank line, and only its `Name` and
//! `Version` fields are kept, as the metadata spells them. When the metadata is missing or
//! unreadable, or lacks one of the two fields, the name and version are taken from the entry's
//! own name (`name-version.dist-info`, `name-version[-pyX.Y[-platform]].egg-info`); an entry
//! that yields no name or no version either way is not a distribution and is skipped.
//!
//! The environment's files are untrusted input, so the scanner never follows a symlink below
//! a `site-packages` directory: an entry or metadata file that is a symlink counts as missing
//! metadata (the entry's name is used). Metadata is read only from regular files, opened with
//! `O_NOFOLLOW | O_NONBLOCK` after an `lstat` (so a FIFO or a device is never opened, let alone
//! read), and at most [`HEADER_LIMIT`] bytes of it. A `site-packages` directory that resolves
//! outside the environment's root is not scanned. A broken entry therefore costs at most one
//! bounded read, and the scan never blocks.

use std::cmp::Ordering;
use std::ffi::CStr;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, CWD};
use wsp_protocol::Package;

/// The name normalized as PEP 503 says (the wheel installer's own).
pub use wsp_wheels::normalize_name;

/// The most of a metadata file ever read: its header block is a few KiB at most.
pub const HEADER_LIMIT: u64 = 64 * 1024;

/// The read buffer for a metadata file; the header block usually fits in it whole.
const HEADER_BUFFER: usize = 4096;

/// The distributions installed in the environment at `root`, sorted by normalized name.
pub fn installed_packages(root: &Path) -> io::Result<Vec<Package>> {
    scan(&site_packages_dirs(root))
}

/// The existing `lib/python*/site-packages` and `lib64/python*/site-packages` directories of
/// the environment at `root` that resolve inside it, each once (by resolved path), sorted.
pub fn site_packages_dirs(root: &Path) -> Vec<PathBuf> {
    let Ok(real_root) = root.canonicalize() else {
        return Vec::new();
    };
    let mut found: Vec<(PathBuf, PathBuf)> = Vec::new();
    for lib in ["lib", "lib64"] {
        let Ok(entries) = std::fs::read_dir(root.join(lib)) else {
            continue;
        };
        for entry in entries.flatten() {
            if !entry.file_name().to_string_lossy().starts_with("python") {
                continue;
            }
            let dir = entry.path().join("site-packages");
            let Ok(canonical) = dir.canonicalize() else {
                continue;
            };
            if !canonical.starts_with(&real_root) {
                tracing::debug!(dir = %dir.display(), "not scanned: it lies outside the environment");
                continue;
            }
            if canonical.is_dir() && !found.iter().any(|(_, seen)| *seen == canonical) {
                found.push((dir, canonical));
            }
        }
    }
    let mut dirs: Vec<PathBuf> = found.into_iter().map(|(dir, _)| dir).collect();
    dirs.sort();
    dirs
}

/// The distributions found in `dirs`, sorted by normalized name (PEP 503), then version, each
/// identical `(name, version)` once. A directory that does not exist is skipped; any other
/// failure to list one is an error.
pub fn scan(dirs: &[PathBuf]) -> io::Result<Vec<Package>> {
    let mut packages = Vec::new();
    for dir in dirs {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = match rustix::fs::openat(CWD, dir, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => continue,
            Err(errno) => return Err(errno.into()),
        };
        let mut entries = rustix::fs::Dir::read_from(&fd)?;
        while let Some(entry) = entries.read() {
            let entry = entry?;
            if let Some(package) = distribution(&fd, entry.file_name()) {
                packages.push(package);
            }
        }
    }
    let mut keyed: Vec<(String, Package)> = packages
        .into_iter()
        .map(|package| (normalize_name(&package.name), package))
        .collect();
    keyed.sort_by(|(a_key, a), (b_key, b)| compare(a_key, a, b_key, b));
    keyed.dedup_by(|(_, a), (_, b)| a == b);
    Ok(keyed.into_iter().map(|(_, package)| package).collect())
}

/// Reads a file of an environment that other code must parse whole (a conda-meta record, for
/// example) as untrusted input: only a regular file, opened without following a symlink and
/// without blocking, and at most `limit` bytes of it. Anything else is an
/// [`io::ErrorKind::InvalidData`] error saying what the path is.
pub fn read_untrusted_file(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let invalid = |what: &str| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} {what}", path.display()),
        )
    };
    match file_type(&CWD, path) {
        Some(FileType::RegularFile) => {}
        Some(FileType::Symlink) => return Err(invalid("is a symlink; it is not followed")),
        Some(_) => return Err(invalid("is not a regular file")),
        None => return Err(io::ErrorKind::NotFound.into()),
    }
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let file = File::from(rustix::fs::openat(CWD, path, flags, Mode::empty())?);
    if !file.metadata()?.is_file() {
        return Err(invalid("is not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(invalid(&format!("is larger than {limit} bytes")));
    }
    Ok(bytes)
}

fn compare(a_key: &str, a: &Package, b_key: &str, b: &Package) -> Ordering {
    a_key
        .cmp(b_key)
        .then_with(|| a.version.cmp(&b.version))
        .then_with(|| a.name.cmp(&b.name))
}

/// The distribution the entry `file_name` of the directory `dir` describes, if it is one.
fn distribution(dir: &OwnedFd, file_name: &CStr) -> Option<Package> {
    let file_name = file_name.to_str().ok()?;
    let (stem, header, is_egg) = if let Some(stem) = file_name.strip_suffix(".dist-info") {
        let header = open_subdir(dir, file_name).and_then(|entry| read_header(&entry, "METADATA"));
        (stem, header, false)
    } else if let Some(stem) = file_name.strip_suffix(".egg-info") {
        // An egg-info is a directory holding PKG-INFO, or the metadata file itself.
        let header = match file_type(dir, file_name) {
            Some(FileType::Directory) => {
                open_subdir(dir, file_name).and_then(|entry| read_header(&entry, "PKG-INFO"))
            }
            _ => read_header(dir, file_name),
        };
        (stem, header, true)
    } else {
        return None;
    };
    let (name, version) = header.unwrap_or_default();
    let (fallback_name, fallback_version) = split_stem(stem, is_egg);
    let name = name.or(fallback_name)?;
    let version = version.or(fallback_version)?;
    Some(Package { name, version })
}

/// The type of `name` in `dir` itself (a symlink is a symlink).
fn file_type(dir: &impl AsFd, name: impl rustix::path::Arg) -> Option<FileType> {
    let stat = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
    Some(FileType::from_raw_mode(stat.st_mode))
}

/// Opens the subdirectory `name` of `dir`, unless it is a symlink or not a directory.
fn open_subdir(dir: &impl AsFd, name: &str) -> Option<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    rustix::fs::openat(dir, name, flags, Mode::empty()).ok()
}

/// The `Name` and `Version` fields of the header block of the metadata file `name` in `dir`,
/// or `None` if it is not a regular file that can be opened. At most [`HEADER_LIMIT`] bytes
/// are read.
fn read_header(dir: &impl AsFd, name: &str) -> Option<(Option<String>, Option<String>)> {
    if file_type(dir, name)? != FileType::RegularFile {
        return None;
    }
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let file = File::from(rustix::fs::openat(dir, name, flags, Mode::empty()).ok()?);
    // Swapped for something else between the lstat and the open?
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let reader = BufReader::with_capacity(HEADER_BUFFER, file.take(HEADER_LIMIT));
    parse_header(reader).ok()
}

/// The `Name` and `Version` fields of a header block, up to its first blank line.
fn parse_header(mut reader: impl BufRead) -> io::Result<(Option<String>, Option<String>)> {
    let (mut name, mut version) = (None, None);
    let mut line = Vec::new();
    while name.is_none() || version.is_none() {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        if text.is_empty() {
            break;
        }
        let Some((field, value)) = text.split_once(':') else {
            continue;
        };
        let slot = if field.eq_ignore_ascii_case("Name") {
            &mut name
        } else if field.eq_ignore_ascii_case("Version") {
            &mut version
        } else {
            continue;
        };
        let value = value.trim();
        if slot.is_none() && !value.is_empty() {
            *slot = Some(value.to_owned());
        }
    }
    Ok((name, version))
}

/// Name and version from an entry's name without its suffix: `name-version` for a dist-info,
/// `name[-version[-pyX.Y[-platform]]]` for an egg-info.
fn split_stem(stem: &str, is_egg: bool) -> (Option<String>, Option<String>) {
    let mut parts = stem.splitn(if is_egg { 3 } else { 2 }, '-');
    let name = parts.next().filter(|name| !name.is_empty());
    let version = parts.next().filter(|version| !version.is_empty());
    (name.map(str::to_owned), version.map(str::to_owned))
}
