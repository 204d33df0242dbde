//! Where each installed distribution came from, recorded by wsp right after each install it
//! runs, in the environment's [`SOURCES_FILE`], for `environment/lock`.
//!
//! Neither uv nor pip records where a distribution from `find_links` or an index came from,
//! so wsp works it out once the installer has finished, for every distribution whose version
//! is not recorded yet, in this order:
//! 1. the distribution's `direct_url.json` (PEP 610), which pip and uv write for a direct
//!    reference (`name @ file:///...whl`, a URL, a directory): that file, URL or directory;
//! 2. the install's local `find_links` directories: the wheel whose name and version match and
//!    whose tags are exactly the ones in the distribution's `WHEEL` file, else the sdist of
//!    that name and version;
//! 3. the install's index (its `index_url`, else PyPI's), unless it said `no_index`.
//!
//! A local file's SHA-256 is computed when it is recorded. A distribution none of this finds
//! (one a command installed behind wsp's back, say) is locked by name and version alone.

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::packages::{normalize_name, read_untrusted_file, site_packages_dirs};
use crate::InstallSource;

/// The record's file name in an environment's root.
pub const SOURCES_FILE: &str = ".wsp-sources.json";

/// The index an install used when it named none.
pub const DEFAULT_INDEX: &str = "https://pypi.org/simple";

/// The most of a `direct_url.json`, `WHEEL` or sources record read.
const SMALL_FILE_LIMIT: u64 = 16 << 20;

/// Where one distribution came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Origin {
    /// A wheel or an sdist: an absolute path or a URL, with its SHA-256 when known.
    File {
        /// The absolute path or the URL.
        location: String,
        /// Lowercase hex.
        sha256: Option<String>,
    },
    /// A local directory (a source tree).
    Directory {
        /// Its absolute path.
        path: String,
    },
    /// A package index (PEP 503), by its URL.
    Index {
        /// The index's URL.
        url: String,
    },
}

/// One distribution's record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recorded {
    /// The version it was recorded at.
    pub version: String,
    /// Where that version came from.
    pub origin: Origin,
}

/// The records of an environment, by normalized name.
pub type Sources = BTreeMap<String, Recorded>;

/// An installed distribution's `.dist-info` directory, with the name and version its
/// directory name gives.
pub(crate) struct DistInfo {
    pub dir: PathBuf,
    pub name: String,
    pub version: String,
}

/// The records of the environment at `root` (none when there is no readable record).
pub fn read_sources(root: &Path) -> Sources {
    match read_untrusted_file(&root.join(SOURCES_FILE), SMALL_FILE_LIMIT) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|error| {
            tracing::warn!(%error, root = %root.display(), "the sources record is not valid; ignored");
            Sources::new()
        }),
        Err(_) => Sources::new(),
    }
}

/// Records where every installed distribution of the environment at `root` that has no
/// record at its version came from, for an install that looked in `source`; drops the
/// records of distributions no longer installed.
pub fn record_sources(root: &Path, source: &InstallSource) -> io::Result<()> {
    let mut sources = read_sources(root);
    let installed = dist_infos(root)?;
    sources.retain(|name, _| {
        installed
            .iter()
            .any(|dist| normalize_name(&dist.name) == *name)
    });
    let unrecorded: Vec<&DistInfo> = installed
        .iter()
        .filter(|dist| {
            sources
                .get(&normalize_name(&dist.name))
                .is_none_or(|recorded| recorded.version != dist.version)
        })
        .collect();
    for (dist, origin) in unrecorded.iter().zip(origins_of(&unrecorded, source)) {
        let key = normalize_name(&dist.name);
        match origin {
            Some(origin) => {
                let version = dist.version.clone();
                sources.insert(key, Recorded { version, origin });
            }
            None => {
                sources.remove(&key);
            }
        }
    }
    let text = serde_json::to_vec_pretty(&sources).map_err(io::Error::other)?;
    let mut file = tempfile::NamedTempFile::new_in(root)?;
    io::Write::write_all(&mut file, &text)?;
    file.persist(root.join(SOURCES_FILE))
        .map(|_| ())
        .map_err(|error| error.error)
}

/// The `.dist-info` directories of the environment at `root` (not following symlinks).
pub(crate) fn dist_infos(root: &Path) -> io::Result<Vec<DistInfo>> {
    let mut found = Vec::new();
    for dir in site_packages_dirs(root) {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let file_name = entry.file_name().to_string_lossy().into_owned();
            let Some(stem) = file_name.strip_suffix(".dist-info") else {
                continue;
            };
            if !entry.file_type()?.is_dir() {
                continue;
            }
            if let Some((name, version)) = stem.split_once('-') {
                found.push(DistInfo {
                    dir: entry.path(),
                    name: name.to_owned(),
                    version: version.to_owned(),
                });
            }
        }
    }
    Ok(found)
}

/// [`origin_of`] each of `dists`, in order, on as many threads as there are cores: a wheel
/// from `find_links` is hashed whole (numpy's is 16 MB). The calling thread takes the first
/// share, so an install of one distribution starts no thread.
fn origins_of(dists: &[&DistInfo], source: &InstallSource) -> Vec<Option<Origin>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut shares = dists.chunks(dists.len().div_ceil(threads).max(1));
    let Some(first) = shares.next() else {
        return Vec::new();
    };
    let origins_in = |share: &[&DistInfo]| -> Vec<Option<Origin>> {
        share.iter().map(|dist| origin_of(dist, source)).collect()
    };
    std::thread::scope(|scope| {
        let others: Vec<_> = shares
            .map(|share| (share.len(), scope.spawn(move || origins_in(share))))
            .collect();
        let mut origins = origins_in(first);
        // A thread that panicked knew nothing of its share; the others stay in step.
        for (len, thread) in others {
            origins.extend(thread.join().unwrap_or_else(|_| vec![None; len]));
        }
        origins
    })
}

fn origin_of(dist: &DistInfo, source: &InstallSource) -> Option<Origin> {
    if let Some(origin) = direct_url(&dist.dir) {
        return Some(origin);
    }
    if let Some(file) = in_find_links(dist, &source.find_links) {
        let sha256 = sha256_of(&file).ok();
        let location = file.to_string_lossy().into_owned();
        return Some(Origin::File { location, sha256 });
    }
    (!source.no_index).then(|| Origin::Index {
        url: source
            .index_url
            .clone()
            .unwrap_or_else(|| DEFAULT_INDEX.to_owned()),
    })
}

#[derive(Deserialize)]
struct DirectUrl {
    url: String,
    archive_info: Option<ArchiveInfo>,
    dir_info: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct ArchiveInfo {
    #[serde(default)]
    hashes: BTreeMap<String, String>,
    hash: Option<String>,
}

/// The origin a PEP 610 `direct_url.json` records.
fn direct_url(dist_info: &Path) -> Option<Origin> {
    let bytes = read_untrusted_file(&dist_info.join("direct_url.json"), SMALL_FILE_LIMIT).ok()?;
    let direct: DirectUrl = serde_json::from_slice(&bytes).ok()?;
    let local = file_url_path(&direct.url);
    if direct.dir_info.is_some() {
        let path = local?.to_string_lossy().into_owned();
        return Some(Origin::Directory { path });
    }
    let recorded = direct.archive_info.and_then(|info| {
        info.hashes.get("sha256").cloned().or_else(|| {
            info.hash
                .and_then(|hash| hash.strip_prefix("sha256=").map(str::to_owned))
        })
    });
    let (location, sha256) = match local {
        Some(path) => {
            let sha256 = recorded.or_else(|| sha256_of(&path).ok());
            (path.to_string_lossy().into_owned(), sha256)
        }
        None => (direct.url, recorded),
    };
    Some(Origin::File { location, sha256 })
}

/// The path a `file://` URL names.
pub(crate) fn file_url_path(url: &str) -> Option<PathBuf> {
    url::Url::parse(url)
        .ok()
        .filter(|url| url.scheme() == "file")
        .and_then(|url| url.to_file_path().ok())
}

/// The file in the local `find_links` directories `dist` was installed from.
fn in_find_links(dist: &DistInfo, find_links: &[String]) -> Option<PathBuf> {
    let name = normalize_name(&dist.name);
    let tags = wheel_tags(&dist.dir);
    let dirs = find_links.iter().filter_map(|link| {
        file_url_path(link).or_else(|| link.starts_with('/').then(|| PathBuf::from(link)))
    });
    let mut sdist = None;
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let file_name = entry.file_name().to_string_lossy().into_owned();
            if let Some(stem) = file_name.strip_suffix(".whl") {
                let parts: Vec<&str> = stem.split('-').collect();
                if parts.len() < 5 || normalize_name(parts[0]) != name || parts[1] != dist.version {
                    continue;
                }
                let [python, abi, platform] = [
                    parts[parts.len() - 3],
                    parts[parts.len() - 2],
                    parts[parts.len() - 1],
                ];
                if expand_tags(python, abi, platform) == tags {
                    return Some(entry.path());
                }
            } else if sdist.is_none() {
                let stem = file_name
                    .strip_suffix(".tar.gz")
                    .or_else(|| file_name.strip_suffix(".zip"));
                let matches = stem
                    .and_then(|stem| stem.rsplit_once('-'))
                    .is_some_and(|(n, v)| normalize_name(n) == name && v == dist.version);
                if matches {
                    sdist = Some(entry.path());
                }
            }
        }
    }
    sdist
}

/// The tags a `.dist-info/WHEEL` file lists, sorted.
fn wheel_tags(dist_info: &Path) -> Vec<String> {
    let Ok(bytes) = read_untrusted_file(&dist_info.join("WHEEL"), SMALL_FILE_LIMIT) else {
        return Vec::new();
    };
    let mut tags: Vec<String> = String::from_utf8_lossy(&bytes)
        .lines()
        .filter_map(|line| line.strip_prefix("Tag:"))
        .map(|tag| tag.trim().to_owned())
        .collect();
    tags.sort();
    tags.dedup();
    tags
}

/// The tags a wheel's compressed tag set (`py2.py3-none-any`) stands for, sorted.
fn expand_tags(python: &str, abi: &str, platform: &str) -> Vec<String> {
    let mut tags = Vec::new();
    for p in python.split('.') {
        for a in abi.split('.') {
            for x in platform.split('.') {
                tags.push(format!("{p}-{a}-{x}"));
            }
        }
    }
    tags.sort();
    tags.dedup();
    tags
}

/// The SHA-256 of the file at `path`, in lowercase hex.
pub fn sha256_of(path: &Path) -> io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let read = file.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(format!("{:x}", hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compressed_tag_set_stands_for_each_of_its_tags() {
        assert_eq!(
            expand_tags("py2.py3", "none", "any"),
            ["py2-none-any", "py3-none-any"]
        );
    }
}
