//! `environment/create`: from a spare environment when one fits (see [`crate::spares`]),
//! else by reserving, provisioning, installing and committing.

use std::future::Future;
use std::path::Path;

use serde_json::Value;
use wsp_backend::{BackendError, BoxBackend, ProvisionRequest};
use wsp_backend::{ResolveRequest, ResolvedInterpreter};
use wsp_middleware::Notifier;
use wsp_protocol::{results::EnvironmentChange, CreateParams, EnvironmentDetails};

use super::failure::{backend_error, store_error};
use super::from_spare::FromSpare;
use super::handlers::{details, Answer};
use super::install::Packages;
use super::progress::{Progress, Span};
use super::reuse::{Reuse, REUSED};
use super::spares::SpareKey;
use super::Environments;
use crate::store::{CommitFacts, EnvironmentRecord, Reservation, ReuseTurn};
use crate::store::{StagedCommit, Staging, StoreError};

/// The reuse key a create commits its environment with, and the turn it holds until then.
type ReuseKey = Option<(String, ReuseTurn)>;

impl Environments {
    /// `environment/create`; with `packages`, they are installed before the environment is
    /// committed, and `$/progress` goes through `notifier` for a `work_done_token`.
    pub(super) async fn create(
        self,
        params: CreateParams,
        notifier: Option<Notifier>,
    ) -> Answer<EnvironmentDetails> {
        let progress = Progress::new(notifier, params.work_done_token.clone());
        let title = format!("Creating environment {}", params.name);
        let first = format!("Provisioning Python {}", params.python_version);
        progress.begin(title, Some(first)).await;
        let created = self.create_reported(params, &progress).await;
        let end = match &created {
            Ok(details) if details.extra.get(REUSED) == Some(&Value::Bool(true)) => {
                format!("Reused {} ({})", details.id, details.name)
            }
            Ok(details) => format!("Created {} ({})", details.id, details.name),
            Err(_) => "The create failed; nothing was left behind".to_owned(),
        };
        progress.end(end).await;
        created
    }

    async fn create_reported(
        &self,
        params: CreateParams,
        progress: &Progress,
    ) -> Answer<EnvironmentDetails> {
        let backend_name = match &params.backend {
            Some(name) => name.clone(),
            None => self.inner.backends.default_name().to_owned(),
        };
        let backend = self.backend(&backend_name)?;
        let (reuse_key, interpreter) = match params.reuse {
            true => match self.reuse(backend, &backend_name, &params).await? {
                Reuse::Found(details) => return Ok(*details),
                Reuse::Build {
                    key,
                    turn,
                    interpreter,
                } => (Some((key, turn)), Some(interpreter)),
            },
            false => (None, None),
        };
        let python_version = params.version_request;
        let installs = !params.packages.is_empty() || params.lock.is_some();
        let resolving = async move {
            match interpreter {
                Some(known) => Ok(known),
                None => backend.call(ResolveRequest { python_version }).await,
            }
        };
        if !self.inner.spares.may_serve(&backend_name) {
            let fresh = (backend_name.as_str(), backend);
            return self
                .create_fresh(fresh, params, reuse_key, resolving, (false, progress))
                .await;
        }
        let with = (backend_name.as_str(), backend);
        let reused = reuse_key.as_ref().map(|(key, _turn)| key.clone());
        // The spare an earlier create of this request resolved to is taken at once, and used
        // while the request is resolved again to confirm it (see `from_spare`).
        let guessed = match self.name_is_free(&params.name).await {
            true => {
                let spares = &self.inner.spares;
                spares.take_guessed(&backend_name, python_version).await
            }
            false => None,
        };
        if let Some((key, spare)) = guessed {
            let taken = (&key, spare);
            let request = (&params, reused.clone());
            let from_spare = self
                .create_from_spare(with, taken, request, (resolving, false), progress)
                .await;
            let resolved = match from_spare {
                FromSpare::Done(created) => {
                    if created.is_ok() {
                        self.refill_spare(key, python_version, installs);
                    }
                    return created;
                }
                FromSpare::NotUsed(resolved) => resolved,
            };
            let key = match &resolved {
                Ok(Some(interpreter)) => Some(SpareKey::new(&backend_name, interpreter)),
                _ => None,
            };
            let resolving = std::future::ready(resolved);
            let fresh = self.create_fresh(with, params, reuse_key, resolving, (true, progress));
            let created = fresh.await;
            if let (Ok(_), Some(key)) = (&created, key) {
                self.refill_spare(key, python_version, installs);
            }
            return created;
        }
        // Otherwise a spare is found by its interpreter, so that is resolved first, beside
        // the sweep.
        let finding = async {
            let resolved = resolving.await;
            let key = match &resolved {
                Ok(Some(interpreter)) => Some(SpareKey::new(&backend_name, interpreter)),
                _ => None,
            };
            let spare = match &key {
                // A name taken already: the usual way answers the conflict.
                Some(key) if self.name_is_free(&params.name).await => {
                    self.inner.spares.take(key).await
                }
                _ => None,
            };
            (resolved, key, spare)
        };
        let ((), (resolved, key, spare)) = tokio::join!(self.sweep(), finding);
        let resolved = match (spare, &key) {
            (Some(spare), Some(key)) => {
                let known = std::future::ready(resolved);
                let request = (&params, reused);
                let from_spare = self
                    .create_from_spare(with, (key, spare), request, (known, true), progress)
                    .await;
                match from_spare {
                    FromSpare::Done(created) => Err(created),
                    FromSpare::NotUsed(resolved) => Ok(resolved),
                }
            }
            _ => Ok(resolved),
        };
        let created = match resolved {
            Err(created) => created,
            Ok(resolved) => {
                let resolving = std::future::ready(resolved);
                self.create_fresh(with, params, reuse_key, resolving, (true, progress))
                    .await
            }
        };
        if let (Ok(_), Some(key)) = (&created, key) {
            self.refill_spare(key, python_version, installs);
        }
        created
    }

    /// Whether no committed environment has `name` (as far as the cached index says).
    async fn name_is_free(&self, name: &str) -> bool {
        match self.inner.store.listing(None).await {
            Ok(listing) => listing.iter().all(|record| record.name != name),
            Err(_) => false,
        }
    }

    /// The create the usual way: sweeps (unless `swept`) and reserves while `resolving`
    /// resolves the interpreter, then provisions, installs, describes and commits.
    async fn create_fresh(
        &self,
        (backend_name, backend): (&str, &BoxBackend),
        params: CreateParams,
        reuse_key: ReuseKey,
        resolving: impl std::future::Future<Output = Result<Option<ResolvedInterpreter>, BackendError>>,
        (swept, progress): (bool, &Progress),
    ) -> Answer<EnvironmentDetails> {
        let reserving = async {
            if !swept {
                self.sweep().await;
            }
            let store = &self.inner.store;
            store.reserve(&params.name, backend_name).await
        };
        let (interpreter, reservation) = tokio::join!(resolving, reserving);
        let reservation = reservation.map_err(store_error)?;
        let root = reservation.root.clone();
        let provisioned = match interpreter {
            Ok(interpreter) => {
                backend
                    .call(ProvisionRequest {
                        root: root.clone(),
                        name: params.name.clone(),
                        python_version: params.version_request,
                        interpreter,
                    })
                    .await
            }
            Err(unresolved) => Err(unresolved),
        };
        let installing = !params.packages.is_empty() || params.lock.is_some();
        let installed = match provisioned {
            Ok(provisioned) => {
                let message = format!(
                    "Provisioned Python {} with {}",
                    provisioned.python_full_version, backend_name
                );
                let done = if installing { 20 } else { 80 };
                progress.report(message, Some(done)).await;
                let target = (root.as_path(), reservation.id.as_str());
                let installed = self.install_requested(backend, target, &params, progress);
                installed.await.map(|()| provisioned)
            }
            Err(e) => Err(backend_error(e)),
        };
        let provisioned = match installed {
            Ok(provisioned) => provisioned,
            Err(e) => {
                abort_failed(reservation, &root).await;
                return Err(e);
            }
        };
        let facts = CommitFacts {
            python_version: params.python_version,
            python_full_version: provisioned.python_full_version.to_string(),
            interpreter_path: provisioned.interpreter_path,
            extra: provisioned.extra,
            reuse_key: reuse_key.as_ref().map(|(key, _turn)| key.clone()),
        };
        let staging = reservation.stage_commit(facts, Staging::default());
        let created = self
            .commit_described(backend, &root, staging, progress)
            .await;
        drop(reuse_key);
        created
    }

    /// Stages a create's commit (`staging`: the new index written and fsynced) while the
    /// environment at `root` is described, and publishes it once the description is in hand;
    /// if the describe fails, the staged commit is aborted and the create answers its error.
    pub(super) async fn commit_described(
        &self,
        backend: &BoxBackend,
        root: &Path,
        staging: impl Future<Output = Result<StagedCommit, StoreError>>,
        progress: &Progress,
    ) -> Answer<EnvironmentDetails> {
        let (staged, described) = tokio::join!(staging, self.describe(backend, root));
        let staged = staged.map_err(store_error)?;
        match described {
            Ok(description) => self.publish_created(staged, description, progress).await,
            Err(e) => {
                if let Err(abort) = staged.abort().await {
                    tracing::warn!(error = %abort, root = %root.display(), "removing a failed environment failed");
                }
                Err(e)
            }
        }
    }

    /// Publishes a create's staged commit, and answers with `description`.
    pub(super) async fn publish_created(
        &self,
        staged: StagedCommit,
        description: wsp_backend::Description,
        progress: &Progress,
    ) -> Answer<EnvironmentDetails> {
        let message = super::install::found(description.installed_packages.len());
        progress.report(message, Some(95)).await;
        let record = staged.publish().await.map_err(store_error)?;
        Ok(self.created(record, description))
    }

    /// Installs what a create's `params` ask for (its packages or its lock), if anything, into
    /// the environment at `root`, reserved as `id`.
    pub(super) async fn install_requested(
        &self,
        backend: &BoxBackend,
        (root, id): (&Path, &str),
        params: &CreateParams,
        progress: &Progress,
    ) -> Answer<()> {
        let span = Span {
            start: 20,
            span: 70,
        };
        if let Some(lock) = &params.lock {
            let (lock, source) = (lock.clone(), &params.source);
            return self
                .install_lock_into(backend, (root, id), lock, source, progress, span)
                .await;
        }
        if params.packages.is_empty() {
            return Ok(());
        }
        let packages = Packages {
            packages: params.packages.clone(),
            source: &params.source,
            upgrade: false,
        };
        self.install_into(backend, root, id, packages, progress, span)
            .await
    }

    /// The answer of a create that committed `record`, and the change it makes known.
    fn created(
        &self,
        record: EnvironmentRecord,
        description: wsp_backend::Description,
    ) -> EnvironmentDetails {
        self.changed(&record.id, EnvironmentChange::Created);
        let mut details = details(record, description);
        details.extra.insert(REUSED.into(), Value::Bool(false));
        details
    }
}

/// Aborts the reservation of a create that failed; a failure to remove it is only logged.
pub(super) async fn abort_failed(reservation: Reservation, root: &Path) {
    if let Err(error) = reservation.abort().await {
        tracing::warn!(%error, root = %root.display(), "removing a failed environment failed");
    }
}
