//! The one place where a failure with causes becomes a `-31004` error: the chain of causes is
//! logged there, and the wire's `detail` says why.

use std::error::Error;

use crate::store::StoreError;
use wsp_backend::BackendError;
use wsp_protocol::error_chain::{chain_message, source_chain};
use wsp_protocol::validation::Violation;
use wsp_protocol::{error, ErrorObjectOwned, FailureReason};

/// `-31004` with `reason` and `detail`, after logging that `who` failed, with `cause`'s chain
/// of sources (field `caused_by`): a warning when there is one, else at info.
pub(crate) fn execution_failed(
    who: &str,
    reason: &FailureReason,
    detail: &str,
    cause: &dyn Error,
) -> ErrorObjectOwned {
    let chain = source_chain(cause);
    if chain.is_empty() {
        tracing::info!(%reason, detail, "the {who} failed");
    } else {
        tracing::warn!(%reason, detail, caused_by = ?chain, "the {who} failed");
    }
    error::execution_failed(reason, detail, None)
}

/// A backend's failure as its JSON-RPC error.
pub(crate) fn backend_error(e: BackendError) -> ErrorObjectOwned {
    match e {
        BackendError::VersionUnavailable {
            requested,
            available,
        } => error::python_version_unavailable(&requested, &available),
        BackendError::Failed {
            ref reason,
            ref detail,
            ..
        } => execution_failed("backend", reason, detail, &e),
    }
}

/// A store's failure as its JSON-RPC error; anything but a missing id or a taken name is
/// reason [`StateStore`](FailureReason::StateStore).
pub(crate) fn store_error(e: StoreError) -> ErrorObjectOwned {
    match e {
        StoreError::NotFound { id } => error::environment_not_found(&id),
        StoreError::NameConflict { name } => error::name_conflict(&[Violation::new(
            "name",
            "unique",
            format!("an environment named {name:?} already exists"),
        )]),
        other => {
            let detail = chain_message(&other);
            execution_failed("state store", &FailureReason::StateStore, &detail, &other)
        }
    }
}
