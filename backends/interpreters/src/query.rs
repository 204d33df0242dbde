//! Running an interpreter once to learn what it is: one process, flags that isolate it from the
//! environment and the user's site, stdin from the null device, bounded output, a timeout that
//! kills the whole process group.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;

use super::{InterpreterInfo, PythonVersion};

/// How long a query may take before the interpreter is killed.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// More output than this from a query is not an interpreter description.
const OUTPUT_LIMIT: usize = 64 * 1024;

/// Interpreter flags that work from Python 2.7 on. `-I` would be the obvious choice but 2.7
/// rejects it, so its parts are spelled out: `-E` (ignore `PYTHON*` variables), `-s` (no user
/// site) and `-S` (no `site`); the script drops the current-directory entry from `sys.path`
/// itself before importing anything, which is the rest of what `-I` does.
const FLAGS: [&str; 3] = ["-E", "-s", "-S"];

/// Prints one JSON object; valid Python 2.7 and 3.x.
const SCRIPT: &str = r#"import sys
sys.path[:] = [p for p in sys.path if p not in ('', '.')]
import json
impl = getattr(sys, 'implementation', None)
sys.stdout.write(json.dumps({
    'executable': sys.executable or '',
    'version': list(sys.version_info[:3]),
    'release_level': sys.version_info[3],
    'base_prefix': getattr(sys, 'real_prefix', getattr(sys, 'base_prefix', sys.prefix)),
    'base_exec_prefix': getattr(sys, 'real_prefix',
                                getattr(sys, 'base_exec_prefix', sys.exec_prefix)),
    'implementation': impl.name if impl else sys.subversion[0].lower(),
    'abiflags': getattr(sys, 'abiflags', ''),
}) + '\n')
"#;

/// Why an interpreter could not be queried.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// The file could not be examined.
    #[error("cannot examine `{path}`: {message}")]
    Inaccessible {
        /// The executable asked about.
        path: PathBuf,
        /// The operating system's message.
        message: String,
    },
    /// The file is a pyenv shim, which is never run.
    #[error("`{path}` is a pyenv shim; shims are never run")]
    Shim {
        /// The executable asked about.
        path: PathBuf,
    },
    /// The process could not be started.
    #[error("cannot start `{path}`: {message}")]
    Spawn {
        /// The executable asked about.
        path: PathBuf,
        /// The operating system's message.
        message: String,
    },
    /// The process did not finish in time and was killed.
    #[error("`{path}` did not answer within {millis} ms")]
    Timeout {
        /// The executable asked about.
        path: PathBuf,
        /// The time limit in milliseconds.
        millis: u128,
    },
    /// The process exited unsuccessfully.
    #[error("`{path}` failed ({status}): {stderr}")]
    Failed {
        /// The executable asked about.
        path: PathBuf,
        /// How it ended.
        status: String,
        /// The end of what it wrote to stderr.
        stderr: String,
    },
    /// The process succeeded but its output is not an interpreter description.
    #[error("`{path}` answered with something other than an interpreter description: {detail}")]
    BadOutput {
        /// The executable asked about.
        path: PathBuf,
        /// What was wrong.
        detail: String,
    },
}

/// A query's answer: the public facts plus the release level (`final`, `candidate`, ...).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Queried {
    /// What the interpreter said about itself.
    pub(crate) info: InterpreterInfo,
    /// `sys.version_info.releaselevel`.
    pub(crate) release_level: String,
}

impl Queried {
    /// Whether this is a final release (WSP requests can't name pre-releases).
    pub(crate) fn is_final(&self) -> bool {
        self.release_level == "final"
    }
}

#[derive(serde::Deserialize)]
struct Report {
    executable: String,
    version: (u64, u64, u64),
    release_level: String,
    base_prefix: PathBuf,
    base_exec_prefix: PathBuf,
    implementation: String,
    abiflags: String,
}

/// Runs `executable` once and parses its self-description.
pub(crate) async fn run(executable: &Path, timeout: Duration) -> Result<Queried, QueryError> {
    let path = executable.to_path_buf();
    let mut child = Command::new(executable)
        .args(FLAGS)
        .args(["-c", SCRIPT])
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|error| QueryError::Spawn {
            path: path.clone(),
            message: error.to_string(),
        })?;
    let group = child.id();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let finished = tokio::time::timeout(timeout, async {
        tokio::join!(read_bounded(stdout), read_bounded(stderr), child.wait())
    })
    .await;
    let Ok((stdout, stderr, status)) = finished else {
        kill_group(group);
        let _ = child.kill().await;
        return Err(QueryError::Timeout {
            path,
            millis: timeout.as_millis(),
        });
    };
    let io_failure = |error: io::Error| QueryError::Spawn {
        path: path.clone(),
        message: error.to_string(),
    };
    let status = status.map_err(io_failure)?;
    let (stdout, stdout_truncated) = stdout.map_err(io_failure)?;
    let (stderr, _) = stderr.map_err(io_failure)?;
    if !status.success() {
        return Err(QueryError::Failed {
            path,
            status: status.to_string(),
            stderr: tail(&String::from_utf8_lossy(&stderr), 500),
        });
    }
    if stdout_truncated {
        return Err(QueryError::BadOutput {
            path,
            detail: format!("more than {OUTPUT_LIMIT} bytes"),
        });
    }
    let report: Report =
        serde_json::from_slice(stdout.trim_ascii()).map_err(|error| QueryError::BadOutput {
            path: path.clone(),
            detail: format!(
                "{error} in {:?}",
                tail(&String::from_utf8_lossy(&stdout), 200)
            ),
        })?;
    interpret(executable, report).await
}

async fn interpret(queried: &Path, report: Report) -> Result<Queried, QueryError> {
    let executable = match tokio::fs::canonicalize(&report.executable).await {
        Ok(real) if !report.executable.is_empty() => real,
        _ => tokio::fs::canonicalize(queried)
            .await
            .map_err(|error| QueryError::Inaccessible {
                path: queried.to_path_buf(),
                message: error.to_string(),
            })?,
    };
    let (major, minor, patch) = report.version;
    Ok(Queried {
        info: InterpreterInfo {
            executable,
            version: PythonVersion {
                major,
                minor,
                patch,
            },
            base_prefix: report.base_prefix,
            base_exec_prefix: report.base_exec_prefix,
            implementation: report.implementation,
            abiflags: report.abiflags,
        },
        release_level: report.release_level,
    })
}

/// Reads everything, keeping at most [`OUTPUT_LIMIT`] bytes; the flag says whether more came.
async fn read_bounded<R: AsyncRead + Unpin>(reader: Option<R>) -> io::Result<(Vec<u8>, bool)> {
    let Some(mut reader) = reader else {
        return Ok((Vec::new(), false));
    };
    let mut kept = Vec::new();
    (&mut reader)
        .take(OUTPUT_LIMIT as u64 + 1)
        .read_to_end(&mut kept)
        .await?;
    let truncated = kept.len() > OUTPUT_LIMIT;
    if truncated {
        kept.truncate(OUTPUT_LIMIT);
        tokio::io::copy(&mut reader, &mut tokio::io::sink()).await?;
    }
    Ok((kept, truncated))
}

/// Kills the query's process group: a wrapper script's children go with it.
fn kill_group(group: Option<u32>) {
    let pid = group
        .and_then(|id| i32::try_from(id).ok())
        .and_then(rustix::process::Pid::from_raw);
    if let Some(pid) = pid {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// The last `max_chars` characters of `text`, trimmed.
fn tail(text: &str, max_chars: usize) -> String {
    let text = text.trim();
    let skip = text.chars().count().saturating_sub(max_chars);
    text.chars().skip(skip).collect()
}
