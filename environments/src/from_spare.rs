//! `environment/create` from a spare environment (see [`crate::spares`]): the backend relabels
//! the spare while the store stages its commit (writes and fsyncs the new index) and, for a
//! spare taken before the request was resolved, while the interpreter is resolved to confirm
//! it; then the commit is published.

use std::future::Future;

use futures::FutureExt;

use wsp_backend::{BackendError, BoxBackend, RelabelRequest, ResolvedInterpreter};
use wsp_protocol::{CreateParams, EnvironmentDetails};

use super::failure::store_error;
use super::handlers::Answer;
use super::progress::Progress;
use super::spares::{Spare, SpareKey};
use super::Environments;
use crate::store::{CommitFacts, StoreError};

/// What resolving a create's Python request gave.
pub(crate) type Resolution = Result<Option<ResolvedInterpreter>, BackendError>;

/// How a create from a spare ended.
pub(crate) enum FromSpare {
    /// The answer: the spare committed under the client's name, or an error the usual way
    /// would give as well (the name is taken).
    Done(Answer<EnvironmentDetails>),
    /// The spare was not used, and is gone: the create goes the usual way, with this
    /// resolution of its request.
    NotUsed(Resolution),
}

impl Environments {
    /// Commits `spare`, made for `key`, under the client's name, if `resolving` resolves the
    /// request to `key`'s interpreter and the backend can relabel it (if not, `key` gets no
    /// more spares). Unless `swept`, the store is swept first, as every create sweeps it;
    /// only the commit waits for that.
    pub(crate) async fn create_from_spare(
        &self,
        (backend_name, backend): (&str, &BoxBackend),
        (key, spare): (&SpareKey, Spare),
        (params, reuse_key): (&CreateParams, Option<String>),
        (resolving, swept): (impl Future<Output = Resolution>, bool),
        progress: &Progress,
    ) -> FromSpare {
        let Spare {
            reservation,
            provisioned,
            description,
        } = spare;
        let root = reservation.root.clone();
        let full_version = provisioned.python_full_version;
        let facts = CommitFacts {
            python_version: params.python_version.clone(),
            python_full_version: full_version.to_string(),
            interpreter_path: provisioned.interpreter_path,
            extra: provisioned.extra,
            reuse_key,
        };
        let relabel = RelabelRequest {
            root: root.clone(),
            name: params.name.clone(),
        };
        let name = params.name.clone();
        let staging = match swept {
            true => reservation.stage_commit_as(name, facts).boxed(),
            false => reservation.sweep_then_stage_commit_as(name, facts).boxed(),
        };
        let (resolved, staged, relabelled) =
            tokio::join!(resolving, staging, backend.call(relabel));
        let staged = match staged {
            Ok(staged) => staged,
            Err(error @ StoreError::NameConflict { .. }) => {
                return FromSpare::Done(Err(store_error(error)));
            }
            Err(error) => {
                tracing::info!(%error, root = %root.display(), "a spare environment could not be committed; creating anew");
                return FromSpare::NotUsed(resolved);
            }
        };
        let confirmed =
            matches!(&resolved, Ok(Some(now)) if SpareKey::new(backend_name, now) == *key);
        let unused = match relabelled {
            Err(error) => {
                tracing::info!(%error, root = %root.display(), "a spare environment could not be renamed; creating anew");
                self.inner.spares.refuse(key);
                true
            }
            Ok(()) if !confirmed => {
                tracing::debug!(root = %root.display(), "the request resolves to another interpreter than its spare's; creating anew");
                true
            }
            Ok(()) => false,
        };
        if unused {
            if let Err(error) = staged.abort().await {
                tracing::warn!(%error, root = %root.display(), "removing a spare environment failed");
            }
            return FromSpare::NotUsed(resolved);
        }
        let message = format!("Provisioned Python {full_version} with {backend_name}");
        progress.report(message, Some(80)).await;
        let message = super::install::found(description.installed_packages.len());
        progress.report(message, Some(95)).await;
        let published = staged.publish().await.map_err(store_error);
        FromSpare::Done(published.map(|record| self.created(record, description)))
    }
}
