//! Running commands inside environments: the runner every backend uses for
//! `environment/execute`.
//!
//! A command runs with stdin from the null device, the server's own environment plus the
//! environment's [`Activation`], then the request's variables on top, and finally
//! [`ENVIRONMENT_ID_VAR`] and [`ENVIRONMENT_STACK_VAR`] (set last so that a request cannot hide
//! the nesting that the `env-in-use` rule depends on). Its stdout and stderr are captured
//! whole and decoded as UTF-8 with replacement characters.
//!
//! # Nothing a command starts outlives it
//! Each command runs in a containment of its own (see [`ContainmentMode`]): a cgroup v2 where
//! one can be created, else a PID namespace, else only its process group. The child leads its
//! own process group in every mode. Everything in the containment is killed with `SIGKILL`
//! - as soon as the main child has exited: whatever it left running in the background, a
//!   `setsid` daemon included, is killed too, and with a cgroup the run waits until all of it
//!   is gone (a background process holding the stdout or stderr pipe would otherwise keep the
//!   request waiting for an end of file that never comes);
//! - when the [`run`] future is dropped (the request was cancelled, or the drain deadline
//!   passed), synchronously in the drop;
//! - by [`kill_all_live`], which a server calls before it exits, because `std::process::exit`
//!   runs no destructors.
//!
//! Only in [`ContainmentMode::ProcessGroup`] can a process escape, by leaving the group
//! (`setsid`, `setpgid`). If a process outside the containment still holds a pipe when the
//! main child exits (in that mode, or one that was handed the pipe over a socket), the output
//! is read for a short grace period ([`PIPE_GRACE`]) and then returned as it is.

mod capture;
mod child;
mod contain;
mod lookup;
mod request;
mod stack;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::sync::watch;
use wsp_protocol::ExecuteResult;

use crate::BackendError;

pub use contain::{containment_mode, kill_all_live, ContainmentMode};
pub use request::{resolve_cwd, WorkingDir};
pub use stack::{
    current_stack, parse_stack, stack_value, ENVIRONMENT_ID_VAR, ENVIRONMENT_STACK_VAR,
};

/// How long the output pipes are still read after the main child exited and its containment
/// was killed, when a process outside the containment keeps them open.
pub const PIPE_GRACE: Duration = Duration::from_millis(500);

/// The `reason` of a [`BackendError::Failed`] for a program that could not be started.
pub const SPAWN_FAILED: &str = "spawn-failed";

/// What activating an environment adds to a child's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activation {
    /// The environment's root.
    pub root: PathBuf,
    /// The directory holding the environment's executables; put first on `PATH` and searched
    /// first for a bare `argv[0]`.
    pub bin_dir: PathBuf,
    /// Variables the activation sets, such as `VIRTUAL_ENV` or `CONDA_PREFIX`.
    pub vars: Vec<(String, String)>,
}

impl Activation {
    /// The activation of a virtual environment: `VIRTUAL_ENV=<root>`, `<root>/bin`.
    pub fn venv(root: &Path) -> Self {
        Self::with_var(root, "VIRTUAL_ENV")
    }

    /// The activation of a conda environment: `CONDA_PREFIX=<root>`, `<root>/bin`.
    pub fn conda(root: &Path) -> Self {
        Self::with_var(root, "CONDA_PREFIX")
    }

    fn with_var(root: &Path, var: &str) -> Self {
        Activation {
            root: root.to_path_buf(),
            bin_dir: root.join("bin"),
            vars: vec![(var.to_owned(), root.to_string_lossy().into_owned())],
        }
    }
}

/// How a command runs, beyond what it is: everything has a default.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The containment to use; `None` is [`containment_mode`], the best this process has.
    pub containment: Option<ContainmentMode>,
}

/// One command to run in an environment.
#[derive(Debug, Clone)]
pub struct RunSpec<'a> {
    /// The environment's activation.
    pub activation: &'a Activation,
    /// The environment's id, exported as [`ENVIRONMENT_ID_VAR`] and appended to the stack.
    pub environment_id: &'a str,
    /// The command: `argv[0]` without a `/` is looked up in the bin directory, then on the
    /// child's `PATH`; the child receives the path found as its `argv[0]`, so an interpreter
    /// locates its environment from it whatever `PATH` the request sets.
    pub argv: &'a [String],
    /// The working directory, resolved with [`resolve_cwd`]; the child enters exactly that
    /// directory, whatever its path has become since.
    pub cwd: &'a WorkingDir,
    /// Variables the request sets on top of the activation.
    pub env: &'a BTreeMap<String, String>,
    /// How it runs.
    pub options: RunOptions,
}

/// Runs a command and captures its output, nested inside this process's own
/// [`ENVIRONMENT_STACK_VAR`] (see [`current_stack`]).
///
/// A program that cannot be started is [`BackendError::Failed`] with reason
/// [`SPAWN_FAILED`]. Dropping the future kills everything the command started.
pub async fn run(spec: RunSpec<'_>) -> Result<ExecuteResult, BackendError> {
    run_with_stack(spec, &current_stack()).await
}

/// Like [`run`], with the enclosing environment ids given explicitly instead of read from this
/// process's environment.
pub async fn run_with_stack(
    spec: RunSpec<'_>,
    inherited_stack: &[String],
) -> Result<ExecuteResult, BackendError> {
    let Some(program) = spec.argv.first() else {
        return Err(BackendError::failed(SPAWN_FAILED, "the command is empty"));
    };
    let path = child_path(spec.activation, spec.env);
    let executable =
        lookup::find_program(program, &spec.activation.bin_dir, &path, spec.cwd.path())
            .map_err(|detail| BackendError::failed(SPAWN_FAILED, detail))?;

    let containment =
        contain::Containment::prepare(spec.options.containment.unwrap_or_else(containment_mode))
            .map_err(|error| {
                BackendError::failed(
                    SPAWN_FAILED,
                    format!("cannot start `{program}`: cannot contain it: {error}"),
                )
            })?;
    let setup = child::ChildSetup {
        cgroup_procs: containment.cgroup_procs(),
        namespace: containment.namespace().cloned(),
        cwd: Some(spec.cwd.as_fd().as_raw_fd()),
        ..child::ChildSetup::default()
    };

    let mut command = tokio::process::Command::new(&executable);
    command
        .args(&spec.argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .env_remove("PYTHONHOME");
    for (key, value) in &spec.activation.vars {
        command.env(key, value);
    }
    command.env("PATH", &path);
    command.envs(spec.env);
    command.env(ENVIRONMENT_ID_VAR, spec.environment_id);
    command.env(
        ENVIRONMENT_STACK_VAR,
        stack_value(inherited_stack, spec.environment_id),
    );
    // SAFETY: the setup makes only async-signal-safe system calls (see `ChildSetup::apply`).
    unsafe {
        command.pre_exec(move || setup.apply());
    }

    let mut child = command.spawn().map_err(|error| {
        BackendError::failed(
            SPAWN_FAILED,
            format!(
                "cannot start `{program}` ({}): {error}",
                executable.display()
            ),
        )
    })?;
    let mut containment = containment;
    containment.started(child.id());
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();

    let (exited_tx, exited_rx) = watch::channel(false);
    let wait = async {
        let status = child.wait().await;
        containment.finish().await;
        // The receivers live as long as this join, so a send error cannot happen here.
        let _ = exited_tx.send(true);
        status
    };
    let (status, stdout, stderr) = tokio::join!(
        wait,
        capture::read_all(stdout, exited_rx.clone(), PIPE_GRACE),
        capture::read_all(stderr, exited_rx, PIPE_GRACE),
    );
    let status = status
        .map_err(|error| BackendError::failed("wait-failed", format!("`{program}`: {error}")))?;
    let read_error = |error| {
        BackendError::failed(
            "io-error",
            format!("reading the output of `{program}`: {error}"),
        )
    };
    Ok(ExecuteResult {
        exit_code: exit_code(status),
        stdout: decode(stdout.map_err(read_error)?),
        stderr: decode(stderr.map_err(read_error)?),
    })
}

/// Decodes output as UTF-8 with replacement characters, without a copy when it is valid.
fn decode(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes)
        .unwrap_or_else(|invalid| String::from_utf8_lossy(invalid.as_bytes()).into_owned())
}

/// The child's `PATH`: the request's own `PATH` if it sets one, else the activation's bin
/// directory followed by this process's `PATH`.
fn child_path(activation: &Activation, env: &BTreeMap<String, String>) -> OsString {
    if let Some(path) = env.get("PATH") {
        return OsString::from(path);
    }
    let mut dirs = vec![activation.bin_dir.clone()];
    if let Some(inherited) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&inherited));
    }
    // Joining fails only for a directory containing `:`; then the bin directory is put in
    // front textually, which is what a shell's activation script does as well.
    std::env::join_paths(&dirs).unwrap_or_else(|_| {
        let mut path = activation.bin_dir.clone().into_os_string();
        if let Some(inherited) = std::env::var_os("PATH") {
            path.push(":");
            path.push(inherited);
        }
        path
    })
}

/// The exit status as WSP reports it: the code, or `-N` for a child killed by signal `N`.
fn exit_code(status: ExitStatus) -> i64 {
    match (status.code(), status.signal()) {
        (Some(code), _) => i64::from(code),
        (None, Some(signal)) => -i64::from(signal),
        (None, None) => i64::from(status.into_raw()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activations_set_their_variable_and_bin_dir() {
        let root = Path::new("/opt/envs/x");
        let conda = Activation::conda(root);
        assert_eq!(conda.bin_dir, root.join("bin"));
        let expected = vec![("CONDA_PREFIX".to_owned(), "/opt/envs/x".to_owned())];
        assert_eq!(conda.vars, expected);
        let venv = Activation::venv(root);
        assert_eq!(venv.bin_dir, root.join("bin"));
        assert_eq!(venv.vars[0].0, "VIRTUAL_ENV");
    }
}
