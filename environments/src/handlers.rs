//! The handlers of the five environment methods.

use std::future::Future;
use wsp_protocol::FailureReason;

use crate::store::{CommitFacts, EnvironmentRecord, Removal};
use serde_json::{json, Value};
use wsp_backend::resolve_cwd_in;
use wsp_backend::{
    BoxBackend, DescribeRequest, ProvisionRequest, ReleaseRequest, ResolveRequest, RunRequest,
};
use wsp_exec::{current_stack, OutputSink, RunOptions};
use wsp_protocol::validation::Violation;
use wsp_protocol::{
    error, results::EnvironmentChange, CreateParams, DeleteAck, EnvironmentDetails,
    EnvironmentSummary, ErrorObjectOwned, ExecuteParams, ExecuteResult, IdParams,
};

use super::failure::{backend_error, store_error};
use super::install::Packages;
use super::progress::{Progress, Span};
use super::reuse::{Reuse, REUSED};
use super::usage::{DeleteMark, InUse, UseToken};
use super::Environments;
use wsp_middleware::{Notifier, ReadTime};

pub(super) type Answer<T> = Result<T, ErrorObjectOwned>;

impl Environments {
    /// `environment/list` of a request read at `received` (see [`Store::listing`]).
    ///
    /// [`Store::listing`]: crate::store::Store::listing
    pub(super) async fn list(
        self,
        received: Option<std::time::Instant>,
    ) -> Answer<Vec<EnvironmentSummary>> {
        let records = self
            .inner
            .store
            .listing(received)
            .await
            .map_err(store_error)?;
        Ok(records
            .iter()
            .map(|record| EnvironmentSummary {
                id: record.id.clone(),
                name: record.name.clone(),
                python_version: record.python_version.clone(),
            })
            .collect())
    }

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
        // The interpreter is resolved while the store sweeps and reserves, and provisioning
        // builds on it.
        let resolving = async {
            match interpreter {
                Some(known) => Ok(known),
                None => {
                    let python_version = params.version_request;
                    backend.call(ResolveRequest { python_version }).await
                }
            }
        };
        let reserving = async {
            self.sweep().await;
            let store = &self.inner.store;
            store.reserve(&params.name, &backend_name).await
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
        let described = match provisioned {
            Ok(provisioned) => {
                let message = format!(
                    "Provisioned Python {} with {}",
                    provisioned.python_full_version, backend_name
                );
                let done = if installing { 20 } else { 80 };
                progress.report(message, Some(done)).await;
                let packages = Packages {
                    packages: params.packages,
                    source: &params.source,
                    upgrade: false,
                };
                let span = Span {
                    start: 20,
                    span: 70,
                };
                let target = (root.as_path(), reservation.id.as_str());
                let installed = if let Some(lock) = params.lock {
                    self.install_lock_into(backend, target, lock, &params.source, progress, span)
                        .await
                } else if installing {
                    self.install_into(backend, &root, &reservation.id, packages, progress, span)
                        .await
                } else {
                    Ok(())
                };
                match installed {
                    Ok(()) => self
                        .describe(backend, &root)
                        .await
                        .map(|description| (provisioned, description)),
                    Err(e) => Err(e),
                }
            }
            Err(e) => Err(backend_error(e)),
        };
        let (provisioned, description) = match described {
            Ok(both) => both,
            Err(e) => {
                if let Err(abort) = reservation.abort().await {
                    tracing::warn!(error = %abort, root = %root.display(), "removing a failed environment failed");
                }
                return Err(e);
            }
        };
        let message = super::install::found(description.installed_packages.len());
        progress.report(message, Some(95)).await;
        let record = reservation
            .commit(CommitFacts {
                python_version: params.python_version,
                python_full_version: provisioned.python_full_version.to_string(),
                interpreter_path: provisioned.interpreter_path,
                extra: provisioned.extra,
                reuse_key: reuse_key.as_ref().map(|(key, _turn)| key.clone()),
            })
            .await
            .map_err(store_error)?;
        drop(reuse_key);
        self.changed(&record.id, EnvironmentChange::Created);
        let mut details = details(record, description);
        details.extra.insert(REUSED.into(), Value::Bool(false));
        Ok(details)
    }

    /// The read-time part of `get`, `execute`, `install` and `uninstall`: registers the use
    /// of the environment, so a `delete` read later waits for it; `-31001` when a `delete` of
    /// it was read earlier.
    pub(super) fn begin_use(&self, id: &str, read: &ReadTime<'_>) -> Answer<UseToken> {
        self.inner
            .usage
            .begin(id, read)
            .ok_or_else(|| error::environment_not_found(id))
    }

    pub(super) async fn get(self, in_use: UseToken, _: IdParams) -> Answer<EnvironmentDetails> {
        let held = self.hold(in_use).await?;
        let record = held.record().clone();
        let backend = self.backend(&record.backend)?;
        let view = self.view(backend, &record).await?;
        drop(held);
        let mut details = details(record, view.description);
        details
            .extra
            .insert("disk_bytes".into(), Value::from(view.disk_bytes));
        Ok(details)
    }

    /// `environment/execute`, with a place for the output of `stream: true` to go.
    ///
    /// This is the single place where streamed output leaves the handler: when the params say
    /// `stream: true` and `output` is given, every chunk of the command's output is sent to
    /// `output` as it arrives (in order within each stream), and the last one before this
    /// future completes. The caller turns each chunk into an `environment/output` notification
    /// (`wsp_protocol::results::OutputParams` with this request's id) and writes them all
    /// before the response. A full channel slows the command down; it never buffers without
    /// bound. Without `output`, `stream` changes nothing: the result carries the output.
    pub(super) async fn execute_streaming(
        self,
        in_use: UseToken,
        params: ExecuteParams,
        output: Option<OutputSink>,
        interactive: Option<&super::input::Registration>,
    ) -> Answer<ExecuteResult> {
        let guard = self.hold(in_use).await?;
        let record = guard.record();
        let backend = self.backend(&record.backend)?;
        let sandboxed = params
            .sandbox
            .unwrap_or(self.inner.execute_defaults.sandbox);
        // A sandboxed command sees only its environment: no allowed directory admits it.
        let allowed: &[std::path::PathBuf] = if sandboxed {
            &[]
        } else {
            &self.inner.allowed_cwds
        };
        let cwd =
            resolve_cwd_in(&record.root, allowed, params.cwd.as_deref()).map_err(|message| {
                error::invalid_params(&[Violation::new("cwd", "inside_environment", message)])
            })?;
        let options = RunOptions {
            stdin: params.stdin.map(Into::into),
            timeout: params.timeout_ms.map(std::time::Duration::from_millis),
            max_output_bytes: Some(
                params
                    .max_output_bytes
                    .unwrap_or(self.inner.execute_defaults.max_output_bytes),
            ),
            output: output.filter(|_| params.stream),
            limits: params.limits,
            containment: None,
            sandbox: sandboxed
                .then(|| wsp_exec::SandboxPolicy::offline(record.root.clone(), self.hidden())),
            stdin_stream: interactive.map(|registered| registered.stdin.clone()),
            pty: interactive.and_then(|registered| registered.sizes.clone()),
        };
        if options.sandbox.is_some() {
            self.inner
                .store
                .mark_sandboxed(&record.id)
                .await
                .map_err(store_error)?;
        }
        let _changing = self.changing(&record.id);
        backend
            .call(RunRequest {
                root: record.root.clone(),
                environment_id: record.id.clone(),
                argv: params.argv,
                cwd,
                env: params.env,
                options,
            })
            .await
            .map_err(backend_error)
    }

    /// The read-time part of `delete`: refuses an environment this server runs in, and marks
    /// the environment as going away, so every use read after it sees `-31001`.
    pub(super) fn begin_delete(&self, id: &str, read: &ReadTime<'_>) -> Answer<DeleteMark> {
        if current_stack().iter().any(|running| running == id) {
            return Err(error::execution_failed(
                &FailureReason::EnvInUse,
                &format!("{id} is an environment this server runs in; it cannot delete it"),
                Some(json!({ "id": id })),
            ));
        }
        self.inner
            .usage
            .mark_deleting(id, read)
            .ok_or_else(|| error::environment_not_found(id))
    }

    pub(super) fn delete(
        self,
        _mark: DeleteMark,
        params: IdParams,
    ) -> impl Future<Output = Answer<DeleteAck>> {
        let id = params.id;
        async move {
            // Dropped (cancelled) while waiting here or inside `remove`, the delete has changed
            // nothing. `remove` completes in the very poll that takes the environment out of
            // the index, and nothing after it waits: a delete that changed something answers.
            self.inner.usage.wait_unused(&id).await;
            // An environment whose backend this server can't run keeps its files.
            if let Some(record) = self.inner.store.get(&id).await.map_err(store_error)? {
                self.backend(&record.backend)?;
            }
            let removal = self.inner.store.remove(&id).await.map_err(store_error)?;
            self.changed(&id, EnvironmentChange::Deleted);
            tokio::spawn(self.clone().finish_removal(removal));
            Ok(DeleteAck { id: id.clone() })
        }
    }

    /// The rest of a delete past its point of no return, on a task of its own: waits for the
    /// store to delete the files (warning about any it cannot), lets the backend release the
    /// environment, and sweeps.
    pub(super) async fn finish_removal(self, removal: Removal) {
        let backend_name = removal.record.backend.clone();
        let release = ReleaseRequest {
            root: removal.record.root.clone(),
            environment_id: removal.record.id.clone(),
        };
        if let Some(left) = removal.files_deleted().await {
            tracing::warn!(
                id = %release.environment_id,
                directory = %left.root.display(),
                leftovers = %left.path.display(),
                error = %left.error,
                "could not delete the files of the environment in {}; they are left in {} for a later create or delete to remove",
                left.root.display(),
                left.path.display(),
            );
        }
        let id = release.environment_id.clone();
        self.inner.views.forget(&id);
        match self.backend(&backend_name) {
            Ok(backend) => {
                if let Err(e) = backend.call(release).await {
                    tracing::warn!(id = %id, error = %e, "the backend could not release the environment");
                }
            }
            Err(e) => {
                tracing::warn!(id = %id, error = %e.message(), "no backend to release the environment")
            }
        }
        self.sweep().await;
    }

    /// Holds the environment a request registered its use of for the rest of the request
    /// (see [`UseToken::hold`]).
    pub(super) async fn hold(&self, in_use: UseToken) -> Answer<InUse> {
        in_use.hold(&self.inner.store).await.map_err(store_error)
    }

    pub(super) async fn describe(
        &self,
        backend: &BoxBackend,
        root: &std::path::Path,
    ) -> Answer<wsp_backend::Description> {
        backend
            .call(DescribeRequest {
                root: root.to_owned(),
            })
            .await
            .map_err(backend_error)
    }

    /// What no sandboxed command or installer may read: the state directory.
    pub(super) fn hidden(&self) -> Vec<std::path::PathBuf> {
        vec![self.inner.store.dir().to_path_buf()]
    }

    async fn sweep(&self) {
        if let Err(e) = self.inner.store.sweep().await {
            tracing::warn!(error = %e, "sweeping the state directory failed");
        }
    }
}

/// `-32000` `describe-failed`: what `record`'s files hold could not be measured.
pub(super) fn describe_failed(record: &EnvironmentRecord, e: std::io::Error) -> ErrorObjectOwned {
    let detail = format!("cannot measure the files of {}: {e}", record.root.display());
    super::failure::execution_failed("disk use", &FailureReason::DescribeFailed, &detail, &e)
}

pub(super) fn details(
    record: EnvironmentRecord,
    description: wsp_backend::Description,
) -> EnvironmentDetails {
    let mut extra = record.extra;
    extra.insert("backend".into(), Value::String(record.backend));
    extra.insert(
        "path".into(),
        Value::String(record.root.display().to_string()),
    );
    extra.insert(
        "python_full_version".into(),
        Value::String(record.python_full_version),
    );
    EnvironmentDetails {
        id: record.id,
        name: record.name,
        python_version: record.python_version,
        interpreter_path: description.interpreter_path.display().to_string(),
        installed_packages: description.installed_packages,
        extra,
    }
}
