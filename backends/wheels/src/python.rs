//! Running the environment's interpreter as a command of the environment ([`wsp_exec::run`],
//! as the installer runs pip): cancelled with the install, and contained.

use std::collections::BTreeMap;

use wsp_exec::{resolve_cwd, run, RunOptions, RunSpec};

use crate::Step;

/// The most bytes of output kept from each stream.
const OUTPUT_LIMIT: u64 = 16 << 20;

/// Runs the interpreter with `args`, `stdin` on its stdin, and returns its stdout; a failure
/// to start, a non-zero exit or truncated output is an error saying so.
pub(crate) async fn run_python(
    step: &Step<'_>,
    args: &[String],
    stdin: Option<String>,
) -> Result<String, String> {
    let cwd = resolve_cwd(&step.activation.root, None)?;
    let mut argv = vec![step.python.to_string_lossy().into_owned()];
    argv.extend(args.iter().cloned());
    let env = BTreeMap::new();
    let options = RunOptions {
        stdin: stdin.map(Into::into),
        max_output_bytes: Some(OUTPUT_LIMIT),
        ..RunOptions::default()
    };
    let ran = run(RunSpec {
        activation: step.activation,
        environment_id: step.environment_id,
        argv: &argv,
        cwd: &cwd,
        env: &env,
        options,
    })
    .await
    .map_err(|error| error.to_string())?;
    if ran.exit_code != 0 {
        return Err(format!(
            "{} exited with {}: {}",
            step.python.display(),
            ran.exit_code,
            ran.stderr.trim()
        ));
    }
    if ran.stdout_truncated {
        return Err(format!("{} printed too much", step.python.display()));
    }
    Ok(ran.stdout)
}
