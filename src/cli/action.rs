//! A client command as the session performs it: its arguments checked, requirements files
//! read.

use serde_json::Value;

use super::args::{ClientArgs, Command, SourceArgs};
use super::commands::CliError;
use super::exec::ExecRequest;
use super::requirements;

/// A client command, its arguments checked.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// `wsp list`.
    List,
    /// `wsp create NAME [--python X.Y] [-p PKG]... [-r FILE]... [--reuse]`.
    Create {
        /// The name.
        name: String,
        /// The Python version; `None` until the default is chosen.
        python: Option<String>,
        /// Packages to install before the environment is committed, requirements files' too.
        packages: Vec<String>,
        /// Where to look for them.
        source: SourceArgs,
        /// `--lock FILE`, read: what to install instead of `packages`.
        lock: Option<wsp_protocol::Lock>,
        /// Whether an environment of the same content may answer.
        reuse: bool,
    },
    /// `wsp lock ID|NAME`.
    Lock {
        /// An id or a name.
        target: String,
    },
    /// `wsp install ID|NAME PKG... [-r FILE]...`.
    Install {
        /// An id or a name.
        target: String,
        /// What to install, requirements files' lines included.
        packages: Vec<String>,
        /// Where to look.
        source: SourceArgs,
        /// `--upgrade`.
        upgrade: bool,
    },
    /// `wsp uninstall ID|NAME PKG...`.
    Uninstall {
        /// An id or a name.
        target: String,
        /// The names.
        packages: Vec<String>,
    },
    /// `wsp get ID|NAME`.
    Get {
        /// An id or a name.
        target: String,
    },
    /// `wsp delete ID|NAME [--yes]`.
    Delete {
        /// An id or a name.
        target: String,
        /// Whether a terminal is asked to confirm first.
        confirm: bool,
    },
    /// `wsp gc --keep-bytes N`.
    Gc {
        /// The most bytes the environments may hold afterwards.
        keep_bytes: u64,
    },
    /// `wsp exec ID|NAME [--cwd DIR] [--env K=V]... [--timeout D] -- ARGV...`; its `id` is
    /// the target until it is resolved.
    Exec(ExecRequest),
    /// `wsp python list` over `--connect`: the server's interpreters.
    PythonList,
    /// `wsp call METHOD [JSON]`.
    Call {
        /// The method.
        method: String,
        /// The params, parsed.
        params: Option<Value>,
    },
}

impl Action {
    /// The action and the client options given after the command's name (`serve`, `python`
    /// and `completions` are not client commands).
    pub fn from_command(command: Command) -> Result<(Action, ClientArgs), CliError> {
        Ok(match command {
            Command::Serve(_) | Command::Python(_) | Command::Completions { .. } => {
                return Err(CliError::Usage("not a client command".into()))
            }
            Command::List(client) => (Action::List, client),
            Command::Create {
                name,
                python,
                packages,
                requirements,
                lock,
                source,
                reuse,
                client,
            } => {
                let packages = with_requirements(packages, &requirements)?;
                let lock = lock.as_deref().map(read_lock).transpose()?;
                let action = Action::Create {
                    name,
                    python,
                    packages,
                    source,
                    lock,
                    reuse,
                };
                (action, client)
            }
            Command::Install(install) => (
                Action::Install {
                    target: install.target,
                    packages: with_requirements(install.packages, &install.requirements)?,
                    source: install.source,
                    upgrade: install.upgrade,
                },
                install.client,
            ),
            Command::Uninstall {
                target,
                packages,
                client,
            } => (Action::Uninstall { target, packages }, client),
            Command::Get { target, client } => (Action::Get { target }, client),
            Command::Lock { target, client } => (Action::Lock { target }, client),
            Command::Delete {
                target,
                yes,
                client,
            } => (
                Action::Delete {
                    target,
                    confirm: !yes,
                },
                client,
            ),
            Command::Gc { keep_bytes, client } => (Action::Gc { keep_bytes }, client),
            Command::Exec(exec) => (
                Action::Exec(ExecRequest {
                    id: exec.target,
                    cwd: exec.cwd.map(|cwd| made_absolute(&cwd)),
                    env: exec.env,
                    argv: exec.argv,
                    timeout: exec.timeout,
                    no_stdin: exec.no_stdin,
                    interactive: exec.interactive,
                    max_output_bytes: exec.max_output_bytes,
                    strict_output: exec.strict_output,
                }),
                exec.client,
            ),
            Command::Call {
                method,
                params,
                client,
            } => {
                let params = match params {
                    Some(text) => Some(serde_json::from_str(&text).map_err(|e| {
                        CliError::Usage(format!("the params `{text}` are not JSON: {e}"))
                    })?),
                    None => None,
                };
                (Action::Call { method, params }, client)
            }
        })
    }

    /// The command's name as its failure is told (`wsp: install failed: ...`); `None` for the
    /// raw `wsp call`.
    pub fn verb(&self) -> Option<&'static str> {
        Some(match self {
            Action::List => "list",
            Action::Create { .. } => "create",
            Action::Install { .. } => "install",
            Action::Uninstall { .. } => "uninstall",
            Action::Get { .. } => "get",
            Action::Lock { .. } => "lock",
            Action::Delete { .. } => "delete",
            Action::Gc { .. } => "gc",
            Action::Exec(_) => "exec",
            Action::PythonList => "python list",
            Action::Call { .. } => return None,
        })
    }
}

/// The lock in the file at `path`: a conda explicit spec when a line of it is `@EXPLICIT`,
/// else a `pylock.toml` (whatever the file's name; the server checks the text).
fn read_lock(path: &std::path::Path) -> Result<wsp_protocol::Lock, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Usage(format!("--lock {}: {e}", path.display())))?;
    let format = if text.lines().any(|line| line.trim() == "@EXPLICIT") {
        wsp_protocol::LockFormat::CondaExplicit
    } else {
        wsp_protocol::LockFormat::Pylock
    };
    Ok(wsp_protocol::Lock { format, text })
}

/// `packages` followed by what each requirements file lists; a file listing nothing, with no
/// packages given, is a usage error.
fn with_requirements(
    mut packages: Vec<String>,
    files: &[std::path::PathBuf],
) -> Result<Vec<String>, CliError> {
    for file in files {
        let listed = requirements::read(file).map_err(|e| CliError::Usage(e.to_string()))?;
        packages.extend(listed);
    }
    if packages.is_empty() && !files.is_empty() {
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        return Err(CliError::Usage(format!(
            "no packages to install: {} list none",
            names.join(", ")
        )));
    }
    Ok(packages)
}

/// `path` made absolute against this program's working directory (unchanged if it can't be).
fn made_absolute(path: &str) -> String {
    std::path::absolute(path)
        .map(|absolute| absolute.display().to_string())
        .unwrap_or_else(|_| path.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn call_params_must_be_json() {
        let call = |params: &str| Command::Call {
            method: "environment/list".into(),
            params: Some(params.into()),
            client: ClientArgs::default(),
        };
        assert!(matches!(
            Action::from_command(call("{nope")),
            Err(CliError::Usage(_))
        ));
        let Ok((Action::Call { params, .. }, _)) = Action::from_command(call("{}")) else {
            panic!("not parsed");
        };
        assert_eq!(params, Some(json!({})));
    }
}
