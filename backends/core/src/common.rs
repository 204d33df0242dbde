//! Steps most backends take the same way: describing an environment by scanning its
//! site-packages, and running a request's command under an activation.

use std::path::{Path, PathBuf};
use wsp_protocol::FailureReason;

use wsp_protocol::ExecuteResult;

use crate::execute::{run, Activation, RunSpec};
use crate::{BackendError, Description, RunRequest};

/// A [`Description`] of the environment at `root`: `interpreter_path`, and the distributions
/// found in its site-packages (off the async threads).
pub async fn describe_by_scan(
    root: &Path,
    interpreter_path: PathBuf,
) -> Result<Description, BackendError> {
    let scan_root = root.to_owned();
    let installed =
        tokio::task::spawn_blocking(move || crate::packages::installed_packages(&scan_root))
            .await
            .map_err(|e| BackendError::failed(FailureReason::DescribeFailed, e))?
            .map_err(|e| {
                BackendError::failed(
                    FailureReason::DescribeFailed,
                    format!("cannot read the packages of {}: {e}", root.display()),
                )
            })?;
    Ok(Description {
        interpreter_path,
        installed_packages: installed,
    })
}

/// Runs `request`'s command under `activation` (see [`crate::execute::run`]).
pub async fn run_activated(
    activation: &Activation,
    request: &RunRequest,
) -> Result<ExecuteResult, BackendError> {
    run(RunSpec {
        activation,
        environment_id: &request.environment_id,
        argv: &request.argv,
        cwd: &request.cwd,
        env: &request.env,
        options: request.options.clone(),
    })
    .await
}
