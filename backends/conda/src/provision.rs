//! Provisioning: solve `python` at the requested version against the channels and install
//! the solution into the prefix, its packages checked as an install's are.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use wsp_protocol::FailureReason;

use rattler_conda_types::{GenericVirtualPackage, MatchSpec, Matches, RepoDataRecord, Subdir};
use rattler_repodata_gateway::RepoData;
use rattler_solve::{SolveError, SolverImpl, SolverTask};
use rattler_virtual_packages::{VirtualPackageOverrides, VirtualPackages};
use wsp_backend::{
    BackendError, ProvisionRequest, Provisioned, ResolveRequest, ResolvedInterpreter,
};
use wsp_interpreters::{PythonVersion, VersionRequest};

use crate::channels::{match_spec, ChannelSet};
use crate::link::{self, Reasons};
use crate::prefix_dir::PrefixDir;
use crate::progress::Steps;
use crate::CondaConfig;

/// The reasons of a provisioning's failures: a package that cannot be fetched is the channel's.
const PROVISION: Reasons = Reasons {
    failed: FailureReason::ProvisionFailed,
    fetch: FailureReason::ChannelUnavailable,
};

/// The match spec for a requested Python: `X.Y` is the newest `X.Y.*`, `X.Y.Z` exactly that.
pub(crate) fn python_spec(request: &VersionRequest) -> Result<MatchSpec, BackendError> {
    match request {
        VersionRequest::MajorMinor { major, minor } => {
            match_spec(&format!("python {major}.{minor}.*"))
        }
        VersionRequest::Exact(version) => match_spec(&format!("python =={version}")),
    }
}

/// Creates the conda prefix at `request.root`.
pub(crate) async fn provision(
    config: &CondaConfig,
    request: &ProvisionRequest,
) -> Result<Provisioned, BackendError> {
    let root = std::path::absolute(&request.root).map_err(|error| {
        BackendError::caused_by(
            FailureReason::ProvisionFailed,
            format!("resolving {}", request.root.display()),
            error,
        )
    })?;
    let channels = ChannelSet::new(config)?;
    // The python the server resolved (`resolve`, which found it in the channels) is the one
    // the prefix gets; else the channels are asked whether any python matches.
    let spec = match &request.interpreter {
        Some(resolved) => match_spec(&format!("python =={}", resolved.full_version))?,
        None => {
            let spec = python_spec(&request.python_version)?;
            matching_pythons(&channels, &spec, &request.python_version).await?;
            spec
        }
    };

    let repodata = channels.query(vec![spec.clone()], true).await?;
    let virtual_packages = detect_virtual_packages(channels.platform, &config.cache_dir).await;
    let records = solve(repodata, spec.clone(), virtual_packages).await?;

    let python_full_version = records
        .iter()
        .find(|record| record.package_record.name.as_normalized() == "python")
        .and_then(|record| python_version_of(&record.package_record.version.as_str()))
        .ok_or_else(|| {
            BackendError::failed(
                FailureReason::ProvisionFailed,
                "the solution holds no python package with an X.Y.Z version",
            )
        })?;

    let prefix = PrefixDir::open(&root).map_err(|error| {
        BackendError::caused_by(
            FailureReason::ProvisionFailed,
            format!("opening {}", root.display()),
            error,
        )
    })?;
    link::apply(
        &channels,
        Arc::new(prefix),
        Vec::new(),
        records,
        vec![spec],
        &Steps::default(),
        &PROVISION,
    )
    .await?;

    let interpreter_path = interpreter_path(&root)?;
    let mut extra = serde_json::Map::new();
    extra.insert("channels".into(), channels.urls().into());
    extra.insert("platform".into(), channels.platform.as_str().into());
    Ok(Provisioned {
        python_full_version,
        interpreter_path,
        extra,
    })
}

/// The python a provision of `request` would install, found without solving: the newest
/// matching record of the channels (by version, then build number). Its package's URL stands
/// for the interpreter's path, so another build or another channel's python is another key.
pub(crate) async fn resolve(
    config: &CondaConfig,
    request: &ResolveRequest,
) -> Result<Option<ResolvedInterpreter>, BackendError> {
    let channels = ChannelSet::new(config)?;
    let spec = python_spec(&request.python_version)?;
    let pythons = matching_pythons(&channels, &spec, &request.python_version).await?;
    let newest = pythons.iter().max_by(|a, b| {
        let (a, b) = (&a.package_record, &b.package_record);
        (a.version.version(), a.build_number).cmp(&(b.version.version(), b.build_number))
    });
    Ok(newest.and_then(|record| {
        let full_version = python_version_of(&record.package_record.version.as_str())?;
        let path = PathBuf::from(record.url.as_str());
        Some(ResolvedInterpreter { full_version, path })
    }))
}

/// The channels' python records that `spec` matches: `VersionUnavailable` when there are none.
async fn matching_pythons(
    channels: &ChannelSet,
    spec: &MatchSpec,
    requested: &VersionRequest,
) -> Result<Vec<RepoDataRecord>, BackendError> {
    let pythons = channels.python_records().await?;
    let matching: Vec<RepoDataRecord> = pythons
        .iter()
        .filter(|record| spec.matches(*record))
        .cloned()
        .collect();
    if matching.is_empty() {
        return Err(BackendError::VersionUnavailable {
            requested: requested.to_string(),
            available: ChannelSet::versions(&pythons),
        });
    }
    Ok(matching)
}

/// What a detection of virtual packages depends on besides the machine: the platform, the
/// cache directory and the `CONDA_OVERRIDE_*` variables.
type DetectionKey = (Subdir, PathBuf, Vec<(OsString, OsString)>);

/// The last detection, reused while its key holds: what it found of the machine (kernel, CPU,
/// glibc, GPUs) does not change under a running process, and rattler keeps its own glibc, CUDA
/// and GPU findings for the process's life too.
static DETECTED: Mutex<Option<(DetectionKey, Vec<GenericVirtualPackage>)>> = Mutex::new(None);

/// The virtual packages (`__glibc`, `__unix`, ...) this machine provides for `platform`. A
/// detection failure is logged and solves without them.
pub(crate) async fn detect_virtual_packages(
    platform: Subdir,
    cache_dir: &Path,
) -> Vec<GenericVirtualPackage> {
    let mut overrides: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(name, _)| name.as_bytes().starts_with(b"CONDA_OVERRIDE_"))
        .collect();
    overrides.sort();
    let key: DetectionKey = (platform, cache_dir.to_owned(), overrides);
    if let Ok(detected) = DETECTED.lock() {
        if let Some((_, packages)) = detected.as_ref().filter(|(last, _)| *last == key) {
            return packages.clone();
        }
    }
    let cache_dir = cache_dir.join("virtual-packages");
    let detected = tokio::task::spawn_blocking(move || {
        VirtualPackages::detect_for_platform(
            platform,
            &VirtualPackageOverrides::from_env(),
            Some(&cache_dir),
        )
    })
    .await;
    match detected {
        Ok(Ok(packages)) => {
            let packages: Vec<GenericVirtualPackage> =
                packages.into_generic_virtual_packages().collect();
            if let Ok(mut detected) = DETECTED.lock() {
                *detected = Some((key, packages.clone()));
            }
            packages
        }
        Ok(Err(error)) => {
            tracing::warn!("detecting conda virtual packages: {error}");
            Vec::new()
        }
        Err(error) => {
            tracing::warn!("detecting conda virtual packages: {error}");
            Vec::new()
        }
    }
}

/// Solves `spec` against `repodata` with resolvo.
async fn solve(
    repodata: Vec<RepoData>,
    spec: MatchSpec,
    virtual_packages: Vec<GenericVirtualPackage>,
) -> Result<Vec<RepoDataRecord>, BackendError> {
    let requested = spec.to_string();
    let solved = tokio::task::spawn_blocking(move || {
        let task = SolverTask {
            specs: vec![spec],
            virtual_packages,
            ..SolverTask::from_iter(&repodata)
        };
        rattler_solve::resolvo::Solver.solve(task)
    })
    .await
    .map_err(|error| {
        BackendError::caused_by(FailureReason::ProvisionFailed, "the solver failed", error)
    })?;
    match solved {
        Ok(result) => Ok(result.records),
        Err(SolveError::Unsolvable(reasons)) => Err(BackendError::failed(
            FailureReason::ProvisionFailed,
            format!("`{requested}` cannot be solved: {}", reasons.join("; ")),
        )),
        Err(error) => Err(BackendError::caused_by(
            FailureReason::ProvisionFailed,
            format!("solving `{requested}`"),
            error,
        )),
    }
}

/// `X.Y.Z` from a conda version such as `3.12.1` or `3.13.0rc1` (whose patch is `0`).
pub(crate) fn python_version_of(version: &str) -> Option<PythonVersion> {
    let mut parts = version.split('.').map(|part| {
        let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<u64>().ok()
    });
    let major = parts.next()??;
    let minor = parts.next()??;
    let patch = parts.next().flatten().unwrap_or(0);
    Some(PythonVersion {
        major,
        minor,
        patch,
    })
}

/// `<root>/bin/python`, which must exist and lead to an executable file.
fn interpreter_path(root: &Path) -> Result<PathBuf, BackendError> {
    let path = root.join("bin").join("python");
    match std::fs::metadata(&path) {
        Ok(metadata) if metadata.is_file() => Ok(path),
        Ok(_) => Err(BackendError::failed(
            FailureReason::ProvisionFailed,
            format!("{} is not a file", path.display()),
        )),
        Err(error) => Err(BackendError::caused_by(
            FailureReason::ProvisionFailed,
            format!("the installed environment has no usable {}", path.display()),
            error,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_versions_come_from_the_leading_digits() {
        let v = |major, minor, patch| PythonVersion {
            major,
            minor,
            patch,
        };
        assert_eq!(python_version_of("3.12.1"), Some(v(3, 12, 1)));
        assert_eq!(python_version_of("3.13.0rc1"), Some(v(3, 13, 0)));
        assert_eq!(python_version_of("3.12"), Some(v(3, 12, 0)));
        assert_eq!(python_version_of("3"), None);
        assert_eq!(python_version_of("a.b"), None);
    }

    #[test]
    fn specs_pin_the_minor_or_the_exact_version() {
        let spec = |text: &str| python_spec(&text.parse().unwrap()).unwrap().to_string();
        assert_eq!(spec("3.12"), "python 3.12.*");
        assert_eq!(spec("3.12.1"), "python ==3.12.1");
    }
}
