//! The conformance kit against the uv backend, with the first `uv` on `PATH` (`.ci/run` puts
//! uv 0.13.9 there from `target/ci-tools`).

use wsp_backend_uv::UvBackend;
use wsp_conformance::{check_backend, BackendUnderTest};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uv_backend_conforms() {
    check_backend(BackendUnderTest::new("uv", "3.12", |ctx| {
        UvBackend::new(None, ctx.inventory())
    }))
    .await;
}
