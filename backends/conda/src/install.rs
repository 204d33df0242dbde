//! `environment/install` and `environment/uninstall` for conda prefixes.
//!
//! An install reads the prefix's records (`conda-meta/*.json`), solves the requested match
//! specs together with every installed package (kept by name, preferring its installed
//! version unless `upgrade` names it) against the configured channels, and applies the
//! difference with rattler's installer. A request that cannot be solved fails before the
//! prefix is touched. An uninstall removes the named packages and whatever depends on them,
//! without a solve.

use std::collections::BTreeSet;
use std::path::Path;
use wsp_protocol::FailureReason;

use rattler::install::Installer;
use rattler_conda_types::{MatchSpec, ParseStrictness, PrefixRecord, RepoDataRecord};
use rattler_solve::{SolveError, SolverImpl, SolverTask};
use wsp_backend::install::{ProgressSink, ProgressStep};
use wsp_backend::{BackendError, InstallRequest, UninstallRequest};

use crate::channels::ChannelSet;
use crate::progress::StepReporter;
use crate::CondaConfig;

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
    let step = Steps(request.progress.clone());
    let requested = request
        .packages
        .iter()
        .map(|text| parse_spec(text))
        .collect::<Result<Vec<_>, _>>()?;
    let requested_names: BTreeSet<String> = requested.iter().filter_map(spec_name).collect();
    let installed = installed_records(&request.root).await?;
    let mut specs = requested.clone();
    for record in &installed {
        let name = record.repodata_record.package_record.name.as_normalized();
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
        .filter(|record| {
            let name = record.repodata_record.package_record.name.as_normalized();
            !(request.upgrade && requested_names.contains(name))
        })
        .map(|record| record.repodata_record.clone())
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
    apply(
        &channels,
        &request.root,
        installed,
        records,
        requested,
        &step,
    )
    .await
}

/// Removes the packages named in `request.packages`, and what depends on them, from the prefix.
pub(crate) async fn uninstall(
    config: &CondaConfig,
    request: &UninstallRequest,
) -> Result<(), BackendError> {
    let installed = installed_records(&request.root).await?;
    let mut removed: BTreeSet<String> = request
        .packages
        .iter()
        .map(|name| name.trim().to_lowercase())
        .filter(|name| installed.iter().any(|r| record_name(r) == name))
        .collect();
    if removed.is_empty() {
        return Ok(());
    }
    // Whatever needs a removed package goes too, until nothing more does.
    loop {
        let before = removed.len();
        for record in &installed {
            let depends = &record.repodata_record.package_record.depends;
            let needs_removed = depends
                .iter()
                .filter_map(|dep| dep.split_whitespace().next())
                .any(|dep| removed.contains(&dep.to_lowercase()));
            if needs_removed {
                removed.insert(record_name(record).to_owned());
            }
        }
        if removed.len() == before {
            break;
        }
    }
    let kept: Vec<RepoDataRecord> = installed
        .iter()
        .filter(|record| !removed.contains(record_name(record)))
        .map(|record| record.repodata_record.clone())
        .collect();
    let channels = ChannelSet::new(config).map_err(into_install_failed)?;
    apply(
        &channels,
        &request.root,
        installed,
        kept,
        Vec::new(),
        &Steps(None),
    )
    .await
}

/// Makes the prefix hold exactly `records`.
async fn apply(
    channels: &ChannelSet,
    root: &Path,
    installed: Vec<PrefixRecord>,
    records: Vec<RepoDataRecord>,
    requested: Vec<MatchSpec>,
    step: &Steps,
) -> Result<(), BackendError> {
    let mut installer = Installer::new()
        .with_package_cache(channels.package_cache.clone())
        .with_target_platform(channels.platform)
        .with_installed_packages(installed)
        .with_requested_specs(requested);
    if let Some(sink) = step.0.clone() {
        installer = installer.with_reporter(StepReporter::new(sink));
    }
    installer
        .install(root, records)
        .await
        .map_err(|error| failed_by(format!("installing into {}", root.display()), error))?;
    Ok(())
}

/// The prefix's package records.
async fn installed_records(root: &Path) -> Result<Vec<PrefixRecord>, BackendError> {
    let prefix = root.to_owned();
    tokio::task::spawn_blocking(move || PrefixRecord::collect_from_prefix::<PrefixRecord>(&prefix))
        .await
        .map_err(|error| failed_by("reading the prefix's records", error))?
        .map_err(|error| failed_by(format!("reading {}/conda-meta", root.display()), error))
}

fn record_name(record: &PrefixRecord) -> &str {
    record.repodata_record.package_record.name.as_normalized()
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

/// Where an install's own steps go.
struct Steps(Option<ProgressSink>);

impl Steps {
    async fn send(&self, message: String, percentage: Option<u32>) {
        if let Some(sink) = &self.0 {
            let _ = sink
                .send(ProgressStep {
                    message,
                    percentage,
                })
                .await;
        }
    }
}
