//! The conformance kit against the venv backend: natively written venvs, venvs installing with
//! their own pip, and venvs written by `python -m venv`.

use wsp_backend_venv::{VenvBackend, VenvMode, VenvOptions};
use wsp_conformance::{check_backend, BackendUnderTest};
use wsp_install::Installer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn venv_backend_conforms() {
    check_backend(BackendUnderTest::new("venv", "3.12", |ctx| {
        VenvBackend::new(ctx.inventory(), VenvOptions::default())
    }))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn venv_backend_installing_with_pip_conforms() {
    // One seed cache for every check, as one server has: filling it is the seed tests' subject,
    // and `ensurepip` in each check's fresh state directory made this kit take 80 s, not 32 s.
    let seed_cache =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("wsp-venv-kit-seed-cache");
    check_backend(BackendUnderTest::new("venv", "3.13", move |ctx| {
        let options = VenvOptions {
            seed_cache_dir: Some(seed_cache.clone()),
            ..VenvOptions::default()
        };
        VenvBackend::new(ctx.inventory(), options).with_installer(Installer::Pip)
    }))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn venv_backend_in_stdlib_mode_conforms() {
    check_backend(BackendUnderTest::new("venv", "3.11", |ctx| {
        let options = VenvOptions {
            mode: VenvMode::Stdlib,
            ..VenvOptions::default()
        };
        VenvBackend::new(ctx.inventory(), options)
    }))
    .await;
}
