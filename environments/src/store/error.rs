//! The store's error type.

use std::io;
use std::path::PathBuf;

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No committed environment has this id (well-formed or not).
    #[error("environment {id} not found")]
    NotFound {
        /// The id that was asked for.
        id: String,
    },
    /// A committed environment or a live reservation already has this exact name.
    #[error("an environment named {name:?} already exists")]
    NameConflict {
        /// The name that was asked for.
        name: String,
    },
    /// A file system operation failed; `context` names what was being done and to which path.
    #[error("{context}: {source}")]
    Io {
        /// What the store was doing, with the path it was doing it to.
        context: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// One of the store's subdirectories (`environments/`, `locks/`, `trash/`) is a symlink.
    /// The store refuses to open: following it would let the store delete whatever the link
    /// points at.
    #[error(
        "{} is a symlink to {}; the state directory's subdirectories must be real directories",
        path.display(),
        target.display()
    )]
    SymlinkedDirectory {
        /// The symlink.
        path: PathBuf,
        /// What it points at, as the link spells it.
        target: PathBuf,
    },
    /// An environment's root is not a plain directory beneath `environments/` (it was replaced
    /// by a symlink, for example), so the store will not hand it out for use.
    #[error("the root of {id}, {}, {detail}; it is not followed", path.display())]
    UnsafeRoot {
        /// The environment.
        id: String,
        /// Where its root should be.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// A store file exists but cannot be understood.
    #[error("corrupt store file {}: {detail}", path.display())]
    Corrupt {
        /// The file that could not be read.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
        /// The parser's error, when it was one that found the file wrong.
        #[source]
        source: Option<serde_json::Error>,
    },
}

impl StoreError {
    /// A [`StoreError::Io`] with the given context.
    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> Self {
        StoreError::Io {
            context: context.into(),
            source,
        }
    }
}
