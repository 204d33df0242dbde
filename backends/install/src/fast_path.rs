//! The pip installer's fast path: a request for wheels from local `find_links` directories
//! only, with no index, is installed by [`wsp_wheels`] without starting pip, with the result
//! on disk pip would give. Anything that path does not handle exactly as pip would is left
//! to pip, and why is logged (at debug).

use std::path::Path;

use wsp_backend::BackendError;
use wsp_exec::Activation;

use crate::packages::{installed_packages, scan, site_packages_dirs};
use crate::{InstallRequest, Installer};

/// Which pip the result on disk must match.
pub(super) enum PipOf<'a> {
    /// The pip `installer` runs.
    Installer(&'a Installer),
    /// A pip of this version, run from outside the environment: the one a backend would put in
    /// its seed cache before it runs pip.
    Version(String),
}

/// Installs `request` without pip when the fast path applies; `false`: pip must install it
/// (nothing was changed).
pub(super) async fn try_install(
    pip: PipOf<'_>,
    python: &Path,
    activation: &Activation,
    request: &InstallRequest,
) -> Result<bool, BackendError> {
    let root = request.root.clone();
    let (external, known) = match pip {
        PipOf::Installer(installer) => (Some(installer.clone()), None),
        PipOf::Version(version) => (None, Some(version)),
    };
    let scanned = tokio::task::spawn_blocking(move || {
        let installed = installed_packages(&root)?;
        let pip_version = match (&external, known) {
            (_, Some(version)) => Some(version),
            (Some(Installer::ExternalPip(dir)), None) => {
                version_of_pip(&scan(std::slice::from_ref(dir))?)
            }
            _ => version_of_pip(&installed),
        };
        Ok::<_, std::io::Error>((site_packages_dirs(&root), installed, pip_version))
    })
    .await;
    let (site_packages, installed, pip_version) = match scanned {
        Ok(Ok(scanned)) => scanned,
        Ok(Err(error)) => {
            tracing::debug!(%error, "installing with pip: the environment could not be scanned");
            return Ok(false);
        }
        Err(error) => {
            tracing::debug!(%error, "installing with pip: the scan stopped");
            return Ok(false);
        }
    };
    let environment = wsp_wheels::Environment {
        root: request.root.clone(),
        python: python.to_path_buf(),
        activation: activation.clone(),
        site_packages,
        installed,
        pip_version,
    };
    match wsp_wheels::install(&environment, request).await? {
        wsp_wheels::Outcome::Installed(count) => {
            tracing::debug!(count, "installed without pip");
            Ok(true)
        }
        wsp_wheels::Outcome::NotApplicable(reason) => {
            tracing::debug!(%reason, "installing with pip: the fast path does not apply");
            Ok(false)
        }
    }
}

fn version_of_pip(packages: &[wsp_protocol::Package]) -> Option<String> {
    packages
        .iter()
        .find(|package| package.name.eq_ignore_ascii_case("pip"))
        .map(|package| package.version.clone())
}
