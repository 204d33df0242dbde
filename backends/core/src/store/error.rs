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
    /// A store file exists but cannot be understood.
    #[error("corrupt store file {}: {detail}", path.display())]
    Corrupt {
        /// The file that could not be read.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
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
