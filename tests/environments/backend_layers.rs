//! A backend wrapped in ordinary tower layers plugs into the server with no glue code, and
//! still passes the conformance kit.

use std::time::Duration;
use wsp_testing::ClientExt;

use serde_json::json;
use tower::limit::{ConcurrencyLimitLayer, RateLimitLayer};
use tower::timeout::TimeoutLayer;
use tower::ServiceBuilder;
use wsp_backend::{BackendService, BoxBackend};
use wsp_conformance::{check_backend, BackendUnderTest, Client, Fixture};

fn venv(ctx: &wsp_conformance::KitContext) -> BackendService<wsp_backend_venv::VenvBackend> {
    BackendService::new(wsp_backend_venv::VenvBackend::new(
        ctx.inventory(),
        Default::default(),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn venv_behind_a_timeout_a_rate_limit_and_a_concurrency_limit_conforms() {
    check_backend(BackendUnderTest::new("venv", "3.12", |ctx| {
        let layered = ServiceBuilder::new()
            .layer(TimeoutLayer::new(Duration::from_secs(120)))
            .layer(RateLimitLayer::new(200, Duration::from_secs(1)))
            .layer(ConcurrencyLimitLayer::new(2))
            .service(venv(ctx));
        BoxBackend::new(layered)
    }))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backend_timeout_is_31004_timeout_and_leaves_nothing() {
    let too_quick = BackendUnderTest::new("venv", "3.12", |ctx| {
        BoxBackend::new(tower::Layer::layer(
            &TimeoutLayer::new(Duration::from_nanos(1)),
            venv(ctx),
        ))
    });
    let fixture = Fixture::for_backend(&too_quick);
    let mut client: Client = fixture.client().await;
    let error = client
        .err(
            "environment/create",
            json!({"name": "slow", "python_version": "3.12"}),
        )
        .await;
    assert_eq!(error["code"], -31004, "{error}");
    assert_eq!(error["data"]["reason"], "timeout");
    assert_eq!(client.ok("environment/list", json!(null)).await, json!([]));
    let left = std::fs::read_dir(fixture.state_dir.join("environments"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(left, 0, "the partial environment was removed");
}
