//! `environment/install` and `environment/uninstall` for conda prefixes.
//!
//! An install reads the prefix's records (`conda-meta/*.json`, each checked: see
//! [`installed`](crate::installed)), solves the requested match specs together with every
//! installed package (kept by name, preferring its installed version unless `upgrade` names
//! it) against the configured channels, and applies the difference ([`link::apply`]). A
//! request that cannot be solved, or whose records or packages are refused, fails before the
//! prefix is touched. An uninstall removes the named packages and whatever depends on them,
//! without a solve, and without following a symlink in the prefix.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use wsp_protocol::FailureReason;

use rattler_conda_types::{MatchSpec, ParseStrictness, RepoDataRecord};
use rattler_solve::{SolveError, SolverImpl, SolverTask};
use wsp_backend::{BackendError, InstallRequest, UninstallRequest};

use crate::channels::ChannelSet;
use crate::installed::{read_installed, Installed};
use crate::link::{self, Reasons};
use crate::prefix_dir::PrefixDir;
use crate::progress::Steps;
use crate::unlink::remove_packages;
use crate::CondaConfig;

/// The reasons of an install's failures: all `install-failed`.
const INSTALL: Reasons = Reasons {
    failed: FailureReason::InstallFailed,
    fetch: FailureReason::InstallFailed,
};

fn failed(detail: impl std::fmt::Display) -> BackendError {
    BackendError::failed(FailureReason::InstallFailed, detail)
}

fn failed_by(
    doing: impl std::fmt::Display,
    error: impl std::error::Error + Send + Sync + 'static,
) -> BackendError {
    BackendError::caused_by(FailureReason::InstallFailed, doing, error)
}

/// Installs `request.packages` (match specs) into the prefix at `request.root`.
pub(crate) async fn install(
    config: &CondaConfig,
    request: &InstallRequest,
) -> Result<(), BackendError> {
    let step = Steps::new(request.progress.clone());
    let requested = request
        .packages
        .iter()
        .map(|text| parse_spec(text))
        .collect::<Result<Vec<_>, _>>()?;
    let requested_names: BTreeSet<String> = requested.iter().filter_map(spec_name).collect();
    let (prefix, installed) = open_prefix(&request.root).await?;
    let mut specs = requested.clone();
    for record in &installed {
        let name = record.name();
        if !requested_names.contains(name) {
            specs.push(parse_spec(name)?);
        }
    }
    let channels = ChannelSet::new(config).map_err(into_install_failed)?;
    let n = requested.len();
    let what = if n == 1 { "spec" } else { "specs" };
    let message = format!(
        "Solving {n} {what} with {} installed packages against {}",
        installed.len(),
        channels.urls().join(", ")
    );
    step.send(message, Some(5)).await;
    let repodata = channels
        .query(specs.clone(), true)
        .await
        .map_err(into_install_failed)?;
    let records_read: usize = repodata.iter().map(|r| r.len()).sum();
    step.send(format!("Read {records_read} records of repodata"), Some(15))
        .await;
    let locked: Vec<RepoDataRecord> = installed
        .iter()
        .filter(|record| !(request.upgrade && requested_names.contains(record.name())))
        .map(|record| record.record.repodata_record.clone())
        .collect();
    let virtual_packages =
        crate::provision::detect_virtual_packages(channels.platform, &config.cache_dir).await;
    let solution = tokio::task::spawn_blocking(move || {
        let task = SolverTask {
            specs,
            locked_packages: locked.iter().collect(),
            virtual_packages,
            ..SolverTask::from_iter(&repodata)
        };
        rattler_solve::resolvo::Solver
            .solve(task)
            .map(|solved| solved.records)
    })
    .await
    .map_err(|error| failed_by("the solver failed", error))?;
    let records = match solution {
        Ok(records) => records,
        Err(SolveError::Unsolvable(reasons)) => {
            let specs = request.packages.join(", ");
            return Err(failed(format!(
                "`{specs}` cannot be solved: {}",
                reasons.join("; ")
            )));
        }
        Err(error) => return Err(failed_by("solving", error)),
    };
    step.send(format!("Solved: {} packages", records.len()), Some(30))
        .await;
    link::apply(
        &channels, prefix, installed, records, requested, &step, &INSTALL,
    )
    .await
}

/// Removes the packages named in `request.packages`, and what depends on them, from the prefix.
pub(crate) async fn uninstall(
    _config: &CondaConfig,
    request: &UninstallRequest,
) -> Result<(), BackendError> {
    let (prefix, installed) = open_prefix(&request.root).await?;
    let mut removed: BTreeSet<String> = request
        .packages
        .iter()
        .map(|name| name.trim().to_lowercase())
        .filter(|name| installed.iter().any(|r| r.name() == name))
        .collect();
    if removed.is_empty() {
        return Ok(());
    }
    // Whatever needs a removed package goes too, until nothing more does.
    loop {
        let before = removed.len();
        for record in &installed {
            let depends = &record.record.repodata_record.package_record.depends;
            let needs_removed = depends
                .iter()
                .filter_map(|dep| dep.split_whitespace().next())
                .any(|dep| removed.contains(&dep.to_lowercase()));
            if needs_removed {
                removed.insert(record.name().to_owned());
            }
        }
        if removed.len() == before {
            break;
        }
    }
    tokio::task::spawn_blocking(move || {
        let (gone, kept): (Vec<&Installed>, Vec<&Installed>) = installed
            .iter()
            .partition(|record| removed.contains(record.name()));
        let removed = remove_packages(&prefix, &gone, &kept, |_| {});
        // A pip package gone leaves its names free: the stubs take them again.
        crate::link::write_pip_stubs(&prefix);
        removed
    })
    .await
    .map_err(|error| failed_by("removing packages", error))?
}

/// Opens the prefix at `root` and reads its checked records.
pub(crate) async fn open_prefix(
    root: &Path,
) -> Result<(Arc<PrefixDir>, Vec<Installed>), BackendError> {
    let root = root.to_owned();
    tokio::task::spawn_blocking(move || {
        let prefix = PrefixDir::open(&root)
            .map_err(|error| failed_by(format!("opening {}", root.display()), error))?;
        let installed = read_installed(&prefix)?;
        Ok((Arc::new(prefix), installed))
    })
    .await
    .map_err(|error| failed_by("reading the prefix's records", error))?
}

/// A client's match spec; it must name one package (no globs).
fn parse_spec(text: &str) -> Result<MatchSpec, BackendError> {
    let spec = MatchSpec::from_str(text, ParseStrictness::Lenient)
        .map_err(|error| failed_by(format!("`{text}` is not a conda match spec"), error))?;
    if spec_name(&spec).is_none() {
        return Err(failed(format!("`{text}` must name a package")));
    }
    Ok(spec)
}

fn spec_name(spec: &MatchSpec) -> Option<String> {
    spec.name
        .as_exact()
        .map(|name| name.as_normalized().to_owned())
}

/// Channel and other setup failures of an install are install failures.
fn into_install_failed(error: BackendError) -> BackendError {
    error.with_reason(FailureReason::InstallFailed)
}
