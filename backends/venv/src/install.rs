//! Installing packages into a venv with its own pip, which is put there first (from the seed
//! cache) when the environment has none. In an environment whose installs are confined, pip
//! is put there by `ensurepip` run inside the install's sandbox instead: nothing of the
//! environment (its interpreter included) runs outside it.

use std::path::Path;

use wsp_backend::BackendError;
use wsp_exec::{resolve_cwd, run, Activation, RunOptions, RunSpec, SandboxPolicy};
use wsp_install::venv_layout::interpreter_path;
use wsp_interpreters::Inventory;
use wsp_protocol::FailureReason;

use crate::layout::Layout;
use crate::{seed, VenvOptions};

/// Seeds pip into the venv at `root` unless its site-packages has it already; inside the
/// sandbox of the environment (its policy and id) when `confined`.
pub(crate) async fn ensure_pip(
    inventory: &Inventory,
    options: &VenvOptions,
    root: &Path,
    confined: Option<(&SandboxPolicy, &str)>,
) -> Result<(), BackendError> {
    let scan_root = root.to_owned();
    let has_pip = tokio::task::spawn_blocking(move || {
        wsp_install::packages::site_packages_dirs(&scan_root)
            .iter()
            .any(|dir| dir.join("pip").join("__init__.py").is_file())
    })
    .await
    .unwrap_or(false);
    if has_pip {
        return Ok(());
    }
    if let Some((sandbox, environment_id)) = confined {
        return ensurepip_inside(root, sandbox, environment_id).await;
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

/// `bin/python -m ensurepip --default-pip`, in `sandbox`.
async fn ensurepip_inside(
    root: &Path,
    sandbox: &SandboxPolicy,
    environment_id: &str,
) -> Result<(), BackendError> {
    let activation = Activation::venv(root);
    let argv = [
        interpreter_path(root).to_string_lossy().into_owned(),
        "-m".to_owned(),
        "ensurepip".to_owned(),
        "--default-pip".to_owned(),
    ];
    let cwd = resolve_cwd(root, None)
        .map_err(|message| BackendError::failed(FailureReason::InstallFailed, message))?;
    let options = RunOptions {
        sandbox: Some(SandboxPolicy::offline(
            sandbox.root.clone(),
            sandbox.hidden.clone(),
        )),
        ..RunOptions::default()
    };
    let env = std::collections::BTreeMap::new();
    let ran = run(RunSpec {
        activation: &activation,
        environment_id,
        argv: &argv,
        cwd: &cwd,
        env: &env,
        options,
    })
    .await
    .map_err(|error| error.with_reason(FailureReason::InstallFailed))?;
    if ran.exit_code != 0 {
        return Err(BackendError::failed(
            FailureReason::InstallFailed,
            format!(
                "the environment has no pip, and ensurepip failed ({}): {}",
                ran.exit_code,
                ran.stderr.trim()
            ),
        ));
    }
    Ok(())
}

fn no_pip(what: &str, error: impl std::error::Error + Send + Sync + 'static) -> BackendError {
    BackendError::caused_by(
        FailureReason::InstallFailed,
        format!("the environment has no pip, and {what}"),
        error,
    )
}
