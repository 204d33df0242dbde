//! `VenvBackend`'s steps over a real interpreter inventory (pyenv only).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use wsp_backend::{
    Backend, BackendError, DescribeRequest, PrepareSpareRequest, ProvisionRequest, ReleaseRequest,
    ResolvedInterpreter, RunRequest,
};
use wsp_backend_venv::{VenvBackend, VenvOptions};
use wsp_interpreters::{Inventory, InventoryConfig};
use wsp_protocol::FailureReason;

fn backend(options: VenvOptions) -> VenvBackend {
    let pyenv_root = crate::common::pyenv_versions()
        .parent()
        .expect("versions has a parent")
        .to_path_buf();
    let inventory = Inventory::new(InventoryConfig {
        pyenv_root: Some(pyenv_root),
        ..InventoryConfig::default()
    });
    VenvBackend::new(inventory, options)
}

fn provision(root: &Path, name: &str, version: &str) -> ProvisionRequest {
    ProvisionRequest {
        root: root.to_path_buf(),
        name: name.to_owned(),
        python_version: version.parse().expect("a version request"),
        interpreter: None,
    }
}

/// Provisions `name` at `version` with the default options into a root that is then removed.
async fn provision_in_a_fresh_root(
    name: &str,
    version: &str,
) -> Result<wsp_backend::Provisioned, BackendError> {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = empty_root(dir.path());
    let backend = backend(VenvOptions::default());
    backend.provision(provision(&root, name, version)).await
}

fn empty_root(dir: &Path) -> PathBuf {
    let root = dir.join("env");
    std::fs::create_dir(&root).expect("root");
    root
}

#[tokio::test]
async fn provision_describe_run_and_release() {
    let backend = backend(VenvOptions::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let root = empty_root(dir.path());
    let newest_312 = crate::common::python("3.12").version;

    let provisioned = backend
        .provision(provision(&root, "my\nenv", "3.12"))
        .await
        .expect("provisioned");
    assert_eq!(provisioned.python_full_version, newest_312);
    assert_eq!(provisioned.interpreter_path, root.join("bin/python"));
    assert_eq!(provisioned.extra["venv_writer"], "native");
    let activate = std::fs::read_to_string(root.join("bin/activate")).expect("activate");
    assert!(
        activate.contains("'my_env'"),
        "the name, made printable, is the prompt"
    );

    let description = backend
        .describe(DescribeRequest { root: root.clone() })
        .await
        .expect("described");
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
        cwd: wsp_exec::resolve_cwd(&root, None).unwrap(),
        env: BTreeMap::new(),
        options: Default::default(),
    };
    let result = backend.run(run).await.expect("ran");
    assert_eq!(result.exit_code, 0, "{}", result.stderr);
    let root_text = root.to_string_lossy();
    assert_eq!(result.stdout, format!("{root_text}\n{root_text}\n"));

    // Deleting the root is the store's job: releasing leaves it alone.
    let release = ReleaseRequest {
        root: root.clone(),
        environment_id: "env-0123456789ab".to_owned(),
    };
    backend.release(release).await.expect("released");
    assert!(root.join("bin/python").exists());
}

#[tokio::test]
async fn an_unavailable_version_lists_the_available_ones() {
    let response = provision_in_a_fresh_root("x", "3.99").await;
    let Err(BackendError::VersionUnavailable {
        requested,
        available,
    }) = response
    else {
        panic!("{response:?}");
    };
    assert_eq!(requested, "3.99");
    let newest_312 = crate::common::python("3.12").version.to_string();
    assert!(available.contains(&newest_312), "{available:?}");
}

#[tokio::test]
async fn python2_fails_as_provision_failed() {
    let response = provision_in_a_fresh_root("old", "2.7").await;
    let Err(BackendError::Failed { reason, detail, .. }) = response else {
        panic!("{response:?}");
    };
    assert_eq!(reason, FailureReason::ProvisionFailed);
    assert!(detail.contains("3.3"), "{detail}");
}

#[tokio::test]
async fn seeded_environments_list_pip() {
    let backend = backend(VenvOptions {
        seed_pip: true,
        seed_cache_dir: Some(Path::new(env!("CARGO_TARGET_TMPDIR")).join("wsp-venv-seed-cache")),
        ..VenvOptions::default()
    });
    let dir = tempfile::tempdir().expect("tempdir");
    let root = empty_root(dir.path());
    let provisioned = backend
        .provision(provision(&root, "seeded", "3.12"))
        .await
        .expect("provisioned");
    assert!(provisioned.extra.contains_key("pip_seed"));
    let description = backend
        .describe(DescribeRequest { root })
        .await
        .expect("described");
    let names: Vec<&str> = description
        .installed_packages
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(names, ["pip"]);
}

/// A create builds on the interpreter the server resolved for it; one that no longer answers
/// as the version it was resolved as, or that is not the version asked for, is resolved again,
/// and the create still gets the interpreter the request resolves to.
#[tokio::test]
async fn provision_resolves_again_when_the_resolved_interpreter_does_not_hold() {
    let backend = backend(VenvOptions::default());
    let newest_312 = crate::common::python("3.12");
    let older = crate::common::python("3.11");
    let base_of = |hint: ResolvedInterpreter| {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut request = provision(&empty_root(dir.path()), "hinted", "3.12");
        request.interpreter = Some(hint);
        let backend = &backend;
        async move {
            let provisioned = backend.provision(request).await.expect("provisioned");
            drop(dir);
            (
                provisioned.python_full_version,
                provisioned.extra["base_interpreter"].clone(),
            )
        }
    };
    let expected = (
        newest_312.version,
        serde_json::Value::from(newest_312.executable.to_string_lossy()),
    );
    let resolved = ResolvedInterpreter {
        full_version: newest_312.version,
        path: newest_312.executable.clone(),
    };
    assert_eq!(base_of(resolved.clone()).await, expected);
    let gone = ResolvedInterpreter {
        path: newest_312.executable.with_file_name("python-that-is-gone"),
        ..resolved.clone()
    };
    assert_eq!(base_of(gone).await, expected);
    let stale = ResolvedInterpreter {
        full_version: older.version,
        ..resolved
    };
    assert_eq!(base_of(stale).await, expected);
    let not_asked_for = ResolvedInterpreter {
        full_version: older.version,
        path: older.executable,
    };
    assert_eq!(base_of(not_asked_for).await, expected);
}

/// With uv as the installer, a prepared spare's first install does not start its interpreter
/// (uv looked at it while preparing); with pip, preparing starts nothing.
#[tokio::test]
async fn preparing_a_spare_lets_uv_install_without_looking_at_its_interpreter_again() {
    let uv = wsp_install::find_uv(None).expect("uv is installed (the CI script installs it)");
    let dir = tempfile::tempdir().expect("tempdir");
    let links = dir.path().join("wheels");
    wsp_testing::Distribution::new("wspdemo", "0.1")
        .write_wheel(&links)
        .expect("a wheel");
    let with_uv = backend(VenvOptions::default()).with_installer(wsp_install::Installer::Uv(uv));
    let with_pip = backend(VenvOptions::default()).with_installer(wsp_install::Installer::Pip);
    for (installer, backend) in [("uv", &with_uv), ("pip", &with_pip)] {
        let root = dir.path().join(installer);
        std::fs::create_dir(&root).expect("root");
        let provisioned = backend
            .provision(provision(&root, "spare", "3.12"))
            .await
            .expect("provisioned");
        let starts = wsp_testing::InterpreterStarts::count_in(&root);
        let request = PrepareSpareRequest {
            root: root.clone(),
            interpreter_path: provisioned.interpreter_path,
        };
        backend.prepare_spare(request).await.expect("prepared");
        let looked = starts.count();
        if installer == "pip" {
            assert_eq!(looked, 0, "preparing for pip started the interpreter");
            continue;
        }
        assert!(looked >= 1, "preparing for uv started no interpreter");
        let install = wsp_testing::offline_install(&root, &links, &["wspdemo"]);
        backend.install(install).await.expect("installed");
        assert_eq!(starts.count(), looked, "the install looked again");
        let described = backend
            .describe(DescribeRequest { root })
            .await
            .expect("described");
        assert!(described
            .installed_packages
            .iter()
            .any(|p| p.name == "wspdemo"));
    }
}
