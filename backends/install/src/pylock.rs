//! PEP 751 `pylock.toml`: written from an environment's distributions and their recorded
//! [`sources`](crate::sources), and read back into what an install from the lock needs.
//!
//! Each installed distribution is one `[[packages]]` entry with its exact `version`, and:
//! a wheel it came from as `[[packages.wheels]]` (`path` or `url`, `hashes.sha256`); an sdist as
//! `[packages.sdist]`; any other archive as `[packages.archive]`; a source tree as
//! `[packages.directory]`; a distribution from an index as `index`, with the files that index
//! offers for its version and their hashes when they are known (module `index_files`); one
//! whose source is unknown with neither. Paths are absolute.
//!
//! Read back, an entry with an `index` is installed from that index by its exact version, and
//! when its files carry hashes, only a file with one of them is accepted.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::sources::{Origin, Sources};

/// The `lock-version` written, and the major version read.
const LOCK_VERSION: &str = "1.0";

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) struct Pylock {
    lock_version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    created_by: Option<String>,
    #[serde(default)]
    packages: Vec<Entry>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) struct Entry {
    name: String,
    version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    index: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    wheels: Vec<FileEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sdist: Option<FileEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    archive: Option<FileEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    directory: Option<DirectoryEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    vcs: Option<toml::Value>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FileEntry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    hashes: BTreeMap<String, String>,
}

#[derive(Debug, Serialize, Deserialize)]
struct DirectoryEntry {
    path: String,
}

/// One distribution a lock names, as an install needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locked {
    /// Its name.
    pub name: String,
    /// Its exact version.
    pub version: String,
    /// Where it comes from.
    pub from: LockedSource,
}

/// Where a locked distribution comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockedSource {
    /// A file: an absolute path or a URL, with its SHA-256 when the lock carries one.
    File {
        /// The absolute path or the URL.
        location: String,
        /// Lowercase hex.
        sha256: Option<String>,
    },
    /// A local source tree.
    Directory(String),
    /// A package index, with the SHA-256s (lowercase hex) of the files the lock accepts from
    /// it; none: any file of that version.
    Index {
        /// The index's URL.
        url: String,
        /// The accepted files' hashes.
        sha256: Vec<String>,
    },
    /// Unknown: whatever the install's own sources offer at that version.
    Anywhere,
}

/// The files an index offers for one version of a distribution.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexFiles {
    wheels: Vec<FileEntry>,
    sdist: Option<FileEntry>,
}

impl IndexFiles {
    /// One wheel at `url` (an http, https or file URL ending in `.whl`) with `sha256`; `None`
    /// for anything else.
    pub(crate) fn one_wheel(url: String, sha256: &str) -> Option<IndexFiles> {
        let sha256 = sha256_hex("", sha256).ok()?;
        (is_plain_url(&url) && url.ends_with(".whl")).then(|| IndexFiles {
            wheels: vec![FileEntry {
                name: None,
                url: Some(url),
                path: None,
                hashes: BTreeMap::from([("sha256".to_owned(), sha256)]),
            }],
            sdist: None,
        })
    }
}

/// An http, https or file URL with no whitespace or control character in it: one that goes
/// into an installer's argument or a lock as it is.
pub(crate) fn is_plain_url(url: &str) -> bool {
    ["http://", "https://", "file://"]
        .iter()
        .any(|scheme| url.starts_with(scheme))
        && !url.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// What is known of index files, by normalized name and version.
pub type KnownIndexFiles = BTreeMap<(String, String), IndexFiles>;

/// The index files a `pylock.toml` (uv's, say) names, by normalized name and version: its
/// wheels and sdist with a URL and a SHA-256 each; files without either are left out.
pub(crate) fn index_files_in(text: &str) -> Result<KnownIndexFiles, String> {
    let lock: Pylock = toml::from_str(text).map_err(|e| format!("not a pylock.toml: {e}"))?;
    let usable = |file: &FileEntry| file.url.is_some() && file.hashes.contains_key("sha256");
    Ok(lock
        .packages
        .into_iter()
        .filter_map(|entry| {
            let version = entry.version?;
            let wheels: Vec<FileEntry> = entry.wheels.into_iter().filter(usable).collect();
            let sdist = entry.sdist.filter(usable);
            let key = (crate::packages::normalize_name(&entry.name), version);
            (!wheels.is_empty() || sdist.is_some()).then_some((key, IndexFiles { wheels, sdist }))
        })
        .collect())
}

/// The `pylock.toml` of distributions `installed` (name, version), whose origins `sources`
/// records; an index-sourced one lists the files `index_files` knows for its version.
pub fn write(
    installed: &[wsp_protocol::Package],
    sources: &Sources,
    index_files: &KnownIndexFiles,
) -> String {
    let packages = installed
        .iter()
        .map(|package| {
            let key = crate::packages::normalize_name(&package.name);
            let origin = sources
                .get(&key)
                .filter(|recorded| recorded.version == package.version)
                .map(|recorded| &recorded.origin);
            let mut entry = entry(&package.name, &package.version, origin);
            if entry.index.is_some() {
                if let Some(files) = index_files.get(&(key, package.version.clone())) {
                    entry.wheels = files.wheels.iter().map(named).collect();
                    entry.sdist = files.sdist.as_ref().map(named);
                }
            }
            entry
        })
        .collect();
    let lock = Pylock {
        lock_version: LOCK_VERSION.to_owned(),
        created_by: Some("wsp".to_owned()),
        packages,
    };
    toml::to_string(&lock).unwrap_or_default()
}

/// `file` with its `name` (the last segment of its URL) when it had none.
fn named(file: &FileEntry) -> FileEntry {
    let mut file = file.clone();
    if file.name.is_none() {
        let last = file.url.as_deref().and_then(|url| url.rsplit('/').next());
        file.name = last.filter(|name| !name.is_empty()).map(str::to_owned);
    }
    file
}

fn entry(name: &str, version: &str, origin: Option<&Origin>) -> Entry {
    let mut entry = Entry {
        name: name.to_owned(),
        version: Some(version.to_owned()),
        index: None,
        wheels: Vec::new(),
        sdist: None,
        archive: None,
        directory: None,
        vcs: None,
    };
    match origin {
        Some(Origin::File { location, sha256 }) => {
            let is_url = location.contains("://");
            let file_name = location.rsplit('/').next().unwrap_or(location).to_owned();
            let file = FileEntry {
                name: Some(file_name.clone()),
                url: is_url.then(|| location.clone()),
                path: (!is_url).then(|| location.clone()),
                hashes: sha256
                    .iter()
                    .map(|hash| ("sha256".to_owned(), hash.clone()))
                    .collect(),
            };
            if file_name.ends_with(".whl") {
                entry.wheels.push(file);
            } else if file_name.ends_with(".tar.gz") {
                entry.sdist = Some(file);
            } else {
                entry.archive = Some(FileEntry { name: None, ..file });
            }
        }
        Some(Origin::Directory { path }) => {
            entry.directory = Some(DirectoryEntry { path: path.clone() })
        }
        Some(Origin::Index { url }) => entry.index = Some(url.clone()),
        None => {}
    }
    entry
}

/// The distributions a `pylock.toml` names, or why it can't be read. A relative `path` is
/// taken relative to `base` (the lock's own directory, when known).
pub fn read(text: &str, base: Option<&Path>) -> Result<Vec<Locked>, String> {
    let lock: Pylock = toml::from_str(text).map_err(|e| format!("not a pylock.toml: {e}"))?;
    if lock.lock_version.split('.').next() != Some("1") {
        return Err(format!(
            "lock-version {} is not one wsp reads (1.x)",
            lock.lock_version
        ));
    }
    lock.packages
        .into_iter()
        .map(|entry| {
            let version = entry
                .version
                .clone()
                .ok_or_else(|| format!("package {} has no version", entry.name))?;
            check_name_and_version(&entry.name, &version)?;
            Ok(Locked {
                from: source_of(&entry, base)?,
                name: entry.name,
                version,
            })
        })
        .collect()
}

/// A name as PEP 508 spells one, and a version of the characters PEP 440 versions use: what
/// an installer's requirement line can carry with nothing else in it.
pub(crate) fn check_name_and_version(name: &str, version: &str) -> Result<(), String> {
    let name_ok = !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !name_ok {
        return Err(format!("{name:?} is not a package name"));
    }
    let version_ok = !version.is_empty()
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+' | '!'));
    if !version_ok {
        return Err(format!(
            "package {name} has version {version:?}, not a version"
        ));
    }
    Ok(())
}

/// `hash` in lowercase, when it is a SHA-256 in hex.
fn sha256_hex(name: &str, hash: &str) -> Result<String, String> {
    if hash.len() == 64 && hash.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(hash.to_lowercase())
    } else {
        Err(format!(
            "package {name} has sha256 {hash:?}, not 64 hex digits"
        ))
    }
}

fn source_of(entry: &Entry, base: Option<&Path>) -> Result<LockedSource, String> {
    if entry.vcs.is_some() {
        return Err(format!(
            "package {} comes from version control, which wsp does not install from a lock",
            entry.name
        ));
    }
    if let Some(url) = &entry.index {
        let files = entry.wheels.iter().chain(entry.sdist.as_ref());
        let sha256 = files
            .filter_map(|file| file.hashes.get("sha256"))
            .map(|hash| sha256_hex(&entry.name, hash))
            .collect::<Result<_, _>>()?;
        return Ok(LockedSource::Index {
            url: url.clone(),
            sha256,
        });
    }
    let file = entry
        .wheels
        .iter()
        .find(|wheel| local_path(wheel, base).is_some_and(|path| Path::new(&path).exists()))
        .or_else(|| entry.wheels.first())
        .or(entry.sdist.as_ref())
        .or(entry.archive.as_ref());
    if let Some(file) = file {
        let location = local_path(file, base)
            .or_else(|| file.url.clone())
            .ok_or_else(|| format!("a file of package {} has neither path nor url", entry.name))?;
        return Ok(LockedSource::File {
            location,
            sha256: file
                .hashes
                .get("sha256")
                .map(|hash| sha256_hex(&entry.name, hash))
                .transpose()?,
        });
    }
    if let Some(directory) = &entry.directory {
        let path = absolute(&directory.path, base);
        return Ok(LockedSource::Directory(path));
    }
    Ok(LockedSource::Anywhere)
}

fn local_path(file: &FileEntry, base: Option<&Path>) -> Option<String> {
    let path = file.path.as_ref().map(|path| absolute(path, base));
    path.or_else(|| {
        let url = file.url.as_deref()?;
        crate::sources::file_url_path(url).map(|path| path.to_string_lossy().into_owned())
    })
}

fn absolute(path: &str, base: Option<&Path>) -> String {
    match base {
        Some(base) if !path.starts_with('/') => base.join(path).to_string_lossy().into_owned(),
        _ => path.to_owned(),
    }
}

#[cfg(test)]
mod tests;
