//! Pythons that are not on the machine: with [`PythonDownloads`], [`resolve_python`] installs
//! a version that no locator finds with `uv python install` and resolves again, so a
//! backend's provision finds and uses the new uv-managed interpreter.
//!
//! uv decides where the interpreter comes from and where it goes: its download metadata
//! (`UV_PYTHON_DOWNLOADS_JSON_URL`, mirrors) and its install directory
//! (`UV_PYTHON_INSTALL_DIR`), which is also where the inventory's uv locator looks. Nothing is
//! put on `PATH` (`--no-bin`). When uv cannot install the version, the create's answer is the
//! original "not available" one.

use std::path::PathBuf;

use wsp_backend::{BackendError, ProvisionRequest};

use crate::helper::succeeded;
use wsp_interpreters::{InterpreterInfo, Inventory, VersionRequest};

/// Installs Pythons that no locator finds with uv (`wsp serve --python-downloads`).
#[derive(Debug, Clone)]
pub struct PythonDownloads {
    uv: PathBuf,
}

impl PythonDownloads {
    /// Missing Pythons installed by the `uv` at `uv`.
    pub fn new(uv: PathBuf) -> Self {
        PythonDownloads { uv }
    }
}

/// The interpreter `inventory` resolves `request` to. When none matches and `downloads` is
/// given, uv installs the version and the inventory is asked again; when uv cannot install
/// it, the answer is the first [`BackendError::VersionUnavailable`].
pub async fn resolve_python(
    inventory: &Inventory,
    downloads: Option<&PythonDownloads>,
    request: &VersionRequest,
) -> Result<InterpreterInfo, BackendError> {
    let unavailable = match inventory.resolve(request).await {
        Ok(interpreter) => return Ok(interpreter),
        Err(unavailable) => BackendError::from(unavailable),
    };
    let (Some(downloads), BackendError::VersionUnavailable { requested, .. }) =
        (downloads, &unavailable)
    else {
        return Err(unavailable);
    };
    if let Err(why) = uv_python_install(&downloads.uv, requested).await {
        tracing::warn!(version = %requested, "uv could not install Python: {why}");
        return Err(unavailable);
    }
    Ok(inventory.resolve(request).await?)
}

/// The interpreter a venv-layout backend builds `request`'s environment on: the one the server
/// resolved for it ([`ProvisionRequest::interpreter`]) when that is a version the request
/// matches and the interpreter still answers as that version (its query is cached by the
/// executable's stamp, so this costs no discovery), else whatever [`resolve_python`] finds now.
pub async fn provision_python(
    inventory: &Inventory,
    downloads: Option<&PythonDownloads>,
    request: &ProvisionRequest,
) -> Result<InterpreterInfo, BackendError> {
    let wanted = &request.python_version;
    if let Some(resolved) = request
        .interpreter
        .as_ref()
        .filter(|r| wanted.matches(&r.full_version))
    {
        match inventory.query(&resolved.path).await {
            Ok(info) if info.version == resolved.full_version => return Ok(info),
            Ok(info) => tracing::debug!(
                path = %resolved.path.display(),
                resolved = %resolved.full_version,
                now = %info.version,
                "the resolved interpreter changed; resolving again"
            ),
            Err(error) => tracing::debug!(
                path = %resolved.path.display(),
                %error,
                "the resolved interpreter no longer answers; resolving again"
            ),
        }
    }
    resolve_python(inventory, downloads, &request.python_version).await
}

/// `uv python install --no-config --no-bin <version>`; `Err` holds what uv said.
async fn uv_python_install(uv: &std::path::Path, version: &str) -> Result<(), String> {
    let mut command = tokio::process::Command::new(uv);
    command
        .args(["python", "install", "--no-config", "--no-bin", version])
        .env("UV_PYTHON_DOWNLOADS", "automatic");
    succeeded(&mut command, 4096).await?;
    tracing::info!(version, "installed Python with uv");
    Ok(())
}
