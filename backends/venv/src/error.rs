//! Why creating a virtual environment failed.

use std::path::PathBuf;

/// A failure of [`create_venv`](crate::create_venv).
///
/// The environment directory may hold a partial environment afterwards; the caller removes it.
#[derive(Debug, thiserror::Error)]
pub enum VenvError {
    /// The interpreter cannot host a virtual environment in the requested way.
    #[error("{implementation} {version} cannot create a virtual environment: {reason}")]
    UnsupportedInterpreter {
        /// `sys.implementation.name` of the interpreter.
        implementation: String,
        /// Its full version.
        version: String,
        /// What is missing.
        reason: String,
    },
    /// A path or prompt that the environment's files cannot represent.
    #[error("cannot use {what} {value:?}: {reason}")]
    InvalidInput {
        /// Which input: `environment root`, `prompt`, ...
        what: &'static str,
        /// The offending value, lossily printed.
        value: String,
        /// Why it is rejected.
        reason: &'static str,
    },
    /// A filesystem operation failed.
    #[error("could not {action} {}: {source}", path.display())]
    Io {
        /// What was being done, e.g. `create directory`.
        action: &'static str,
        /// The path it was done to.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A helper process could not be started.
    #[error("could not start `{command}`: {source}")]
    Spawn {
        /// The command line, for humans.
        command: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A helper process ran and failed.
    #[error("`{command}` failed ({status}): {output}")]
    CommandFailed {
        /// The command line, for humans.
        command: String,
        /// How it ended, e.g. `exit status: 1`.
        status: String,
        /// What it wrote to stderr (and stdout, when stderr was empty), trimmed.
        output: String,
    },
    /// A background task running filesystem work was lost (panicked or cancelled).
    #[error("a background task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}

impl VenvError {
    /// A [`VenvError::Io`] for `action` on `path`; for use with `map_err`.
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> VenvError {
        let path = path.into();
        move |source| VenvError::Io {
            action,
            path,
            source,
        }
    }
}
