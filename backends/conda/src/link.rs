//! Applying a solution to a prefix: what comes out is checked before anything changes, and a
//! panic anywhere in rattler's linker becomes an error, never an abort.
//!
//! The order: compute the transaction against the prefix's checked records; fetch every
//! package to install into the package cache (under the cache's global lock) and check its
//! metadata ([`check_extracted_package`]) and that no directory it links into is a symlink;
//! then remove the pip stubs if a package links a file under a pip name, and the packages that
//! go ([`remove_packages`], which never follows a symlink); then let rattler's installer link
//! the rest, on a task of its own so that a panic is caught. A refusal in the first steps
//! leaves the prefix as it was.

use std::collections::BTreeSet;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use rattler::install::{Installer, InstallerError, PythonInfo, Transaction};
use rattler::package_cache::PackageCache;
use rattler_conda_types::{MatchSpec, ParseStrictness, PrefixRecord, RepoDataRecord};
use rattler_networking::{retry_policies::default_retry_policy, LazyClient};
use wsp_backend::BackendError;
use wsp_protocol::FailureReason;

use crate::channels::ChannelSet;
use crate::installed::{refused, Installed};
use crate::prefix_dir::{Found, PrefixDir};
use crate::progress::{StepReporter, Steps};
use crate::unlink::remove_packages;
use crate::untrusted::check_extracted_package;

/// The reasons failures are reported under.
#[derive(Clone)]
pub(crate) struct Reasons {
    /// Any failure but a fetch.
    pub failed: FailureReason,
    /// A package that could not be fetched.
    pub fetch: FailureReason,
}

/// Makes the prefix hold exactly `desired`, from `installed` (its checked records).
pub(crate) async fn apply(
    channels: &ChannelSet,
    prefix: Arc<PrefixDir>,
    installed: Vec<Installed>,
    desired: Vec<RepoDataRecord>,
    requested: Vec<MatchSpec>,
    steps: &Steps,
    reasons: &Reasons,
) -> Result<(), BackendError> {
    let applied = apply_transaction(
        channels, &prefix, installed, desired, requested, steps, reasons,
    )
    .await;
    write_pip_stubs(&prefix);
    applied
}

/// Gives the pip names that no package of the prefix takes to the pip stubs (see
/// [`wsp_install::write_pip_stubs`]), once the prefix's packages changed. A failure is logged:
/// the change itself went through.
pub(crate) fn write_pip_stubs(prefix: &PrefixDir) {
    if let Err(error) = wsp_install::write_pip_stubs(prefix.path()) {
        tracing::warn!(%error, prefix = %prefix.path().display(), "the pip stubs could not be written");
    }
}

async fn apply_transaction(
    channels: &ChannelSet,
    prefix: &Arc<PrefixDir>,
    installed: Vec<Installed>,
    desired: Vec<RepoDataRecord>,
    requested: Vec<MatchSpec>,
    steps: &Steps,
    reasons: &Reasons,
) -> Result<(), BackendError> {
    let transaction = Transaction::from_current_and_desired(
        installed.iter().map(|i| i.record.clone()),
        desired.iter().cloned(),
        None,
        None,
        channels.platform,
    )
    .map_err(|error| {
        BackendError::caused_by(reasons.failed.clone(), "planning the changes", error)
    })?;
    let to_install: Vec<RepoDataRecord> = transaction.installed_packages().cloned().collect();
    let leaving: BTreeSet<String> = transaction
        .removed_packages()
        .map(|record| {
            record
                .repodata_record
                .package_record
                .name
                .as_normalized()
                .to_owned()
        })
        .collect();
    let python = transaction.python_info.clone();

    {
        // Fetches are coordinated by the cache's global lock, which the installer takes again
        // for itself below.
        let _cache = channels
            .package_cache
            .acquire_global_lock()
            .await
            .map_err(|error| {
                BackendError::caused_by(reasons.fetch.clone(), "locking the package cache", error)
            })?;
        let package_dirs = fetch(&channels.package_cache, &to_install, reasons).await?;
        let takes_pip_names = check_packages(prefix, package_dirs, python, reasons).await?;
        // The package's own files replace the stubs; names left free get them back afterwards.
        if takes_pip_names {
            wsp_install::remove_pip_stubs(prefix.path()).map_err(|error| {
                BackendError::caused_by(reasons.failed.clone(), "removing the pip stubs", error)
            })?;
        }
    }

    let (removed, kept): (Vec<Installed>, Vec<Installed>) = installed
        .into_iter()
        .partition(|i| leaving.contains(i.name()));
    let kept_records: Vec<PrefixRecord> = kept.iter().map(|i| i.record.clone()).collect();
    if !removed.is_empty() {
        let sink = steps.clone();
        let prefix = prefix.clone();
        tokio::task::spawn_blocking(move || {
            let removed: Vec<&Installed> = removed.iter().collect();
            let kept: Vec<&Installed> = kept.iter().collect();
            remove_packages(&prefix, &removed, &kept, |gone| {
                let record = &gone.record.repodata_record.package_record;
                sink.try_send(format!("Unlinked {}-{}", gone.name(), record.version));
            })
        })
        .await
        .map_err(|error| {
            BackendError::caused_by(reasons.failed.clone(), "removing packages", error)
        })?
        .map_err(|error| error.with_reason(reasons.failed.clone()))?;
    }

    let requested = still_requested(requested, &kept_records);
    let mut installer = Installer::new()
        .with_package_cache(channels.package_cache.clone())
        .with_target_platform(channels.platform)
        .with_installed_packages(kept_records)
        .with_requested_specs(requested);
    if let Some(sink) = steps.sink() {
        installer = installer.with_reporter(StepReporter::new(sink));
    }
    let root = prefix.path().to_owned();
    let linked = tokio::spawn(async move { installer.install(&root, desired).await })
        .await
        .map_err(|error| {
            let detail = panic_message(error);
            let detail = format!("the installer failed: {detail}");
            BackendError::failed(reasons.failed.clone(), detail)
        })?;
    linked.map(drop).map_err(|error| {
        let reason = match error {
            InstallerError::FailedToFetch(..) => reasons.fetch.clone(),
            _ => reasons.failed.clone(),
        };
        let doing = format!("installing into {}", prefix.path().display());
        match error {
            InstallerError::Cancelled => BackendError::failed(
                reason,
                format!("{doing}: the linker stopped unexpectedly (see the server's log)"),
            ),
            error => BackendError::caused_by(reason, doing, error),
        }
    })
}

/// `requested` and, for each kept package that none of them names, the specs its record says
/// it was requested by: rattler's installer clears (and rewrites) the record of every kept
/// package it is given no spec for. A recorded spec that does not parse, or names another
/// package, is dropped.
fn still_requested(mut requested: Vec<MatchSpec>, kept: &[PrefixRecord]) -> Vec<MatchSpec> {
    let exact = |spec: &MatchSpec| {
        spec.name
            .as_exact()
            .map(|name| name.as_normalized().to_owned())
    };
    let named: BTreeSet<String> = requested.iter().filter_map(exact).collect();
    for record in kept {
        let name = record.repodata_record.package_record.name.as_normalized();
        if named.contains(name) {
            continue;
        }
        let recorded = record
            .requested_specs
            .iter()
            .filter_map(|text| MatchSpec::from_str(text, ParseStrictness::Lenient).ok())
            .filter(|spec| exact(spec).as_deref() == Some(name));
        requested.extend(recorded);
    }
    requested
}

/// Fetches each record's package into the cache; returns the extracted directories.
async fn fetch(
    cache: &PackageCache,
    records: &[RepoDataRecord],
    reasons: &Reasons,
) -> Result<Vec<(String, PathBuf)>, BackendError> {
    let mut fetches = tokio::task::JoinSet::new();
    for record in records.iter().cloned() {
        let cache = cache.clone();
        let reason = reasons.fetch.clone();
        fetches.spawn(async move {
            let fetched = if record.url.scheme() == "file" {
                match record.url.to_file_path() {
                    Ok(path) => {
                        cache
                            .get_or_fetch_from_path(&path, Some(&record.package_record), None)
                            .await
                    }
                    Err(()) => {
                        let detail = format!("{} is not a file path", record.url);
                        return Err(BackendError::failed(reason, detail));
                    }
                }
            } else {
                cache
                    .get_or_fetch_from_url_with_retry(
                        &record.package_record,
                        record.url.clone(),
                        LazyClient::default(),
                        default_retry_policy(),
                        None,
                        None,
                    )
                    .await
            };
            let identifier = record.identifier.to_string();
            match fetched {
                Ok(metadata) => Ok((identifier, metadata.path().to_owned())),
                Err(error) => Err(BackendError::caused_by(
                    reason,
                    format!("fetching {identifier}"),
                    error,
                )),
            }
        });
    }
    let mut dirs = Vec::with_capacity(records.len());
    while let Some(joined) = fetches.join_next().await {
        let fetched = joined.map_err(|error| {
            let detail = panic_message(error);
            let detail = format!("fetching a package failed: {detail}");
            BackendError::failed(reasons.fetch.clone(), detail)
        })?;
        dirs.push(fetched?);
    }
    Ok(dirs)
}

/// Checks each fetched package and that no directory its files land in is a symlink; returns
/// whether any of them links a file under a name the pip stubs may hold.
async fn check_packages(
    prefix: &Arc<PrefixDir>,
    packages: Vec<(String, PathBuf)>,
    python: Option<PythonInfo>,
    reasons: &Reasons,
) -> Result<bool, BackendError> {
    let prefix = prefix.clone();
    tokio::task::spawn_blocking(move || {
        let mut checked: BTreeSet<PathBuf> = BTreeSet::new();
        let mut takes_pip_names = false;
        for (identifier, dir) in &packages {
            let targets = check_extracted_package(dir, python.as_ref())
                .map_err(|violation| refused(format!("{identifier} is refused: {violation}")))?;
            for target in targets {
                takes_pip_names |= under_a_pip_name(&target);
                let parent = target.parent().unwrap_or(Path::new("")).to_owned();
                if !checked.insert(parent.clone()) {
                    continue;
                }
                if let Some(link) = symlink_on_the_way(&prefix, &parent)? {
                    return Err(refused(format!(
                        "{identifier} would link `{}`, and `{}` in the prefix is a symlink",
                        target.display(),
                        link.display()
                    )));
                }
            }
        }
        Ok(takes_pip_names)
    })
    .await
    .map_err(|error| BackendError::caused_by(reasons.failed.clone(), "checking packages", error))?
    .map_err(|error| error.with_reason(reasons.failed.clone()))
}

/// Whether `target` (relative to the prefix) is, or lies under, `bin/pip*`: every name the pip
/// stubs take (`pip`, `pip3`, `pip3.Y`) and more.
fn under_a_pip_name(target: &Path) -> bool {
    let mut parts = target.components();
    parts.next() == Some(Component::Normal("bin".as_ref()))
        && parts
            .next()
            .is_some_and(|part| part.as_os_str().as_bytes().starts_with(b"pip"))
}

/// The first part of the directory `parent` that is a symlink in the prefix, if any.
fn symlink_on_the_way(prefix: &PrefixDir, parent: &Path) -> Result<Option<PathBuf>, BackendError> {
    match prefix.open_dir(parent) {
        Ok(Found::Symlink(link)) => Ok(Some(link)),
        Ok(_) => Ok(None),
        Err(error) => Err(BackendError::caused_by(
            FailureReason::InstallFailed,
            format!("checking {}", prefix.path().join(parent).display()),
            error,
        )),
    }
}

/// What a task that did not finish said: its panic's message, or that it was cancelled.
fn panic_message(error: tokio::task::JoinError) -> String {
    match error.try_into_panic() {
        Ok(payload) => format!("it panicked: {}", payload_message(payload.as_ref())),
        Err(error) => error.to_string(),
    }
}

/// Makes a panic in a task on rayon's global pool (where rattler links files) a logged error,
/// not an abort of the whole process: the task's caller then sees it cancelled. Called once per
/// process, before the pool's first use; a pool built already is left as it is, with a warning.
pub(crate) fn contain_rayon_panics() {
    let built = rayon::ThreadPoolBuilder::new()
        .panic_handler(|payload| {
            let message = payload_message(payload.as_ref());
            tracing::error!("a conda linking task panicked: {message}");
        })
        .build_global();
    if let Err(error) = built {
        tracing::warn!("rayon's global pool was built already, so a panic in it aborts: {error}");
    }
}

/// The message a panic carried.
fn payload_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pip_names_are_bin_pip_and_what_lies_under_it() {
        for path in [
            "bin/pip",
            "bin/pip3",
            "bin/pip3.12",
            "bin/pip/inner",
            "bin/pipx",
        ] {
            assert!(under_a_pip_name(Path::new(path)), "{path}");
        }
        for path in [
            "bin",
            "bin/python",
            "lib/pip",
            "binx/pip",
            "pip",
            "bin/xpip",
        ] {
            assert!(!under_a_pip_name(Path::new(path)), "{path}");
        }
    }
}
