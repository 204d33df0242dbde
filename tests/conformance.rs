//! The backend conformance kit against the built-in backends.

use wsp::conformance::{check_backend, BackendUnderTest};
use wsp_backend::BoxBackend;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn venv_backend_conforms() {
    check_backend(BackendUnderTest::new("venv", "3.12", |ctx| {
        let options = wsp_backend_venv::VenvOptions::default();
        BoxBackend::new(wsp_backend_venv::VenvBackend::new(ctx.inventory(), options))
    }))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn venv_backend_in_stdlib_mode_conforms() {
    check_backend(BackendUnderTest::new("venv", "3.11", |ctx| {
        let options = wsp_backend_venv::VenvOptions {
            mode: wsp_backend_venv::VenvMode::Stdlib,
            ..wsp_backend_venv::VenvOptions::default()
        };
        BoxBackend::new(wsp_backend_venv::VenvBackend::new(ctx.inventory(), options))
    }))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uv_backend_conforms() {
    check_backend(BackendUnderTest::new("uv", "3.12", |ctx| {
        BoxBackend::new(wsp_backend_uv::UvBackend::new(None, ctx.inventory()))
    }))
    .await;
}
