//! Locking a venv-layout environment (`pylock.toml`), and installing exactly what such a lock
//! names into a new one.
//!
//! An install from a lock checks before the installer starts that every local file the lock
//! names exists and has the SHA-256 the lock gives; then the installer gets one requirement
//! per distribution, each a direct reference to its file (`name @ file:///...`) or an exact
//! pin (`name==version`, from the lock's index), with `--no-deps`, and, for the ones that carry
//! hashes, `--require-hashes` (so a remote file is checked by the installer as it is fetched:
//! an index-sourced pin accepts only a file with one of the hashes the lock lists). What
//! the environment held before that the lock does not name is uninstalled, and the result
//! must be exactly the lock's distributions at the lock's versions. Any mismatch is
//! `install-failed`; the server then deletes the new environment.

use std::collections::BTreeMap;
use std::path::Path;

use wsp_backend::{BackendError, LockInstallRequest, UninstallRequest};
use wsp_exec::Activation;
use wsp_protocol::{FailureReason, Lock, LockFormat};

use crate::helper::requirements_file;
use crate::index_files::{index_files, IndexSourced};
use crate::packages::{installed_packages, normalize_name};
use crate::pylock::{Locked, LockedSource};
use crate::sources::{read_sources, record_sources, sha256_of, Origin};
use crate::{InstallSource, Installer};

fn failed(detail: impl std::fmt::Display) -> BackendError {
    BackendError::failed(FailureReason::InstallFailed, detail)
}

/// The `pylock.toml` of the venv at `root`: its distributions and where each came from. A
/// distribution from an index also lists the files of its version that `installer` reports,
/// with their hashes (module `index_files`).
pub async fn lock(root: &Path, installer: &Installer) -> Result<Lock, BackendError> {
    let read_root = root.to_owned();
    let (installed, sources) = tokio::task::spawn_blocking(move || {
        let installed = installed_packages(&read_root).map_err(|e| {
            BackendError::caused_by(FailureReason::DescribeFailed, "reading the packages", e)
        })?;
        Ok::<_, BackendError>((installed, read_sources(&read_root)))
    })
    .await
    .map_err(|e| BackendError::caused_by(FailureReason::DescribeFailed, "locking", e))??;
    let index_sourced: Vec<IndexSourced> = installed
        .iter()
        .filter_map(|package| {
            let recorded = sources.get(&normalize_name(&package.name))?;
            match &recorded.origin {
                Origin::Index { url } if recorded.version == package.version => {
                    Some(IndexSourced {
                        name: package.name.clone(),
                        version: package.version.clone(),
                        index: url.clone(),
                    })
                }
                _ => None,
            }
        })
        .collect();
    let known = if index_sourced.is_empty() {
        Default::default()
    } else {
        let python = crate::venv_layout::interpreter_path(root);
        index_files(installer, &python, index_sourced).await
    };
    Ok(Lock {
        format: LockFormat::Pylock,
        text: crate::pylock::write(&installed, &sources, &known),
    })
}

/// Installs exactly what `request.lock` names into the venv at its root with `installer`.
pub async fn install_lock(
    installer: &Installer,
    python: &Path,
    activation: &Activation,
    request: &LockInstallRequest,
) -> Result<(), BackendError> {
    wsp_wheels::settled(&request.root).await;
    if request.lock.format != LockFormat::Pylock {
        return Err(failed(format!(
            "this backend installs from pylock.toml locks, not {}",
            request.lock.format
        )));
    }
    let locked = crate::pylock::read(&request.lock.text, None).map_err(failed)?;
    let checked = locked.clone();
    tokio::task::spawn_blocking(move || check_files(&checked))
        .await
        .map_err(|e| failed(format!("checking the lock's files: {e}")))??;
    let source = source_for(&locked, &request.source);
    let (hashed, unhashed): (Vec<&Locked>, Vec<&Locked>) =
        locked.iter().partition(|l| match &l.from {
            LockedSource::File { sha256, .. } => sha256.is_some(),
            LockedSource::Index { sha256, .. } => !sha256.is_empty(),
            LockedSource::Directory(_) | LockedSource::Anywhere => false,
        });
    for (group, hashes) in [(hashed, true), (unhashed, false)] {
        if group.is_empty() {
            continue;
        }
        let requirements = requirements_file(group.iter().map(|entry| requirement(entry)))
            .map_err(|e| failed(format!("writing the requirements: {e}")))?;
        let argv = installer.lock_install_argv(
            python,
            requirements.path(),
            &source,
            hashes,
            request.sandbox.is_some(),
        );
        crate::output::run_installer(
            activation,
            &request.environment_id,
            &argv,
            installer.steps(),
            request.progress.clone(),
            request.sandbox.clone(),
        )
        .await?;
    }
    remove_extras(installer, python, activation, request, &locked).await?;
    let root = request.root.clone();
    tokio::task::spawn_blocking(move || {
        verify(&root, &locked)?;
        record_sources(&root, &source).map_err(|e| failed(format!("recording the sources: {e}")))
    })
    .await
    .map_err(|e| failed(format!("checking the result: {e}")))?
}

/// Every local file exists and has the hash the lock gives it.
fn check_files(locked: &[Locked]) -> Result<(), BackendError> {
    for entry in locked {
        let LockedSource::File { location, sha256 } = &entry.from else {
            continue;
        };
        if location.contains("://") {
            continue;
        }
        let path = Path::new(location);
        if !path.is_file() {
            return Err(failed(format!(
                "{} {}: its file {location} is missing",
                entry.name, entry.version
            )));
        }
        if let Some(expected) = sha256 {
            let actual = sha256_of(path).map_err(|e| failed(format!("reading {location}: {e}")))?;
            if actual != *expected {
                return Err(failed(format!(
                    "{} {}: {location} has sha256 {actual}, the lock says {expected}",
                    entry.name, entry.version
                )));
            }
        }
    }
    Ok(())
}

/// The request's sources, with the lock's index when the lock names one and the request none.
fn source_for(locked: &[Locked], request: &InstallSource) -> InstallSource {
    let index = locked.iter().find_map(|l| match &l.from {
        LockedSource::Index { url, .. } => Some(url.clone()),
        _ => None,
    });
    InstallSource {
        find_links: request.find_links.clone(),
        no_index: request.no_index && index.is_none(),
        index_url: request.index_url.clone().or(index),
    }
}

fn requirement(entry: &Locked) -> String {
    let pin = format!("{}=={}", entry.name, entry.version);
    match &entry.from {
        LockedSource::File { location, sha256 } => {
            let url = if location.contains("://") {
                location.clone()
            } else {
                url::Url::from_file_path(location).map_or(location.clone(), String::from)
            };
            let hash = sha256
                .as_ref()
                .map(|hash| format!(" --hash=sha256:{hash}"))
                .unwrap_or_default();
            format!("{} @ {url}{hash}", entry.name)
        }
        LockedSource::Directory(path) => match url::Url::from_directory_path(path) {
            Ok(url) => format!("{} @ {url}", entry.name),
            Err(()) => pin,
        },
        LockedSource::Index { sha256, .. } => sha256
            .iter()
            .fold(pin, |line, hash| format!("{line} --hash=sha256:{hash}")),
        LockedSource::Anywhere => pin,
    }
}

/// Uninstalls what the environment holds that the lock does not name (a seeded pip, say).
async fn remove_extras(
    installer: &Installer,
    python: &Path,
    activation: &Activation,
    request: &LockInstallRequest,
    locked: &[Locked],
) -> Result<(), BackendError> {
    let root = request.root.clone();
    let installed = tokio::task::spawn_blocking(move || installed_packages(&root))
        .await
        .map_err(|e| failed(format!("reading the packages: {e}")))?
        .map_err(|e| failed(format!("reading the packages: {e}")))?;
    let wanted: Vec<String> = locked.iter().map(|l| normalize_name(&l.name)).collect();
    let extras: Vec<String> = installed
        .into_iter()
        .filter(|package| !wanted.contains(&normalize_name(&package.name)))
        .map(|package| package.name)
        .collect();
    if extras.is_empty() {
        return Ok(());
    }
    let extras = UninstallRequest {
        root: request.root.clone(),
        environment_id: request.environment_id.clone(),
        packages: extras,
        sandbox: request.sandbox.clone(),
    };
    crate::uninstall(installer, python, activation, &extras).await
}

/// The environment holds exactly the lock's distributions at the lock's versions.
fn verify(root: &Path, locked: &[Locked]) -> Result<(), BackendError> {
    let installed = installed_packages(root).map_err(|e| failed(format!("reading: {e}")))?;
    let have: BTreeMap<String, String> = installed
        .into_iter()
        .map(|p| (normalize_name(&p.name), p.version))
        .collect();
    let want: BTreeMap<String, String> = locked
        .iter()
        .map(|l| (normalize_name(&l.name), l.version.clone()))
        .collect();
    if have == want {
        return Ok(());
    }
    let differences: Vec<String> = want
        .iter()
        .filter(|(name, version)| have.get(*name) != Some(version))
        .map(|(name, version)| match have.get(name) {
            Some(other) => format!("{name} is {other}, the lock says {version}"),
            None => format!("{name} {version} is missing"),
        })
        .chain(
            have.keys()
                .filter(|name| !want.contains_key(*name))
                .map(|name| format!("{name} is not in the lock")),
        )
        .collect();
    Err(failed(format!(
        "the environment does not match the lock: {}",
        differences.join("; ")
    )))
}
