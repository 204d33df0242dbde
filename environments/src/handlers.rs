//! The handlers of the five environment methods.

use std::future::Future;
use wsp_protocol::FailureReason;

use crate::store::{EnvironmentRecord, Removal};
use serde_json::{json, Value};
use wsp_backend::resolve_cwd_in;
use wsp_backend::{BoxBackend, DescribeRequest, ReleaseRequest, RunRequest};
use wsp_exec::{current_stack, OutputSink, RunOptions};
use wsp_protocol::validation::Violation;
use wsp_protocol::{
    error, results::EnvironmentChange, DeleteAck, EnvironmentDetails, EnvironmentSummary,
    ErrorObjectOwned, ExecuteParams, ExecuteResult, IdParams,
};

use super::failure::{backend_error, store_error};
use super::usage::{DeleteMark, InUse, UseToken};
use super::Environments;
use wsp_middleware::ReadTime;

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
            sandbox: sandboxed.then(|| {
                self.sandbox_policy(wsp_exec::SandboxPolicy::offline(
                    record.root.clone(),
                    self.hidden(),
                ))
            }),
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

    /// `policy` with its private `TMPDIR` in the store's `tmp/`, hidden with the rest of the
    /// state directory (see [`wsp_exec::SandboxPolicy::private_tmp_in`]).
    pub(super) fn sandbox_policy(
        &self,
        policy: wsp_exec::SandboxPolicy,
    ) -> wsp_exec::SandboxPolicy {
        policy.with_private_tmp_in(self.inner.store.private_tmp_dir().to_path_buf())
    }

    pub(crate) async fn sweep(&self) {
        if let Err(e) = self.inner.store.sweep().await {
            crate::store::log_sweep_failure(&e);
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
