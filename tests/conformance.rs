//! The backend conformance kit against the built-in backends.

use wsp_backend::BoxBackend;
use wsp_conformance::{check_backend, BackendUnderTest};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn venv_backend_conforms() {
    check_backend(BackendUnderTest::new("venv", "3.12", |ctx| {
        let options = wsp_backend_venv::VenvOptions::default();
        BoxBackend::new(wsp_backend_venv::VenvBackend::new(ctx.inventory(), options))
    }))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn venv_backend_installing_with_pip_conforms() {
    check_backend(BackendUnderTest::new("venv", "3.13", |ctx| {
        let options = wsp_backend_venv::VenvOptions {
            seed_cache_dir: Some(ctx.state_dir().join("pip-seed")),
            ..wsp_backend_venv::VenvOptions::default()
        };
        let backend = wsp_backend_venv::VenvBackend::new(ctx.inventory(), options)
            .with_installer(wsp_backend::install::Installer::Pip);
        BoxBackend::new(backend)
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conda_backend_conforms_offline_against_a_local_channel() {
    use wsp_backend_conda::testing::{build_local_channel_with, CondaPackage, PythonBuild};
    use wsp_backend_conda::{CondaBackend, CondaConfig};
    use wsp_conformance::{KitPackages, KIT_PACKAGES};

    let channel_dir = tempfile::tempdir().unwrap();
    let builds: Vec<PythonBuild> = ["3.11.7", "3.12.1"]
        .iter()
        .map(|v| PythonBuild::from_pyenv(v).unwrap_or_else(|| panic!("pyenv has Python {v}")))
        .collect();
    // The install checks' packages, as noarch packages of the channel.
    let packages: Vec<CondaPackage> = KIT_PACKAGES
        .iter()
        .map(|p| {
            p.requires
                .iter()
                .fold(CondaPackage::new(p.name, p.version), |package, needs| {
                    package.depends(needs)
                })
        })
        .collect();
    let url = build_local_channel_with(channel_dir.path(), &builds, &packages)
        .expect("the local channel builds");
    check_backend(
        BackendUnderTest::new("conda", "3.12", move |ctx| {
            let mut config = CondaConfig::new(ctx.state_dir().join("conda-cache"));
            config.channels = vec![url.to_string()];
            BoxBackend::new(CondaBackend::new(config))
        })
        .activation_variable("CONDA_PREFIX")
        .packages(KitPackages::Configured),
    )
    .await;
}
