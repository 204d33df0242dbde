//! `environment/lock`, and the install step of `environment/create` with `lock`.
//!
//! A lock uses its environment as a `get` does, and waits for the environment's install turn,
//! so it never reads the packages halfway through an install.

use std::path::Path;

use wsp_backend::{BoxBackend, LockInstallRequest, LockRequest};
use wsp_protocol::params::PackageSource;
use wsp_protocol::{IdParams, Lock};

use super::failure::backend_error;
use super::handlers::Answer;
use super::progress::{Progress, Span};
use super::usage::UseToken;
use super::Environments;

impl Environments {
    pub(super) async fn lock(self, in_use: UseToken, _: IdParams) -> Answer<Lock> {
        let guard = self.hold(in_use).await?;
        let record = guard.record().clone();
        let backend = self.backend(&record.backend)?;
        let _turn = self.install_turn(&record.id, &record.root).await?;
        backend
            .call(LockRequest {
                root: record.root.clone(),
            })
            .await
            .map_err(backend_error)
    }

    /// Installs exactly what `lock` names into the new environment at `root` (id `id`).
    pub(super) async fn install_lock_into(
        &self,
        backend: &BoxBackend,
        (root, id): (&Path, &str),
        lock: Lock,
        source: &PackageSource,
        progress: &Progress,
        span: Span,
    ) -> Answer<()> {
        let _turn = self.install_turn(id, root).await?;
        let source = self.source(source);
        let sandbox = self.install_sandbox(id, root, &source);
        progress
            .forward(span, |sink| {
                backend.call(LockInstallRequest {
                    root: root.to_owned(),
                    environment_id: id.to_owned(),
                    lock,
                    source,
                    progress: sink,
                    sandbox,
                })
            })
            .await
            .map_err(backend_error)
    }
}
