//! `environment/create` from a spare environment (see [`crate::spares`]). The backend relabels
//! the spare while, for a spare taken before the request was resolved, the request is
//! resolved again to confirm it. Without packages, the store stages the commit (writes and
//! fsyncs the new index) meanwhile; with packages or a lock, those are installed into the
//! spare, and the commit is staged while the environment is described. Then the commit is
//! published.

use std::future::Future;
use std::path::Path;

use wsp_backend::{BackendError, BoxBackend, RelabelRequest, ResolvedInterpreter};
use wsp_protocol::{CreateParams, EnvironmentDetails};

use super::create::abort_failed;
use super::failure::store_error;
use super::handlers::Answer;
use super::progress::Progress;
use super::spares::{Spare, SpareKey};
use super::Environments;
use crate::store::{CommitFacts, Reservation, StagedCommit, Staging, StoreError};

/// What resolving a create's Python request gave.
pub(crate) type Resolution = Result<Option<ResolvedInterpreter>, BackendError>;

/// How a create from a spare ended.
pub(crate) enum FromSpare {
    /// The answer: the spare committed under the client's name, or an error the usual way
    /// would give as well (the name is taken, the install failed).
    Done(Answer<EnvironmentDetails>),
    /// The spare was not used, and is gone: the create goes the usual way, with this
    /// resolution of its request.
    NotUsed(Resolution),
}

impl Environments {
    /// Creates what `params` ask for from `spare`, made for `key`, if `resolving` resolves the
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
            mut prepared,
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
        let relabel = backend.call(RelabelRequest {
            root: root.clone(),
            name: params.name.clone(),
        });
        let provisioned = format!("Provisioned Python {full_version} with {backend_name}");
        if !params.packages.is_empty() || params.lock.is_some() {
            let (resolved, relabelled) = tokio::join!(resolving, relabel);
            if !self.usable((backend_name, key), &resolved, relabelled, &root) {
                super::spares::discard(reservation).await;
                return FromSpare::NotUsed(resolved);
            }
            // The install takes long: the next spare is made meanwhile, not after the answer,
            // so that a create coming right after this one finds it ready.
            self.refill_spare(key.clone(), params.version_request, true);
            progress.report(provisioned, Some(20)).await;
            // Over at once unless the backend is still preparing the spare for installs.
            let _ = prepared.wait_for(|over| *over).await;
            let target = (root.as_path(), reservation.id.as_str());
            if let Err(error) = self
                .install_requested(backend, target, params, progress)
                .await
            {
                abort_failed(reservation, &root).await;
                return FromSpare::Done(Err(error));
            }
            let staging = stage(reservation, params, facts, swept);
            let created = self.commit_described(backend, &root, staging, progress);
            return FromSpare::Done(created.await);
        }
        let staging = stage(reservation, params, facts, swept);
        let (resolved, staged, relabelled) = tokio::join!(resolving, staging, relabel);
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
        if !self.usable((backend_name, key), &resolved, relabelled, &root) {
            if let Err(error) = staged.abort().await {
                tracing::warn!(%error, root = %root.display(), "removing a spare environment failed");
            }
            return FromSpare::NotUsed(resolved);
        }
        progress.report(provisioned, Some(80)).await;
        FromSpare::Done(self.publish_created(staged, description, progress).await)
    }

    /// Whether the spare of `key` at `root` may be used: relabelled, and `key`'s interpreter
    /// is what the request resolves to. A spare that could not be relabelled refuses `key`.
    fn usable(
        &self,
        (backend_name, key): (&str, &SpareKey),
        resolved: &Resolution,
        relabelled: Result<(), BackendError>,
        root: &Path,
    ) -> bool {
        if let Err(error) = relabelled {
            tracing::info!(%error, root = %root.display(), "a spare environment could not be renamed; creating anew");
            self.inner.spares.refuse(key);
            return false;
        }
        let confirmed =
            matches!(resolved, Ok(Some(now)) if SpareKey::new(backend_name, now) == *key);
        if !confirmed {
            tracing::debug!(root = %root.display(), "the request resolves to another interpreter than its spare's; creating anew");
        }
        confirmed
    }
}

/// Stages the commit of `reservation` under the client's name, sweeping first unless `swept`.
async fn stage(
    reservation: Reservation,
    params: &CreateParams,
    facts: CommitFacts,
    swept: bool,
) -> Result<StagedCommit, StoreError> {
    let staging = Staging {
        name: Some(params.name.clone()),
        sweep_first: !swept,
    };
    reservation.stage_commit(facts, staging).await
}
