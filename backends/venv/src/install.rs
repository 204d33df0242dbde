//! Installing packages into a venv with its own pip, which is put there first (from the seed
//! cache) when the environment has none.

use std::path::Path;

use wsp_backend::interpreters::Inventory;
use wsp_backend::venv_layout::interpreter_path;
use wsp_backend::BackendError;
use wsp_protocol::FailureReason;

use crate::layout::Layout;
use crate::{seed, VenvOptions};

/// Seeds pip into the venv at `root` unless its site-packages has it already.
pub(crate) async fn ensure_pip(
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
    // The environment's interpreter describes its base: the executable it resolves to, the
    // version and ABI, which is what the seed cache is keyed by.
    let base = inventory
        .query(&interpreter_path(root))
        .await
        .map_err(|e| no_pip("its interpreter cannot be queried", e))?;
    let layout = Layout::new(root, &base).map_err(|e| no_pip("its layout is unusable", e))?;
    let cache = options.seed_cache_dir.as_deref();
    seed::seed(&layout, &base, options.mode, cache)
        .await
        .map_err(|e| no_pip("seeding pip failed", e))?;
    tracing::debug!(root = %root.display(), "seeded pip to install with it");
    Ok(())
}

fn no_pip(what: &str, error: impl std::error::Error + Send + Sync + 'static) -> BackendError {
    BackendError::caused_by(
        FailureReason::InstallFailed,
        format!("the environment has no pip, and {what}"),
        error,
    )
}
