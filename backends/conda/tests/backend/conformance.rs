//! The conformance kit against the conda backend, offline: a local channel holding pyenv's
//! 3.11.7 and 3.12.1 as conda packages, and the kit's packages as `noarch: python` ones.

use wsp_backend_conda::{CondaBackend, CondaConfig};
use wsp_conformance::{check_backend, BackendUnderTest, KitPackages, KIT_PACKAGES};
use wsp_testing::conda::{build_local_channel_with, CondaPackage, PythonBuild};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conda_backend_conforms_offline_against_a_local_channel() {
    let channel_dir = tempfile::tempdir().unwrap();
    let builds: Vec<PythonBuild> = ["3.11.7", "3.12.1"]
        .iter()
        .map(|v| PythonBuild::from_pyenv(v).unwrap_or_else(|| panic!("pyenv has Python {v}")))
        .collect();
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
            CondaBackend::new(config)
        })
        .activation_variable("CONDA_PREFIX")
        .packages(KitPackages::Configured),
    )
    .await;
}
