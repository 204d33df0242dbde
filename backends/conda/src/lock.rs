//! Locking a prefix as a conda explicit spec, and installing exactly what one names.
//!
//! The lock is `@EXPLICIT`, then each package record's URL (from its `conda-meta/*.json`) with
//! `#<sha256>` (or `#<md5>` when the record has no SHA-256). A prefix whose `site-packages`
//! holds a Python distribution that no conda record installed (pip put it there) is refused
//! with `lock-unsupported`, naming them: an explicit spec cannot carry it.
//!
//! An install from such a lock looks up each URL's record in the configured channels (by the
//! URL, or by the file name and the same hash), checks the lock's hash against the record's
//! and, for a local file, against the file itself, and then makes the prefix hold exactly
//! those records, as an install does ([`link::apply`]). Any mismatch is `install-failed`
//! before the prefix is changed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use rattler_conda_types::package::CondaArchiveIdentifier;
use rattler_conda_types::{
    ExplicitEnvironmentSpec, MatchSpec, PackageArchiveHash, PackageName, RepoDataRecord,
};
use wsp_backend::{BackendError, LockInstallRequest};
use wsp_protocol::{FailureReason, Lock, LockFormat};

use crate::channels::ChannelSet;
use crate::installed::Installed;
use crate::link::{self, Reasons};
use crate::progress::Steps;
use crate::CondaConfig;

const INSTALL: Reasons = Reasons {
    failed: FailureReason::InstallFailed,
    fetch: FailureReason::InstallFailed,
};

fn failed(detail: impl std::fmt::Display) -> BackendError {
    BackendError::failed(FailureReason::InstallFailed, detail)
}

/// The explicit spec of the prefix at `root`.
pub(crate) async fn lock(root: &Path) -> Result<Lock, BackendError> {
    let (_, installed) = crate::install::open_prefix(root)
        .await
        .map_err(|error| error.with_reason(FailureReason::DescribeFailed))?;
    let root = root.to_owned();
    let owned: BTreeSet<PathBuf> = installed
        .iter()
        .flat_map(|i| i.record.files.iter().cloned())
        .collect();
    let foreign = tokio::task::spawn_blocking(move || foreign_distributions(&root, &owned))
        .await
        .map_err(|e| BackendError::caused_by(FailureReason::DescribeFailed, "locking", e))?;
    if !foreign.is_empty() {
        return Err(BackendError::failed(
            FailureReason::LockUnsupported,
            format!(
                "these packages were not installed by conda, and an explicit spec cannot hold them: {}",
                foreign.join(", ")
            ),
        ));
    }
    Ok(Lock {
        format: LockFormat::CondaExplicit,
        text: explicit_text(&installed),
    })
}

fn explicit_text(installed: &[Installed]) -> String {
    let mut records: Vec<&Installed> = installed.iter().collect();
    records.sort_by(|a, b| a.name().cmp(b.name()));
    let mut text = String::from("# wsp: conda explicit spec\n@EXPLICIT\n");
    for installed in records {
        let record = &installed.record.repodata_record;
        let mut url = record.url.clone();
        let package = &record.package_record;
        let hash = match (&package.sha256, &package.md5) {
            (Some(sha256), _) => Some(hex(sha256)),
            (None, Some(md5)) => Some(hex(md5)),
            (None, None) => None,
        };
        url.set_fragment(hash.as_deref());
        text.push_str(url.as_str());
        text.push('\n');
    }
    text
}

/// The `name version` of each distribution in the prefix's `site-packages` whose `METADATA`
/// (or `PKG-INFO`) no conda record lists.
fn foreign_distributions(root: &Path, owned: &BTreeSet<PathBuf>) -> Vec<String> {
    let mut foreign = Vec::new();
    for dir in wsp_install::packages::site_packages_dirs(root) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let metadata = if name.ends_with(".dist-info") {
                "METADATA"
            } else if name.ends_with(".egg-info") {
                "PKG-INFO"
            } else {
                continue;
            };
            let Ok(relative) = entry
                .path()
                .join(metadata)
                .strip_prefix(root)
                .map(Path::to_owned)
            else {
                continue;
            };
            if !owned.contains(&relative) {
                let stem = name
                    .rsplit_once('.')
                    .map_or(name.as_str(), |(stem, _)| stem);
                foreign.push(stem.replacen('-', " ", 1));
            }
        }
    }
    foreign.sort();
    foreign
}

/// Makes the prefix at `request.root` hold exactly the packages `request.lock` names.
pub(crate) async fn install_lock(
    config: &CondaConfig,
    request: &LockInstallRequest,
) -> Result<(), BackendError> {
    if request.lock.format != LockFormat::CondaExplicit {
        return Err(failed(format!(
            "the conda backend installs from conda-explicit locks, not {}",
            request.lock.format
        )));
    }
    let spec = ExplicitEnvironmentSpec::from_str(&request.lock.text)
        .map_err(|e| failed(format!("the lock is not an explicit spec: {e}")))?;
    let step = Steps::new(request.progress.clone());
    let channels =
        ChannelSet::new(config).map_err(|e| e.with_reason(FailureReason::InstallFailed))?;
    let mut wanted = Vec::new();
    let mut names = BTreeSet::new();
    for entry in &spec.packages {
        let identifier = CondaArchiveIdentifier::try_from_url(&entry.url)
            .ok_or_else(|| failed(format!("{} does not name a conda package", entry.url)))?;
        let hash = entry
            .package_archive_hash()
            .map_err(|e| failed(format!("the hash of {}: {e}", entry.url)))?;
        names.insert(identifier.identifier.name.clone());
        wanted.push((entry.url.clone(), identifier, hash));
    }
    let specs = names
        .iter()
        .map(|name| {
            PackageName::from_str(name)
                .map(MatchSpec::from)
                .map_err(|e| failed(format!("`{name}`: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let repodata = channels
        .query(specs, false)
        .await
        .map_err(|e| e.with_reason(FailureReason::InstallFailed))?;
    let available: Vec<&RepoDataRecord> = repodata.iter().flat_map(|r| r.iter()).collect();
    let mut desired = Vec::with_capacity(wanted.len());
    for (url, _, hash) in &wanted {
        let mut plain = url.clone();
        plain.set_fragment(None);
        let record = available
            .iter()
            .find(|record| record.url == plain)
            .or_else(|| {
                let wanted_file = file_name(&plain);
                available.iter().find(|record| {
                    file_name(&record.url) == wanted_file
                        && hash.as_ref().is_some_and(|h| same(h, record))
                })
            })
            .ok_or_else(|| {
                failed(format!(
                    "{plain} is in none of the channels {}",
                    channels.urls().join(", ")
                ))
            })?;
        if let Some(hash) = hash {
            if !same(hash, record) {
                return Err(failed(format!(
                    "{plain}: the lock's hash does not match the channel's record"
                )));
            }
        }
        desired.push((*record).clone());
    }
    check_local_files(&desired).await?;
    step.send(format!("Locked: {} packages", desired.len()), Some(30))
        .await;
    let (prefix, installed) = crate::install::open_prefix(&request.root).await?;
    check_python(&installed, &desired)?;
    link::apply(
        &channels,
        prefix,
        installed,
        desired,
        Vec::new(),
        &step,
        &INSTALL,
    )
    .await
}

/// Lowercase hex.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The last segment of a package's URL.
fn file_name(url: &url::Url) -> Option<String> {
    url.path_segments()
        .and_then(|mut segments| segments.next_back())
        .map(str::to_owned)
}

/// The lock's `python` is the one provisioned for the request (the environment's recorded
/// version must stay true).
fn check_python(installed: &[Installed], desired: &[RepoDataRecord]) -> Result<(), BackendError> {
    fn python<'a>(mut records: impl Iterator<Item = &'a RepoDataRecord>) -> Option<String> {
        records
            .find(|record| record.package_record.name.as_normalized() == "python")
            .map(|record| record.package_record.version.to_string())
    }
    let provisioned = python(installed.iter().map(|i| &i.record.repodata_record));
    let locked = python(desired.iter());
    match (provisioned, locked) {
        (Some(provisioned), Some(locked)) if provisioned != locked => Err(failed(format!(
            "the lock holds python {locked}, but python_version asked for {provisioned}"
        ))),
        (Some(_), None) => Err(failed("the lock holds no python package")),
        _ => Ok(()),
    }
}

/// Whether the lock's `hash` is the record's.
fn same(hash: &PackageArchiveHash, record: &RepoDataRecord) -> bool {
    let package = &record.package_record;
    match hash {
        PackageArchiveHash::Sha256(sha256) => package.sha256.as_ref() == Some(sha256),
        PackageArchiveHash::Md5(md5) => package.md5.as_ref() == Some(md5),
    }
}

/// Each `file://` package's file has the SHA-256 its record gives.
async fn check_local_files(records: &[RepoDataRecord]) -> Result<(), BackendError> {
    let local: Vec<(PathBuf, Option<String>)> = records
        .iter()
        .filter(|record| record.url.scheme() == "file")
        .filter_map(|record| {
            let path = record.url.to_file_path().ok()?;
            let sha256 = record.package_record.sha256.as_ref().map(|h| hex(h));
            Some((path, sha256))
        })
        .collect();
    tokio::task::spawn_blocking(move || {
        for (path, expected) in local {
            let Some(expected) = expected else { continue };
            let actual = wsp_install::sources::sha256_of(&path)
                .map_err(|e| failed(format!("reading {}: {e}", path.display())))?;
            if actual != expected {
                return Err(failed(format!(
                    "{} has sha256 {actual}, its record says {expected}",
                    path.display()
                )));
            }
        }
        Ok(())
    })
    .await
    .map_err(|e| failed(format!("checking the packages: {e}")))?
}
