//! Scanning the distributions installed in an environment, without starting Python.
//!
//! Every `*.dist-info` directory (its `METADATA`) and `*.egg-info` directory (its `PKG-INFO`)
//! or file in the environment's `site-packages` directories is one distribution. Only the
//! header block of the metadata is read, up to its first blank line, and only its `Name` and
//! `Version` fields are kept, as the metadata spells them. When the metadata is missing or
//! unreadable, or lacks one of the two fields, the name and version are taken from the entry's
//! own name (`name-version.dist-info`, `name-version[-pyX.Y[-platform]].egg-info`); an entry
//! that yields no name or no version either way is not a distribution and is skipped.

use std::cmp::Ordering;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};

use wsp_protocol::Package;

/// The read buffer for a metadata file; the header block usually fits in it whole.
const HEADER_BUFFER: usize = 4096;

/// The distributions installed in the environment at `root`, sorted by normalized name.
pub fn installed_packages(root: &Path) -> io::Result<Vec<Package>> {
    scan(&site_packages_dirs(root))
}

/// The existing `lib/python*/site-packages` and `lib64/python*/site-packages` directories of
/// the environment at `root`, each once (by resolved path), sorted.
pub fn site_packages_dirs(root: &Path) -> Vec<PathBuf> {
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
            if let Ok(canonical) = dir.canonicalize() {
                if canonical.is_dir() && !found.iter().any(|(_, seen)| *seen == canonical) {
                    found.push((dir, canonical));
                }
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
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(error) if error.kind() == io::ErrorKind::NotFound => continue,
            Err(error) => return Err(error),
        };
        for entry in entries {
            let entry = entry?;
            let file_name = entry.file_name();
            let Some(file_name) = file_name.to_str() else {
                continue;
            };
            if let Some(package) = distribution(&entry.path(), file_name) {
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

/// The name normalized as PEP 503 says: lowercase, each run of `-`, `_` and `.` one `-`.
pub fn normalize_name(name: &str) -> String {
    let mut normalized = String::with_capacity(name.len());
    let mut in_separator = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !in_separator {
                normalized.push('-');
            }
            in_separator = true;
        } else {
            normalized.extend(c.to_lowercase());
            in_separator = false;
        }
    }
    normalized
}

fn compare(a_key: &str, a: &Package, b_key: &str, b: &Package) -> Ordering {
    a_key
        .cmp(b_key)
        .then_with(|| a.version.cmp(&b.version))
        .then_with(|| a.name.cmp(&b.name))
}

/// The distribution an entry of `site-packages` describes, if it is one.
fn distribution(path: &Path, file_name: &str) -> Option<Package> {
    let (stem, metadata, is_egg) = if let Some(stem) = file_name.strip_suffix(".dist-info") {
        (stem, path.join("METADATA"), false)
    } else if let Some(stem) = file_name.strip_suffix(".egg-info") {
        let metadata = if path.is_dir() {
            path.join("PKG-INFO")
        } else {
            path.to_path_buf()
        };
        (stem, metadata, true)
    } else {
        return None;
    };
    let (name, version) = read_header(&metadata).unwrap_or_default();
    let (fallback_name, fallback_version) = split_stem(stem, is_egg);
    let name = name.or(fallback_name)?;
    let version = version.or(fallback_version)?;
    Some(Package { name, version })
}

/// The `Name` and `Version` fields of the header block of a metadata file.
fn read_header(path: &Path) -> io::Result<(Option<String>, Option<String>)> {
    let mut reader = BufReader::with_capacity(HEADER_BUFFER, File::open(path)?);
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
