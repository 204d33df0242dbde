//! PEP 751 `pylock.toml`: written from an environment's distributions and their recorded
//! [`sources`](crate::sources), and read back into what an install from the lock needs.
//!
//! Each installed distribution is one `[[packages]]` entry with its exact `version`, and:
//! a wheel it came from as `[[packages.wheels]]` (`path` or `url`, `hashes.sha256`); an sdist as
//! `[packages.sdist]`; any other archive as `[packages.archive]`; a source tree as
//! `[packages.directory]`; a distribution from an index as `index`; one whose source is unknown
//! with neither. Paths are absolute.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::sources::{Origin, Sources};

/// The `lock-version` written, and the major version read.
const LOCK_VERSION: &str = "1.0";

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct Pylock {
    lock_version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    created_by: Option<String>,
    #[serde(default)]
    packages: Vec<Entry>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct Entry {
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

#[derive(Debug, Clone, Serialize, Deserialize)]
struct FileEntry {
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
    /// A package index.
    Index(String),
    /// Unknown: whatever the install's own sources offer at that version.
    Anywhere,
}

/// The `pylock.toml` of distributions `installed` (name, version), whose origins `sources`
/// records.
pub fn write(installed: &[wsp_protocol::Package], sources: &Sources) -> String {
    let packages = installed
        .iter()
        .map(|package| {
            let key = crate::packages::normalize_name(&package.name);
            let origin = sources
                .get(&key)
                .filter(|recorded| recorded.version == package.version)
                .map(|recorded| &recorded.origin);
            entry(&package.name, &package.version, origin)
        })
        .collect();
    let lock = Pylock {
        lock_version: LOCK_VERSION.to_owned(),
        created_by: Some("wsp".to_owned()),
        packages,
    };
    toml::to_string(&lock).unwrap_or_default()
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
            Ok(Locked {
                from: source_of(&entry, base)?,
                name: entry.name,
                version,
            })
        })
        .collect()
}

fn source_of(entry: &Entry, base: Option<&Path>) -> Result<LockedSource, String> {
    if entry.vcs.is_some() {
        return Err(format!(
            "package {} comes from version control, which wsp does not install from a lock",
            entry.name
        ));
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
            sha256: file.hashes.get("sha256").map(|hash| hash.to_lowercase()),
        });
    }
    if let Some(directory) = &entry.directory {
        let path = absolute(&directory.path, base);
        return Ok(LockedSource::Directory(path));
    }
    Ok(match &entry.index {
        Some(url) => LockedSource::Index(url.clone()),
        None => LockedSource::Anywhere,
    })
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
mod tests {
    use super::*;
    use crate::sources::Recorded;
    use wsp_protocol::Package;

    #[test]
    fn what_is_written_reads_back() {
        let installed = [
            Package {
                name: "Demo".into(),
                version: "1.0".into(),
            },
            Package {
                name: "other".into(),
                version: "2.0".into(),
            },
            Package {
                name: "pip".into(),
                version: "24.0".into(),
            },
        ];
        let mut sources = Sources::new();
        let origin = Origin::File {
            location: "/w/demo-1.0-py3-none-any.whl".into(),
            sha256: Some("ab".into()),
        };
        let version = "1.0".to_owned();
        sources.insert("demo".into(), Recorded { version, origin });
        let url = "https://example.org/simple".to_owned();
        let origin = Origin::Index { url: url.clone() };
        let version = "2.0".to_owned();
        sources.insert("other".into(), Recorded { version, origin });
        let text = write(&installed, &sources);
        assert!(text.contains("lock-version = \"1.0\""), "{text}");
        let locked = read(&text, None).expect("reads back");
        assert_eq!(
            locked.iter().map(|l| l.from.clone()).collect::<Vec<_>>(),
            [
                LockedSource::File {
                    location: "/w/demo-1.0-py3-none-any.whl".into(),
                    sha256: Some("ab".into())
                },
                LockedSource::Index(url),
                LockedSource::Anywhere,
            ]
        );
        assert!(read("lock-version = \"2.0\"", None).is_err());
        assert!(read("not toml [", None).is_err());
    }
}
