//! Installing packages into a venv with pip when no uv is at hand: a pip kept outside the
//! environment (the seed cache's, for the environment's Python version) run by the
//! environment's interpreter the way `pip --python` runs it ([`Installer::ExternalPip`]).
//! The environment needs no pip of its own and is given none, so an install that fails leaves
//! it as it was.
//!
//! Which pip is taken is read from the environment's layout (`lib/python3.Y`), never by
//! running its interpreter, so nothing of the environment runs outside an install's sandbox.
//! The seed cache lies in the state directory, which a sandbox hides: a confined install gets
//! a replica of the cached pip in a fresh temporary directory, which it can read but not write.

use std::path::{Path, PathBuf};

use tempfile::TempDir;
use wsp_backend::BackendError;
use wsp_install::{no_pip, resolve_python, venv_python_version, Installer, FIRST_EXTERNAL_PIP};
use wsp_interpreters::{Inventory, VersionRequest};

use crate::{seed, VenvMode};

/// An installer running a pip from outside the environment, and the replica of it that a
/// confined install reads (removed on drop).
pub(crate) struct ExternalPip {
    pub installer: Installer,
    _replica: Option<TempDir>,
}

/// The interpreter whose pip installs into a venv: the newest of the venv's Python version.
pub(crate) struct PipBase {
    /// The venv's `3.Y`, read from its layout.
    version: String,
    interpreter: wsp_interpreters::InterpreterInfo,
}

/// The [`PipBase`] of the venv at `root`.
pub(crate) async fn pip_base(inventory: &Inventory, root: &Path) -> Result<PipBase, BackendError> {
    let version = venv_python_version(root)?;
    let request: VersionRequest = version
        .parse()
        .map_err(|_| no_pip(format!("its Python version {version:?} is not a version")))?;
    let interpreter = resolve_python(inventory, None, &request)
        .await
        .map_err(|error| no_pip(format!("no Python {version} to take pip from: {error}")))?;
    Ok(PipBase {
        version,
        interpreter,
    })
}

/// The pip that installs into a venv of `base`: the seed cache's (in `cache_dir`, filled in
/// `mode` when empty); a replica of it when the install is `confined`.
pub(crate) async fn external_pip(
    base: &PipBase,
    mode: VenvMode,
    cache_dir: &Path,
    confined: bool,
) -> Result<ExternalPip, BackendError> {
    let PipBase {
        version,
        interpreter: base,
    } = base;
    let (cached, _) = seed::cached_pip(base, mode, cache_dir)
        .await
        .map_err(|error| no_pip(format!("the seed cache could not be filled: {error}")))?;
    if !cached.join(wsp_install::PIP_RUNNER).is_file() {
        return Err(no_pip(format!(
            "the pip bundled with Python {} is older than pip {FIRST_EXTERNAL_PIP}, which cannot \
             install into another environment; install uv (or give `wsp serve --uv PATH`) to \
             install into Python {version} environments",
            base.version
        )));
    }
    if !confined {
        return Ok(ExternalPip {
            installer: Installer::ExternalPip(cached),
            _replica: None,
        });
    }
    let replica = tokio::task::spawn_blocking(move || replicate(&cached))
        .await
        .map_err(|error| no_pip(format!("replicating pip failed: {error}")))??;
    Ok(ExternalPip {
        installer: Installer::ExternalPip(replica.path().to_owned()),
        _replica: Some(replica),
    })
}

/// The version of the pip that [`external_pip`] would first have to put into the seed cache
/// for a venv of `base`, read off the interpreter's bundled `ensurepip` wheel; `None` when the
/// cache already holds that pip (nothing to fill) or the version cannot be told.
pub(crate) async fn pip_to_fill(base: &PipBase, cache_dir: &Path) -> Option<String> {
    if seed::is_cached(&base.interpreter, cache_dir) {
        return None;
    }
    let bundled = bundled_dir(&base.interpreter);
    tokio::task::spawn_blocking(move || bundled_pip_version(&bundled))
        .await
        .ok()
        .flatten()
}

/// `ensurepip`'s directory of bundled wheels in the interpreter's standard library.
fn bundled_dir(base: &wsp_interpreters::InterpreterInfo) -> PathBuf {
    let stdlib = crate::layout::lib_python_dir(base);
    base.base_prefix
        .join("lib")
        .join(stdlib)
        .join("ensurepip/_bundled")
}

/// `X.Y.Z` of the one `pip-X.Y.Z-*.whl` in `bundled`.
fn bundled_pip_version(bundled: &Path) -> Option<String> {
    let mut versions = std::fs::read_dir(bundled)
        .ok()?
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let rest = name.strip_prefix("pip-")?.strip_suffix(".whl")?;
            Some(rest.split('-').next()?.to_owned())
        });
    let version = versions.next()?;
    versions.next().is_none().then_some(version)
}

/// `cached` linked (or copied) into a fresh temporary directory.
fn replicate(cached: &Path) -> Result<TempDir, BackendError> {
    let replica = tempfile::Builder::new()
        .prefix("wsp-pip-")
        .tempdir()
        .map_err(|error| no_pip(format!("no temporary directory for pip: {error}")))?;
    crate::seed::link_tree(cached, replica.path())
        .map_err(|error| no_pip(format!("replicating pip failed: {error}")))?;
    Ok(replica)
}

/// Where a backend without a configured seed cache keeps one: a temporary directory made at
/// its first install with pip, removed with the backend.
pub(crate) async fn fallback_cache(
    cell: &tokio::sync::OnceCell<TempDir>,
) -> Result<PathBuf, BackendError> {
    let dir = cell
        .get_or_try_init(|| async {
            tempfile::Builder::new()
                .prefix("wsp-pip-seed-")
                .tempdir()
                .map_err(|error| no_pip(format!("no temporary seed cache: {error}")))
        })
        .await?;
    Ok(dir.path().to_owned())
}
