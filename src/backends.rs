//! The reference server's backends: which one serves, and how it is set up from the config.

use wsp_environments::store::Store;
use wsp_install::PythonDownloads;
use wsp_interpreters::{Inventory, InventoryConfig};

use crate::config::{BackendKind, ServeConfig};
use crate::serve::StartError;
use wsp_environments::Environments;

/// The interpreter inventory the config describes, caching queries in the state directory.
pub fn inventory(config: &ServeConfig, store: &Store) -> Inventory {
    let mut inventory_config = InventoryConfig::from_env();
    inventory_config.extra_interpreters = config.interpreters.clone();
    inventory_config.cache_file = Some(store.dir().join("interpreters.json"));
    Inventory::new(inventory_config)
}

#[cfg(feature = "venv")]
/// The venv backend's options from the config.
pub fn venv_options(config: &ServeConfig, store: &Store) -> wsp_backend_venv::VenvOptions {
    wsp_backend_venv::VenvOptions {
        mode: if config.stdlib_venv {
            wsp_backend_venv::VenvMode::Stdlib
        } else {
            wsp_backend_venv::VenvMode::Native
        },
        seed_pip: config.seed_pip,
        seed_cache_dir: Some(store.dir().join("cache").join("pip-seed")),
        prompt: None,
    }
}

/// The environment methods on the configured backend.
pub fn environments(config: &ServeConfig, store: Store) -> Result<Environments, StartError> {
    let name = config.backend.name();
    let inventory = inventory(config, &store);
    if config.sandbox {
        // Probed here, once, so that the warning comes at startup.
        if let Err(reason) = wsp_exec::sandbox_availability() {
            tracing::warn!(%reason, "--sandbox: the sandbox is unavailable, so every execute that does not say \"sandbox\": false is refused");
        }
    }
    // A --uv that names no uv is a mistake to say, not a reason to fall back to pip.
    if let Some(uv) = &config.uv {
        wsp_install::find_uv(Some(uv.clone())).map_err(|detail| StartError::Backend {
            backend: "uv",
            detail,
        })?;
    }
    let downloads = python_downloads(config);
    let default = built(config.backend, config, &store, &inventory, &downloads)?;
    let mut environments =
        Environments::new(store.clone(), name, default).with_interpreters(inventory.clone());
    // Every other backend compiled in serves the environments it made; one that can't run
    // here is named with the reason, so its environments are refused, never touched.
    for kind in BackendKind::ALL {
        if kind == config.backend {
            continue;
        }
        let usable = match kind {
            BackendKind::Uv => wsp_install::find_uv(config.uv.clone()).map(|_| ()),
            _ => Ok(()),
        };
        environments = match usable.and_then(|()| {
            built(kind, config, &store, &inventory, &downloads).map_err(|error| error.to_string())
        }) {
            Ok(backend) => environments.with_backend(kind.name(), backend),
            Err(reason) => environments.with_unavailable_backend(kind.name(), reason),
        };
    }
    let execute_defaults = wsp_environments::ExecuteDefaults {
        sandbox: config.sandbox,
        max_output_bytes: config
            .max_output_bytes
            .unwrap_or(wsp_exec::DEFAULT_MAX_OUTPUT_BYTES),
    };
    Ok(environments
        .with_install_defaults(config.install_source.clone())
        .with_execute_defaults(execute_defaults)
        .with_allowed_cwds(config.allowed_cwds.clone())
        .with_spare_environments(config.spare_environments))
}

/// The uv that installs missing Pythons under `--python-downloads`, if one is found (otherwise
/// a warning says why not).
fn python_downloads(config: &ServeConfig) -> Option<PythonDownloads> {
    if !config.python_downloads {
        return None;
    }
    match wsp_install::find_uv(config.uv.clone()) {
        Ok(uv) => Some(PythonDownloads::new(uv)),
        Err(reason) => {
            tracing::warn!("--python-downloads: no uv to install Pythons with: {reason}");
            None
        }
    }
}

/// The backend `kind`, set up from the config.
fn built(
    kind: BackendKind,
    config: &ServeConfig,
    store: &Store,
    inventory: &Inventory,
    downloads: &Option<PythonDownloads>,
) -> Result<wsp_backend::BoxBackend, StartError> {
    let inventory = inventory.clone();
    Ok(match kind {
        #[cfg(feature = "venv")]
        BackendKind::Venv => {
            let installer = wsp_install::Installer::detect(config.uv.clone());
            let mut backend =
                wsp_backend_venv::VenvBackend::new(inventory, venv_options(config, store))
                    .with_installer(installer);
            if let Some(downloads) = downloads.clone() {
                backend = backend.with_python_downloads(downloads);
            }
            backend.into()
        }
        #[cfg(feature = "uv")]
        BackendKind::Uv => {
            let mut backend = wsp_backend_uv::UvBackend::new(config.uv.clone(), inventory);
            if let Some(downloads) = downloads.clone() {
                backend = backend.with_python_downloads(downloads);
            }
            backend.into()
        }
        #[cfg(feature = "conda")]
        BackendKind::Conda => {
            let mut conda =
                wsp_backend_conda::CondaConfig::new(store.dir().join("cache").join("conda"));
            if !config.channels.is_empty() {
                conda.channels = config.channels.clone();
            }
            wsp_backend_conda::CondaBackend::new(conda).into()
        }
        #[allow(unreachable_patterns)]
        _ => {
            return Err(StartError::Backend {
                backend: kind.name(),
                detail: "this wsp was built without it (cargo feature off)".to_owned(),
            })
        }
    })
}
