//! `environment/install` and `environment/uninstall`, and the install step of
//! `environment/create` with `packages`.
//!
//! An install uses its environment as a `get` or an `execute` does (a `delete` read after it
//! waits for it), and installs into one environment run one at a time: in this process in the
//! order they got their turn, across processes through the environment's install lock.

use std::path::Path;
use wsp_protocol::FailureReason;

use wsp_backend::{BoxBackend, InstallRequest, SandboxPolicy, UninstallRequest};
use wsp_install::InstallSource;
use wsp_protocol::params::PackageSource;
use wsp_protocol::results::EnvironmentChange;
use wsp_protocol::{EnvironmentDetails, InstallParams, UninstallParams};

use super::failure::{backend_error, execution_failed, store_error};
use super::handlers::{details, Answer};
use super::install_turns::InstallTurn;
use super::progress::{Progress, Span};
use super::usage::UseToken;
use super::Environments;
use wsp_middleware::Notifier;

/// What to install, for [`Environments::install_into`].
pub(super) struct Packages<'a> {
    pub(super) packages: Vec<String>,
    pub(super) source: &'a PackageSource,
    pub(super) upgrade: bool,
}

impl Environments {
    pub(super) async fn install(
        self,
        in_use: UseToken,
        params: InstallParams,
        notifier: Option<Notifier>,
    ) -> Answer<EnvironmentDetails> {
        let guard = self.hold(in_use).await?;
        let record = guard.record().clone();
        let backend = self.backend(&record.backend)?;
        self.stop_reuse(&record.id).await?;
        let _changing = self.changing(&record.id);
        let progress = Progress::new(notifier, params.work_done_token.clone());
        let count = params.packages.len();
        let title = format!(
            "Installing {count} package{} into {}",
            if count == 1 { "" } else { "s" },
            record.name
        );
        progress.begin(title, Some(params.packages.join(" "))).await;
        let packages = Packages {
            packages: params.packages,
            source: &params.source,
            upgrade: params.upgrade,
        };
        let installed = self
            .install_into(
                backend,
                &record.root,
                &record.id,
                packages,
                &progress,
                Span::WHOLE,
            )
            .await;
        // Sent whether or not the install succeeded: a failed one may have changed packages.
        self.changed(&record.id, EnvironmentChange::Packages);
        let described = match installed {
            Ok(()) => self.describe(backend, &record.root).await,
            Err(e) => Err(e),
        };
        let end = match &described {
            Ok(description) => format!(
                "Installed into {}: {}",
                record.name,
                found(description.installed_packages.len())
            ),
            Err(_) => "The install failed; what pip or uv installed before failing may be left (`environment/get` lists the packages)".to_owned(),
        };
        progress.end(end).await;
        Ok(details(record, described?))
    }

    pub(super) async fn uninstall(
        self,
        in_use: UseToken,
        params: UninstallParams,
    ) -> Answer<EnvironmentDetails> {
        let guard = self.hold(in_use).await?;
        let record = guard.record().clone();
        let backend = self.backend(&record.backend)?;
        self.stop_reuse(&record.id).await?;
        let _changing = self.changing(&record.id);
        let _turn = self.install_turn(&record.id, &record.root).await?;
        let sandbox = self.confines_installs(&record.id).then(|| {
            self.sandbox_policy(wsp_install::uninstall_sandbox(
                record.root.clone(),
                self.hidden(),
            ))
        });
        let uninstalled = backend
            .call(UninstallRequest {
                root: record.root.clone(),
                environment_id: record.id.clone(),
                packages: params.packages,
                sandbox,
            })
            .await;
        self.changed(&record.id, EnvironmentChange::Packages);
        uninstalled.map_err(backend_error)?;
        let description = self.describe(backend, &record.root).await?;
        Ok(details(record, description))
    }

    /// Installs into the environment at `root` (id `id`) on its turn, the installer's steps
    /// reported through `progress` within `span`.
    pub(super) async fn install_into(
        &self,
        backend: &BoxBackend,
        root: &Path,
        id: &str,
        packages: Packages<'_>,
        progress: &Progress,
        span: Span,
    ) -> Answer<()> {
        let _turn = self.install_turn(id, root).await?;
        let source = self.source(packages.source);
        let sandbox = self.install_sandbox(id, root, &source);
        progress
            .forward(span, |sink| {
                backend.call(InstallRequest {
                    root: root.to_owned(),
                    environment_id: id.to_owned(),
                    packages: packages.packages,
                    source,
                    upgrade: packages.upgrade,
                    progress: sink,
                    sandbox,
                })
            })
            .await
            .map_err(backend_error)
    }

    /// Makes `id` no longer reusable before it is changed: a create with `reuse` must not
    /// answer with it from now on.
    async fn stop_reuse(&self, id: &str) -> Answer<()> {
        self.inner.store.forget_reuse(id).await.map_err(store_error)
    }

    /// Whether installs into `id` run sandboxed: under `wsp serve --sandbox`, and once the
    /// environment has run sandboxed code, whose files it may have planted (see
    /// `wsp_install::install_sandbox`).
    fn confines_installs(&self, id: &str) -> bool {
        self.inner.execute_defaults.sandbox || self.inner.store.was_sandboxed(id)
    }

    /// The sandbox an install into `id` at `root` from `source` runs in, when installs into it
    /// are confined.
    pub(super) fn install_sandbox(
        &self,
        id: &str,
        root: &Path,
        source: &InstallSource,
    ) -> Option<SandboxPolicy> {
        self.confines_installs(id).then(|| {
            self.sandbox_policy(wsp_install::install_sandbox(
                root.to_owned(),
                self.hidden(),
                source,
            ))
        })
    }

    /// The request's package source over the server's defaults: its `find_links` after the
    /// server's, its `index_url` and `no_index` instead of the server's.
    pub(super) fn source(&self, request: &PackageSource) -> InstallSource {
        let defaults = &self.inner.install_defaults;
        let mut find_links = defaults.find_links.clone();
        find_links.extend(request.find_links.iter().cloned());
        InstallSource {
            find_links,
            index_url: request
                .index_url
                .clone()
                .or_else(|| defaults.index_url.clone()),
            no_index: request.no_index.unwrap_or(defaults.no_index),
        }
    }
}

impl Environments {
    /// Waits for environment `id`'s install turn (see [`crate::install_turns`]).
    pub(super) async fn install_turn(&self, id: &str, root: &Path) -> Answer<InstallTurn> {
        self.inner.turns.take(id, root).await.map_err(|e| {
            let detail = format!("cannot take the install lock of {}: {e}", root.display());
            execution_failed("install lock", &FailureReason::InstallFailed, &detail, &e)
        })
    }
}

/// `Found N installed package(s)`.
pub(super) fn found(count: usize) -> String {
    let s = if count == 1 { "" } else { "s" };
    format!("Found {count} installed package{s}")
}
