//! A backend of your own: the built-in venv backend behind a quota, proven by the conformance
//! kit.
//!
//! A backend is a `wsp_backend::Backend`: named async methods, one per step. This one wraps
//! another backend and refuses to provision once the state directory already holds `max`
//! environments, answering the client with `-31004` and `data.reason = "quota-exceeded"`;
//! every other step is the inner backend's. `BackendService` then makes it a tower service, so
//! an ordinary tower layer (`ConcurrencyLimitLayer`) wraps it with no glue code: the server
//! does not care what is inside.
//!
//! `cargo run --example quota_backend` runs the whole conformance kit against the wrapped
//! backend, then shows the quota at work with a limit of one environment:
//!
//! ```text
//! conformance [quota-venv] create_get_and_list_have_the_documented_shapes: ok
//! ...
//! first create: env-3f2a9c81d07e
//! second create: -31004 {"detail":"this server allows 1 environment(s)","reason":"quota-exceeded"}
//! ```

use std::path::Path;
use wsp_testing::ClientExt;

use serde_json::json;
use tower::limit::ConcurrencyLimitLayer;
use tower::Layer;
use wsp_backend::{Backend, BackendError, BackendService, BoxBackend};
use wsp_backend::{DescribeRequest, Description, ProvisionRequest, Provisioned};
use wsp_backend::{
    LockInstallRequest, LockRequest, ReleaseRequest, ResolveRequest, ResolvedInterpreter,
    RunRequest,
};
use wsp_conformance::{check_backend, BackendUnderTest, Client, KitContext};
use wsp_install::{InstallRequest, UninstallRequest};
use wsp_protocol::{ExecuteResult, FailureReason};

/// Refuses to provision past `max` environments in the state directory.
struct Quota<B> {
    inner: B,
    max: usize,
}

/// How many environments (live or being created) sit beside the one at `root`.
fn environments_beside(root: &Path) -> usize {
    let Some(parent) = root.parent() else {
        return 0;
    };
    std::fs::read_dir(parent)
        .map(|entries| entries.flatten().filter(|e| e.path() != root).count())
        .unwrap_or(0)
}

impl<B: Backend> Backend for Quota<B> {
    async fn provision(&self, request: ProvisionRequest) -> Result<Provisioned, BackendError> {
        if environments_beside(&request.root) >= self.max {
            return Err(BackendError::failed(
                FailureReason::custom("quota-exceeded"),
                format!("this server allows {} environment(s)", self.max),
            ));
        }
        self.inner.provision(request).await
    }

    // A wrapper forwards every step it leaves alone (the defaults are for venvs of its own).
    async fn describe(&self, request: DescribeRequest) -> Result<Description, BackendError> {
        self.inner.describe(request).await
    }

    async fn run(&self, request: RunRequest) -> Result<ExecuteResult, BackendError> {
        self.inner.run(request).await
    }

    async fn install(&self, request: InstallRequest) -> Result<(), BackendError> {
        self.inner.install(request).await
    }

    async fn uninstall(&self, request: UninstallRequest) -> Result<(), BackendError> {
        self.inner.uninstall(request).await
    }

    async fn release(&self, request: ReleaseRequest) -> Result<(), BackendError> {
        self.inner.release(request).await
    }

    async fn lock(&self, request: LockRequest) -> Result<wsp_protocol::Lock, BackendError> {
        self.inner.lock(request).await
    }

    async fn install_lock(&self, request: LockInstallRequest) -> Result<(), BackendError> {
        self.inner.install_lock(request).await
    }

    async fn resolve_interpreter(
        &self,
        request: ResolveRequest,
    ) -> Result<Option<ResolvedInterpreter>, BackendError> {
        self.inner.resolve_interpreter(request).await
    }
}

/// The venv backend behind a quota of `max` and at most four requests at once.
fn quota_venv(ctx: &KitContext, max: usize) -> BoxBackend {
    let venv = wsp_backend_venv::VenvBackend::new(ctx.inventory(), Default::default());
    let quota = BackendService::new(Quota { inner: venv, max });
    BoxBackend::new(ConcurrencyLimitLayer::new(4).layer(quota))
}

#[tokio::main]
async fn main() {
    let kit = BackendUnderTest::new("quota-venv", "3.12", |ctx| quota_venv(ctx, 10));
    check_backend(kit).await;

    let demo = BackendUnderTest::new("quota-venv", "3.12", |ctx| quota_venv(ctx, 1));
    let fixture = wsp_conformance::Fixture::for_backend(&demo);
    let mut client: Client = fixture.client().await;
    let first = client
        .ok(
            "environment/create",
            json!({"name": "one", "python_version": "3.12"}),
        )
        .await;
    println!("first create: {}", first["id"].as_str().unwrap_or("?"));
    let second = client
        .err(
            "environment/create",
            json!({"name": "two", "python_version": "3.12"}),
        )
        .await;
    println!("second create: {} {}", second["code"], second["data"]);
    assert_eq!(second["data"]["reason"], "quota-exceeded");
}
