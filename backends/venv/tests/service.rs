//! `VenvBackend` as a tower service over a real interpreter inventory (pyenv only).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tower::{Service, ServiceExt};
use wsp_backend::interpreters::{Inventory, InventoryConfig};
use wsp_backend::{
    BackendError, BackendRequest, BackendResponse, BoxBackend, DescribeRequest, ProvisionRequest,
    RemoveRequest, RunRequest,
};
use wsp_backend_venv::{VenvBackend, VenvOptions};
use wsp_protocol::FailureReason;

fn backend(options: VenvOptions) -> BoxBackend {
    let pyenv_root = common::pyenv_versions()
        .parent()
        .expect("versions has a parent")
        .to_path_buf();
    let inventory = Inventory::new(InventoryConfig {
        pyenv_root: Some(pyenv_root),
        ..InventoryConfig::default()
    });
    BoxBackend::new(VenvBackend::new(inventory, options))
}

async fn call(
    backend: &mut BoxBackend,
    request: BackendRequest,
) -> Result<BackendResponse, BackendError> {
    backend
        .ready()
        .await
        .expect("ready")
        .call(request)
        .await
        .map_err(|error| match error.downcast::<BackendError>() {
            Ok(error) => *error,
            Err(other) => panic!("not a BackendError: {other}"),
        })
}

fn provision(root: &Path, name: &str, version: &str) -> BackendRequest {
    BackendRequest::Provision(ProvisionRequest {
        root: root.to_path_buf(),
        name: name.to_owned(),
        python_version: version.parse().expect("a version request"),
    })
}

fn empty_root(dir: &Path) -> PathBuf {
    let root = dir.join("env");
    std::fs::create_dir(&root).expect("root");
    root
}

#[tokio::test]
async fn provision_describe_run_and_remove() {
    let mut backend = backend(VenvOptions::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let root = empty_root(dir.path());
    let newest_312 = common::python("3.12").version;

    let response = call(&mut backend, provision(&root, "my\nenv", "3.12")).await;
    let Ok(BackendResponse::Provisioned(provisioned)) = response else {
        panic!("{response:?}");
    };
    assert_eq!(provisioned.python_full_version, newest_312);
    assert_eq!(provisioned.interpreter_path, root.join("bin/python"));
    assert_eq!(provisioned.extra["venv_writer"], "native");
    let activate = std::fs::read_to_string(root.join("bin/activate")).expect("activate");
    assert!(
        activate.contains("'my_env'"),
        "the name, made printable, is the prompt"
    );

    let response = call(
        &mut backend,
        BackendRequest::Describe(DescribeRequest { root: root.clone() }),
    )
    .await;
    let Ok(BackendResponse::Described(description)) = response else {
        panic!("{response:?}");
    };
    assert_eq!(description.interpreter_path, root.join("bin/python"));
    assert!(
        description.installed_packages.is_empty(),
        "{:?}",
        description.installed_packages
    );

    let run = RunRequest {
        root: root.clone(),
        environment_id: "env-0123456789ab".to_owned(),
        argv: [
            "python",
            "-c",
            "import os, sys; print(sys.prefix); print(os.environ['VIRTUAL_ENV'])",
        ]
        .map(str::to_owned)
        .to_vec(),
        cwd: wsp_backend::execute::resolve_cwd(&root, None).unwrap(),
        env: BTreeMap::new(),
        options: Default::default(),
    };
    let response = call(&mut backend, BackendRequest::Run(run)).await;
    let Ok(BackendResponse::Ran(result)) = response else {
        panic!("{response:?}");
    };
    assert_eq!(result.exit_code, 0, "{}", result.stderr);
    let root_text = root.to_string_lossy();
    assert_eq!(result.stdout, format!("{root_text}\n{root_text}\n"));

    for _ in 0..2 {
        let response = call(
            &mut backend,
            BackendRequest::Remove(RemoveRequest { root: root.clone() }),
        )
        .await;
        assert!(
            matches!(response, Ok(BackendResponse::Removed)),
            "{response:?}"
        );
        assert!(!root.exists());
    }
}

#[tokio::test]
async fn an_unavailable_version_lists_the_available_ones() {
    let mut backend = backend(VenvOptions::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let root = empty_root(dir.path());
    let response = call(&mut backend, provision(&root, "x", "3.99")).await;
    let Err(BackendError::VersionUnavailable {
        requested,
        available,
    }) = response
    else {
        panic!("{response:?}");
    };
    assert_eq!(requested, "3.99");
    let newest_312 = common::python("3.12").version.to_string();
    assert!(available.contains(&newest_312), "{available:?}");
}

#[tokio::test]
async fn python2_fails_as_provision_failed() {
    let mut backend = backend(VenvOptions::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let root = empty_root(dir.path());
    let response = call(&mut backend, provision(&root, "old", "2.7")).await;
    let Err(BackendError::Failed { reason, detail, .. }) = response else {
        panic!("{response:?}");
    };
    assert_eq!(reason, FailureReason::ProvisionFailed);
    assert!(detail.contains("3.3"), "{detail}");
}

#[tokio::test]
async fn seeded_environments_list_pip() {
    let mut backend = backend(VenvOptions {
        seed_pip: true,
        seed_cache_dir: Some(Path::new(env!("CARGO_TARGET_TMPDIR")).join("wsp-venv-seed-cache")),
        ..VenvOptions::default()
    });
    let dir = tempfile::tempdir().expect("tempdir");
    let root = empty_root(dir.path());
    let response = call(&mut backend, provision(&root, "seeded", "3.12")).await;
    let Ok(BackendResponse::Provisioned(provisioned)) = response else {
        panic!("{response:?}");
    };
    assert!(provisioned.extra.contains_key("pip_seed"));
    let response = call(
        &mut backend,
        BackendRequest::Describe(DescribeRequest { root }),
    )
    .await;
    let Ok(BackendResponse::Described(description)) = response else {
        panic!("{response:?}");
    };
    let names: Vec<&str> = description
        .installed_packages
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(names, ["pip"]);
}
