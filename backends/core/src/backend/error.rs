//! [`BackendError`]: why a backend step failed.

use std::error::Error;
use std::sync::Arc;

use wsp_protocol::error_chain::{chain_message, source_chain};
use wsp_protocol::FailureReason;

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

    /// A [`BackendError::Failed`] caused by `source`, which it keeps: `doing` says what was
    /// being done, and the detail on the wire is `doing` followed by the source's
    /// [`chain_message`], so that it says why even when the source's message leaves its own
    /// causes out.
    pub fn caused_by(
        reason: FailureReason,
        doing: impl std::fmt::Display,
        source: impl Error + Send + Sync + 'static,
    ) -> Self {
        BackendError::Failed {
            reason,
            detail: format!("{doing}: {}", chain_message(&source)),
            source: Some(Arc::new(source)),
        }
    }

    /// The same failure under `reason` instead (a [`VersionUnavailable`] stays as it is, and
    /// so does [`SandboxUnavailable`](FailureReason::SandboxUnavailable), which says that
    /// nothing ran); the detail and the source are kept.
    ///
    /// [`VersionUnavailable`]: BackendError::VersionUnavailable
    pub fn with_reason(self, reason: FailureReason) -> Self {
        match self {
            BackendError::Failed {
                reason: FailureReason::SandboxUnavailable,
                ..
            } => self,
            BackendError::Failed { detail, source, .. } => BackendError::Failed {
                reason,
                detail,
                source,
            },
            other => other,
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
                detail: chain_message(&*other),
                source: Some(Arc::from(other)),
            },
        }
    }

    /// The error's sources, outermost first, each as its message (for logs); see
    /// [`source_chain`].
    pub fn source_chain(&self) -> Vec<String> {
        source_chain(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error whose message may or may not repeat its source's, as real ones do.
    #[derive(Debug)]
    struct Layer {
        message: &'static str,
        source: Option<Box<Layer>>,
    }

    impl std::fmt::Display for Layer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.message)
        }
    }

    impl Error for Layer {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            self.source
                .as_deref()
                .map(|source| source as &(dyn Error + 'static))
        }
    }

    fn layers(messages: &[&'static str]) -> Layer {
        let mut layer = None;
        for message in messages.iter().rev() {
            layer = Some(Layer {
                message,
                source: layer.map(Box::new),
            });
        }
        layer.expect("at least one message")
    }

    #[test]
    fn a_chain_whose_messages_leave_out_their_sources_is_spelled_out_in_full() {
        let error = layers(&["fetching the repodata", "connecting", "connection refused"]);
        assert_eq!(
            chain_message(&error),
            "fetching the repodata: connecting: connection refused"
        );
        assert_eq!(source_chain(&error), ["connecting", "connection refused"]);
    }

    #[test]
    fn a_message_that_already_holds_its_source_is_not_repeated() {
        let error = layers(&["reading index.json: permission denied", "permission denied"]);
        assert_eq!(
            chain_message(&error),
            "reading index.json: permission denied"
        );

        let error = layers(&[
            "installing: linking python: file exists",
            "linking python: file exists",
            "file exists",
        ]);
        assert_eq!(
            chain_message(&error),
            "installing: linking python: file exists"
        );

        let error = layers(&["installing", "linking python: file exists", "file exists"]);
        assert_eq!(
            chain_message(&error),
            "installing: linking python: file exists"
        );
    }

    #[test]
    fn caused_by_keeps_the_source_and_says_why_in_the_detail() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let error = BackendError::caused_by(FailureReason::SpawnFailed, "starting `x`", io);
        let BackendError::Failed { detail, source, .. } = &error else {
            panic!("caused_by makes a Failed: {error:?}");
        };
        assert_eq!(detail, "starting `x`: no such file");
        assert!(source.is_some());
        assert_eq!(error.source_chain(), ["no such file"]);

        let deeper = BackendError::caused_by(
            FailureReason::ProvisionFailed,
            "solving",
            layers(&["the solver failed", "out of memory"]),
        );
        assert_eq!(
            deeper.to_string(),
            "provision-failed: solving: the solver failed: out of memory"
        );
        assert_eq!(
            deeper.source_chain(),
            ["the solver failed", "out of memory"]
        );
    }

    #[test]
    fn with_reason_keeps_the_detail_and_the_source() {
        let io = std::io::Error::other("disk on fire");
        let error = BackendError::caused_by(FailureReason::ChannelUnavailable, "reading", io)
            .with_reason(FailureReason::InstallFailed);
        let BackendError::Failed { reason, detail, .. } = &error else {
            panic!("still a Failed: {error:?}");
        };
        assert_eq!(*reason, FailureReason::InstallFailed);
        assert_eq!(detail, "reading: disk on fire");
        assert_eq!(error.source_chain(), ["disk on fire"]);
    }

    #[test]
    fn an_error_from_a_layer_keeps_its_chain() {
        let boxed: tower::BoxError = Box::new(layers(&["the layer failed", "its cause"]));
        let error = BackendError::from_layer(boxed);
        assert_eq!(
            error.to_string(),
            "backend-error: the layer failed: its cause"
        );
        assert_eq!(error.source_chain(), ["the layer failed", "its cause"]);
    }
}
