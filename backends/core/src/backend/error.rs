//! [`BackendError`]: why a backend step failed.

use std::sync::Arc;

use wsp_protocol::FailureReason;

use crate::interpreters::ResolveError;

/// Why a backend request failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BackendError {
    /// No interpreter or package satisfies the requested Python version (`-31003`).
    #[error("Python {requested} is not available")]
    VersionUnavailable {
        /// The version as the client asked for it.
        requested: String,
        /// The versions that are available, ascending.
        available: Vec<String>,
    },
    /// Anything else (`-31004`): a typed `reason`, a human-readable `detail`, and the error
    /// that caused it, if any, kept whole so that its chain can be logged.
    #[error("{reason}: {detail}")]
    Failed {
        /// The machine-readable cause.
        reason: FailureReason,
        /// A human-readable explanation.
        detail: String,
        /// The underlying error.
        #[source]
        source: Option<Arc<dyn std::error::Error + Send + Sync>>,
    },
}

impl BackendError {
    /// A [`BackendError::Failed`] with the given reason and detail and no source.
    pub fn failed(reason: FailureReason, detail: impl std::fmt::Display) -> Self {
        BackendError::Failed {
            reason,
            detail: detail.to_string(),
            source: None,
        }
    }

    /// A [`BackendError::Failed`] caused by `source`: `detail` says what was being done, the
    /// source why it failed (the detail on the wire ends with the source's message).
    pub fn caused_by(
        reason: FailureReason,
        detail: impl std::fmt::Display,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        BackendError::Failed {
            reason,
            detail: format!("{detail}: {source}"),
            source: Some(Arc::new(source)),
        }
    }

    /// The error a layered backend answered, as a [`BackendError`]: a `BackendError` as it
    /// is, tower's timeout as reason [`Timeout`](FailureReason::Timeout), anything else as
    /// [`BackendError`](FailureReason::BackendError) caused by it.
    pub fn from_layer(error: tower::BoxError) -> Self {
        match error.downcast::<BackendError>() {
            Ok(error) => *error,
            Err(other) if other.is::<tower::timeout::error::Elapsed>() => {
                BackendError::failed(FailureReason::Timeout, "the backend did not answer in time")
            }
            Err(other) => BackendError::Failed {
                reason: FailureReason::BackendError,
                detail: other.to_string(),
                source: Some(Arc::from(other)),
            },
        }
    }

    /// The error's sources, outermost first, each as its message (for logs).
    pub fn source_chain(&self) -> Vec<String> {
        let mut chain = Vec::new();
        let mut next = std::error::Error::source(self);
        while let Some(error) = next {
            chain.push(error.to_string());
            next = error.source();
        }
        chain
    }
}

impl From<ResolveError> for BackendError {
    fn from(error: ResolveError) -> Self {
        match error {
            ResolveError::Unavailable {
                requested,
                available,
            } => BackendError::VersionUnavailable {
                requested,
                available,
            },
        }
    }
}
