//! Installing packages into a venv: with uv when there is one, else with the environment's own
//! pip, which is put there first (from the seed cache) when the environment has none.

use std::path::Path;
use wsp_protocol::FailureReason;

use wsp_backend::execute::Activation;
use wsp_backend::install::{self, Installer};
use wsp_backend::interpreters::Inventory;
use wsp_backend::{BackendError, InstallRequest, UninstallRequest};

use crate::layout::{interpreter_path, Layout};
use crate::{seed, VenvOptions};

/// Installs `request.packages` into the venv at `request.root`.
pub(crate) async fn install(
    installer: &Installer,
    inventory: &Inventory,
    options: &VenvOptions,
    request: &InstallRequest,
) -> Result<(), BackendError> {
    if *installer == Installer::Pip {
        ensure_pip(inventory, options, &request.root).await?;
    }
    let python = interpreter_path(&request.root);
    install::install(
        installer,
        &python,
        &Activation::venv(&request.root),
        request,
    )
    .await
}

/// Uninstalls `request.packages` from the venv at `request.root`.
pub(crate) async fn uninstall(
    installer: &Installer,
    inventory: &Inventory,
    options: &VenvOptions,
    request: &UninstallRequest,
) -> Result<(), BackendError> {
    if *installer == Installer::Pip {
        ensure_pip(inventory, options, &request.root).await?;
    }
    let python = interpreter_path(&request.root);
    install::uninstall(
        installer,
        &python,
        &Activation::venv(&request.root),
        request,
    )
    .await
}

/// Seeds pip into the venv at `root` unless its site-packages has it already.
async fn ensure_pip(
    inventory: &Inventory,
    options: &VenvOptions,
    root: &Path,
) -> Result<(), BackendError> {
    let scan_root = root.to_owned();
    let has_pip = tokio::task::spawn_blocking(move || {
        wsp_backend::packages::site_packages_dirs(&scan_root)
            .iter()
            .any(|dir| dir.join("pip").join("__init__.py").is_file())
    })
    .await
    .unwrap_or(false);
    if has_pip {
        return Ok(());
    }
    let failed = |what: &str, error: &dyn std::fmt::Display| {
        BackendError::failed(
            FailureReason::InstallFailed,
            format!("the environment has no pip, and {what}: {error}"),
        )
    };
    // The environment's interpreter describes its base: the executable it resolves to, the
    // version and ABI, which is what the seed cache is keyed by.
    let base = inventory
        .query(&interpreter_path(root))
        .await
        .map_err(|e| failed("its interpreter cannot be queried", &e))?;
    let layout = Layout::new(root, &base).map_err(|e| failed("its layout is unusable", &e))?;
    let cache = options.seed_cache_dir.as_deref();
    seed::seed(&layout, &base, options.mode, cache)
        .await
        .map_err(|e| failed("seeding pip failed", &e))?;
    tracing::debug!(root = %root.display(), "seeded pip to install with it");
    Ok(())
}
