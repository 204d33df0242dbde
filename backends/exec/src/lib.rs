//! Running commands inside environments: the runner every backend uses for
//! `environment/execute`, with the containment and the sandbox it runs them in, and the
//! file-system walks that must not follow links ([`remove_tree`], [`file_events`]). This crate
//! holds all of WSP's `unsafe` code but the server's stdio.
//!
//! A command runs with the server's own environment plus the environment's [`Activation`],
//! then the request's variables on top, and finally [`ENVIRONMENT_ID_VAR`] and
//! [`ENVIRONMENT_STACK_VAR`] (set last so that a request cannot hide the nesting that the
//! `env-in-use` rule depends on). [`RunOptions`] add the rest:
//! - stdin is the null device, or a pipe the given text is written to and then closed;
//! - stdout and stderr are each decoded as UTF-8 with replacement characters and kept while
//!   their size in the answer, encoded as a JSON string (escapes included, quotes not), stays
//!   within a limit (16 MiB by default, [`DEFAULT_MAX_OUTPUT_BYTES`]): printable text
//!   takes a byte per byte, `\n` or `"` two, a NUL six (`\u0000`), a replacement character
//!   three. Whole characters are kept; from the first one that does not fit, the output is
//!   read and discarded, and the result says the stream was truncated;
//! - with an [`OutputSink`], the kept output is also sent as it arrives, in chunks that never
//!   end inside a UTF-8 sequence, through a bounded channel (a slow receiver slows the
//!   command, memory stays bounded);
//! - a timeout kills everything the command started; the result is still a result, with
//!   `timed_out` and exit code [`TIMED_OUT_EXIT_CODE`];
//! - resource limits become the child's soft and hard rlimits (`RLIMIT_AS`, `RLIMIT_CPU`,
//!   `RLIMIT_NOFILE`), set between fork and exec; the process limit is `pids.max` of a cgroup
//!   of the command's own where there is a `pids` controller, else `RLIMIT_NPROC` where that
//!   binds (it counts every process of the user, and does not bind root), else the run fails
//!   with [`FailureReason::LimitUnavailable`] (see [`ProcessLimit`], [`process_limit`]).
//! - a [`SandboxPolicy`] confines the command (module [`sandbox`]): it writes only in the
//!   environment's root and a private `TMPDIR`, reads everything but the hidden trees, and has
//!   no network; where that cannot be enforced the run fails with [`FailureReason::SandboxUnavailable`]
//!   before anything starts.
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
//! - in `cgroup` mode, for what a dead server left: the next server kills it as it starts; in
//!   `pid-namespace` mode the namespace dies with its server.
//!
//! Only in [`ContainmentMode::ProcessGroup`] can a process escape, by leaving the group
//! (`setsid`, `setpgid`); in `cgroup` mode a root command can still move a process into a
//! cgroup outside the server's (the server's own is watched, see module `contain`). If a process outside the containment still holds a pipe when the
//! main child exits (in that mode, or one that was handed the pipe over a socket), the output
//! is read for a short grace period ([`PIPE_GRACE`]) and then returned as it is.

#![warn(missing_docs)]

mod activation;
mod capture;
mod child;
mod contain;
mod dir_lock;
pub mod file_events;
mod links;
mod lookup;
mod options;
mod pty;
pub mod remove_tree;
pub mod sandbox;
mod spawn;
mod stack;
mod stdin;
mod streams;
mod user_namespace;
mod utf8;

use std::collections::BTreeMap;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::time::{Duration, Instant};
use wsp_protocol::FailureReason;

use tokio::sync::watch;
use wsp_protocol::results::OutputStream;
use wsp_protocol::ExecuteResult;

use wsp_backend::BackendError;

pub use activation::Activation;
pub use contain::{
    containment_mode, kill_all_live, process_limit, ProcessLimit, TEST_CONTAINMENT_VAR,
};
pub use sandbox::{sandbox_availability, TEST_UNAVAILABLE_VAR};
pub use spawn::TEST_SPAWN_VAR;
pub use stack::{
    current_stack, parse_stack, stack_value, ENVIRONMENT_ID_VAR, ENVIRONMENT_STACK_VAR,
};
/// What a run is asked to do: the request vocabulary of `wsp-backend`, here too.
pub use wsp_backend::{
    resolve_cwd, ContainmentMode, OutputChunk, OutputSink, RunOptions, SandboxNetwork,
    SandboxPolicy, StdinStream, WorkingDir, DEFAULT_MAX_OUTPUT_BYTES,
};

/// How long the output pipes (and stdin) are still served after the main child exited and
/// its containment was killed, when a process outside the containment keeps them open.
pub const PIPE_GRACE: Duration = Duration::from_millis(500);

/// The exit code reported for a command killed because its timeout passed.
pub const TIMED_OUT_EXIT_CODE: i64 = -9;

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

impl<'a> RunSpec<'a> {
    /// The command of a backend's [`RunRequest`](wsp_backend::RunRequest), run under `activation`.
    pub fn for_request(activation: &'a Activation, request: &'a wsp_backend::RunRequest) -> Self {
        RunSpec {
            activation,
            environment_id: &request.environment_id,
            argv: &request.argv,
            cwd: &request.cwd,
            env: &request.env,
            options: request.options.clone(),
        }
    }
}

/// Runs a command and captures its output, nested inside this process's own
/// [`ENVIRONMENT_STACK_VAR`] (see [`current_stack`]).
///
/// A program that cannot be started is [`BackendError::Failed`] with reason
/// [`FailureReason::SpawnFailed`]. Dropping the future kills everything the command started.
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
        return Err(BackendError::failed(
            FailureReason::SpawnFailed,
            "the command is empty",
        ));
    };
    let options = spec.options;
    let path = activation::child_path(spec.activation, spec.env);
    let executable =
        lookup::find_program(program, &spec.activation.bin_dir, &path, spec.cwd.path())
            .map_err(|detail| BackendError::failed(FailureReason::SpawnFailed, detail))?;

    let mode = options.containment.unwrap_or_else(containment_mode);
    let mut sandbox = match &options.sandbox {
        Some(policy) => {
            let prepared = sandbox::Prepared::prepare_off_thread(policy.clone(), mode).await?;
            unshare_links(&policy.root).await?;
            Some(prepared)
        }
        None => None,
    };
    // The sandbox's user namespace already grants the right to make a PID namespace; a nested
    // user namespace would not own the sandbox's mount namespace, which is confined after.
    let contained = match (&sandbox, mode) {
        (Some(_), ContainmentMode::PidNamespace { .. }) => ContainmentMode::PidNamespace {
            user_namespace: false,
        },
        _ => mode,
    };
    let containment =
        contain::Containment::prepare(contained, options.limits.processes).map_err(|error| {
            match error {
                contain::PrepareError::ProcessLimitUnavailable(detail) => {
                    BackendError::failed(FailureReason::LimitUnavailable, detail)
                }
                contain::PrepareError::Io(error) => BackendError::caused_by(
                    FailureReason::SpawnFailed,
                    format!("cannot start `{program}`: cannot contain it"),
                    error,
                ),
            }
        })?;
    let limits = options::rlimits(&options)
        .into_iter()
        .filter(|(resource, _)| {
            *resource != rustix::process::Resource::Nproc || containment.rlimit_processes()
        })
        .collect();
    let namespaced = containment.namespace().is_some();
    let setup = child::ChildSetup {
        cgroup_procs: containment.cgroup_procs(),
        namespace: containment.namespace().cloned(),
        cwd: Some(spec.cwd.as_fd().as_raw_fd()),
        cwd_path: match &sandbox {
            Some(_) => Some(cwd_path(spec.cwd)?),
            None => None,
        },
        null_stdin: options.stdin.is_none()
            && options.stdin_stream.is_none()
            && options.pty.is_none(),
        pty_session: options.pty.is_some(),
        limits,
        sandbox: sandbox.as_mut().and_then(sandbox::Prepared::take_child),
    };

    let pty = match &options.pty {
        Some(sizes) => Some(pty::Pty::open(*sizes.borrow()).map_err(|error| {
            BackendError::caused_by(
                FailureReason::SpawnFailed,
                format!("cannot start `{program}`: cannot open a pseudo-terminal"),
                error,
            )
        })?),
        None => None,
    };
    let streamed = options.stdin_stream.as_ref().and_then(StdinStream::take);
    let input = match (streamed, &options.stdin) {
        (Some(chunks), _) => Some(stdin::Input::Stream(chunks)),
        (None, Some(text)) => Some(stdin::Input::Text(text.clone())),
        (None, None) => None,
    };
    let start_error = |what: &str, error| {
        BackendError::caused_by(
            FailureReason::SpawnFailed,
            format!("cannot start `{program}`: {what}"),
            error,
        )
    };
    let mut command = spawn::CommandLine::new(&executable, &spec.argv[1..])
        .map_err(|error| start_error("its command line", error))?;
    command.env_remove("PYTHONHOME");
    for (key, value) in &spec.activation.vars {
        command.env(key, value);
    }
    command.env("PATH", &path);
    for (key, value) in spec.env {
        command.env(key, value);
    }
    command.env(ENVIRONMENT_ID_VAR, spec.environment_id);
    command.env(
        ENVIRONMENT_STACK_VAR,
        stack_value(inherited_stack, spec.environment_id),
    );
    if let Some(sandbox) = &sandbox {
        command.env("TMPDIR", sandbox.tmpdir());
    }
    let (stdio, pipe_ends) = streams::connect(pty.as_ref(), input.is_some(), namespaced)
        .map_err(|error| start_error("its standard streams", error))?;
    let launch = spawn::Launch {
        command,
        stdio: stdio.fds,
        process_group: stdio.process_group,
        cgroup: containment.cgroup_dir(),
        setup,
    };

    let started = Instant::now();
    // A spawn returns once the child has exec'd, after its setup (entering namespaces, the
    // sandbox): 0.5-4 ms measured. It runs on the blocking pool, not on the async thread that
    // serves every other request meanwhile. The containment goes along and comes back, so a
    // request dropped during the spawn still has what it started killed (and the child reaped).
    let spawning = tokio::task::spawn_blocking(move || {
        let spawned = launch.start().and_then(spawn::ChildProcess::new);
        if let Ok(child) = &spawned {
            containment.started(Some(child.id()));
        }
        (spawned, containment)
    });
    let (spawned, mut containment) = spawning
        .await
        .map_err(|error| start_error("the spawn did not finish", error.into()))?;
    let mut child = spawned.map_err(|error| {
        if let Some(failure) = sandbox.as_ref().and_then(sandbox::Prepared::failure) {
            return BackendError::failed(FailureReason::SandboxUnavailable, failure);
        }
        BackendError::caused_by(
            FailureReason::SpawnFailed,
            format!("cannot start `{program}` ({})", executable.display()),
            error,
        )
    })?;
    let limit = options::output_limit(&options);
    let streams::ChildStreams {
        stdout: stdout_pipe,
        stderr: stderr_pipe,
        input: writer,
        end,
        terminal,
    } = streams::ChildStreams::take(pipe_ends, pty, options.pty.clone())
        .map_err(|error| start_error("its output pipes", error))?;
    let stdout = capture::Capture {
        pipe: stdout_pipe,
        stream: OutputStream::Stdout,
        limit,
        sink: options.output.clone(),
    };
    let stderr = capture::Capture {
        pipe: stderr_pipe,
        stream: OutputStream::Stderr,
        limit,
        sink: options.output,
    };

    let (exited_tx, exited_rx) = watch::channel(false);
    let wait = async {
        let (status, timed_out) = match options.timeout {
            None => (child.wait().await, false),
            Some(timeout) => match tokio::time::timeout(timeout, child.wait()).await {
                Ok(status) => (status, false),
                Err(_) => {
                    containment.kill();
                    (child.wait().await, true)
                }
            },
        };
        containment.finish().await;
        if let Some(sandbox) = sandbox {
            sandbox.finish().await;
        }
        // The receivers live as long as this join, so a send error cannot happen here.
        let _ = exited_tx.send(true);
        (status, timed_out)
    };
    let ((status, timed_out), stdout, stderr, (), ()) = tokio::join!(
        wait,
        stdout.read(exited_rx.clone(), PIPE_GRACE),
        stderr.read(exited_rx.clone(), PIPE_GRACE),
        stdin::feed(writer, input, end, terminal.clone(), exited_rx.clone()),
        streams::resize_until_exit(terminal, exited_rx),
    );
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let status = status.map_err(|error| {
        BackendError::caused_by(FailureReason::WaitFailed, format!("`{program}`"), error)
    })?;
    let read_error = |error| {
        BackendError::caused_by(
            FailureReason::WaitFailed,
            format!("reading the output of `{program}`"),
            error,
        )
    };
    let (stdout, stderr) = (stdout.map_err(read_error)?, stderr.map_err(read_error)?);
    Ok(ExecuteResult {
        exit_code: if timed_out {
            TIMED_OUT_EXIT_CODE
        } else {
            exit_code(status)
        },
        stdout: stdout.text,
        stderr: stderr.text,
        duration_ms,
        timed_out,
        stdout_truncated: stdout.truncated,
        stderr_truncated: stderr.truncated,
    })
}

/// Copies the files of `root` that are hard links (module `links`), off the async threads.
async fn unshare_links(root: &std::path::Path) -> Result<(), BackendError> {
    let walked = root.to_owned();
    let copied = tokio::task::spawn_blocking(move || links::unshare_links(&walked))
        .await
        .map_err(std::io::Error::other)
        .and_then(|copied| copied);
    match copied {
        Ok(0) => Ok(()),
        Ok(copied) => {
            tracing::debug!(root = %root.display(), copied, "copied hard-linked files before a sandboxed run");
            Ok(())
        }
        Err(error) => Err(BackendError::caused_by(
            FailureReason::SandboxUnavailable,
            format!("cannot copy the hard-linked files of {}", root.display()),
            error,
        )),
    }
}

/// The working directory's path for a sandboxed child to enter by path.
fn cwd_path(cwd: &WorkingDir) -> Result<std::ffi::CString, BackendError> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(cwd.path().as_os_str().as_bytes()).map_err(|error| {
        BackendError::caused_by(FailureReason::SpawnFailed, "the working directory", error)
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
