//! Activating a prefix for a command: `CONDA_PREFIX` and `<prefix>/bin` first on `PATH`, plus
//! the variables the prefix's packages declare (`etc/conda/env_vars.d`, `conda-meta/state`)
//! and those its `etc/conda/activate.d/*.sh` scripts export.
//!
//! The scripts run in one `bash` (through rattler's activator) only when there are any, so a
//! prefix without them costs no extra process. Changes the scripts make to `PATH` are not
//! carried over: the runner builds the child's `PATH` itself.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use rattler_conda_types::Subdir;
use rattler_shell::activation::{ActivationVariables, Activator, PathModificationBehavior};
use rattler_shell::environment::EnvironmentSnapshot;
use rattler_shell::process::ProcessLimits;
use rattler_shell::shell::Bash;
use wsp_exec::Activation;

use crate::CondaConfig;

/// How long the activation scripts of one prefix may run.
pub const ACTIVATION_TIMEOUT: Duration = Duration::from_secs(30);

/// How much output the activation scripts may write.
const ACTIVATION_OUTPUT_LIMIT: usize = 8 * 1024 * 1024;

/// Variables the runner sets itself, which the activation must not override.
const RUNNER_VARIABLES: [&str; 2] = ["PATH", "CONDA_PREFIX"];

/// The activation of the prefix at `root`. Activation scripts that fail are logged and
/// left out; the prefix's own variables are always set.
pub(crate) async fn activate(config: &CondaConfig, root: &Path) -> Activation {
    let mut activation = Activation::conda(root);
    let platform = config
        .platform
        .as_deref()
        .and_then(|name| Subdir::from_str(name).ok())
        .or_else(Subdir::current)
        .unwrap_or(Subdir::Linux64);
    let activator = match Activator::from_path(root, Bash::default(), platform) {
        Ok(activator) => activator,
        Err(error) => {
            tracing::warn!("reading the activation of {}: {error}", root.display());
            return activation;
        }
    };
    let variables = if activator.activation_scripts.is_empty() {
        activator
            .env_vars
            .iter()
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect()
    } else {
        match script_variables(&activator).await {
            Ok(variables) => variables,
            Err(error) => {
                tracing::warn!(
                    "running the activation scripts of {}: {error}",
                    root.display()
                );
                Vec::new()
            }
        }
    };
    activation.vars.extend(
        variables
            .into_iter()
            .filter(|(key, _)| !RUNNER_VARIABLES.contains(&key.as_str())),
    );
    activation
}

/// The variables that activating with `activator`'s scripts sets or changes, sorted by name.
async fn script_variables(
    activator: &Activator<Bash>,
) -> Result<Vec<(String, String)>, rattler_shell::activation::BoundedActivationError> {
    let before = EnvironmentSnapshot::from_system();
    let variables = ActivationVariables {
        conda_prefix: None,
        path: None,
        path_modification_behavior: PathModificationBehavior::Prepend,
        current_env: Default::default(),
    };
    let limits = ProcessLimits {
        timeout: ACTIVATION_TIMEOUT,
        output_limit: ACTIVATION_OUTPUT_LIMIT,
    };
    let after = activator
        .run_activation_bounded(variables, &before, limits)
        .await?;
    let mut changed: Vec<(String, String)> = after
        .iter()
        .filter(|(key, value)| before.get(key) != Some(*value))
        .filter_map(|(key, value)| Some((key.to_str()?.to_owned(), value.to_str()?.to_owned())))
        .collect();
    changed.sort();
    Ok(changed)
}
