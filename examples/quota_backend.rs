//! A backend of your own: the built-in venv backend behind a quota, proven by the conformance
//! kit.
//!
//! A backend is any `tower::Service<BackendRequest, Response = BackendResponse>` whose error
//! converts into `tower::BoxError`. This one wraps another backend and refuses to provision
//! once the state directory already holds `max` environments, answering the client with
//! `-31004` and `data.reason = "quota-exceeded"`. Everything else passes straight through. It
//! is then wrapped in an ordinary tower layer (`ConcurrencyLimitLayer`) with no glue code: the
//! server does not care what is inside.
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

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::task::{Context, Poll};
use wsp_protocol::FailureReason;

use serde_json::json;
use tower::limit::ConcurrencyLimitLayer;
use tower::{BoxError, Layer, Service};
use wsp_backend::{BackendError, BackendRequest, BackendResponse, BoxBackend};
use wsp_conformance::{check_backend, BackendUnderTest, Client, KitContext};

/// Refuses to provision past `max` environments in the state directory.
#[derive(Clone)]
struct Quota<S> {
    inner: S,
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

impl<S> Service<BackendRequest> for Quota<S>
where
    S: Service<BackendRequest, Response = BackendResponse>,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    type Response = BackendResponse;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<BackendResponse, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: BackendRequest) -> Self::Future {
        if let BackendRequest::Provision(provision) = &request {
            if environments_beside(&provision.root) >= self.max {
                let refused = BackendError::failed(
                    FailureReason::custom("quota-exceeded"),
                    format!("this server allows {} environment(s)", self.max),
                );
                return Box::pin(async move { Err(refused.into()) });
            }
        }
        let response = self.inner.call(request);
        Box::pin(async move { response.await.map_err(Into::into) })
    }
}

/// The venv backend behind a quota of `max` and at most four requests at once.
fn quota_venv(ctx: &KitContext, max: usize) -> BoxBackend {
    let venv = wsp_backend_venv::VenvBackend::new(ctx.inventory(), Default::default());
    let limited = ConcurrencyLimitLayer::new(4).layer(venv);
    BoxBackend::new(Quota {
        inner: limited,
        max,
    })
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
