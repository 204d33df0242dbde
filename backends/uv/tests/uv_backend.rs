//! The uv backend against real uv and real interpreters.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use wsp_backend::{Backend, BackendError, PrepareSpareRequest};
use wsp_backend::{ProvisionRequest, RunRequest};
use wsp_backend_uv::UvBackend;
use wsp_interpreters::{Inventory, InventoryConfig};
use wsp_testing::{offline_install, InterpreterStarts};

fn backend(uv: Option<PathBuf>) -> UvBackend {
    UvBackend::new(uv, Inventory::new(InventoryConfig::from_env()))
}

fn provision(root: &Path, version: &str) -> ProvisionRequest {
    ProvisionRequest {
        root: root.to_owned(),
        name: "t".into(),
        python_version: version.parse().expect("a version"),
        interpreter: None,
    }
}

fn run(root: &Path, argv: &[&str]) -> RunRequest {
    RunRequest {
        root: root.to_owned(),
        environment_id: "env-000000000000".into(),
        argv: argv.iter().map(|s| s.to_string()).collect(),
        cwd: wsp_exec::resolve_cwd(root, None).unwrap(),
        env: BTreeMap::new(),
        options: Default::default(),
    }
}

/// A minimal wheel, written with the base interpreter's zipfile module.
fn build_wheel(dir: &Path) -> PathBuf {
    let wheel = dir.join("wspdemo-0.1-py3-none-any.whl");
    let script = format!(
        r#"import zipfile
with zipfile.ZipFile({wheel:?}, "w") as z:
    z.writestr("wspdemo/__init__.py", "VALUE = 42\n")
    z.writestr("wspdemo-0.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: wspdemo\nVersion: 0.1\n")
    z.writestr("wspdemo-0.1.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("wspdemo-0.1.dist-info/RECORD", "")
"#,
        wheel = wheel.display().to_string()
    );
    let python = std::env::var("PYENV_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|_| "/root/.pyenv".into())
        .join("versions/3.12.1/bin/python3.12");
    let status = std::process::Command::new(python)
        .arg("-c")
        .arg(script)
        .status()
        .expect("python runs");
    assert!(status.success());
    wheel
}

#[tokio::test]
async fn creates_with_uv_and_uv_pip_installs_into_the_environment() {
    let backend = backend(None);
    backend
        .uv()
        .expect("uv is installed (the CI script installs it from PyPI)");
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().join("env");
    std::fs::create_dir(&root).unwrap();
    let provisioned = backend.provision(provision(&root, "3.12")).await.unwrap();
    assert_eq!(
        provisioned
            .python_full_version
            .to_string()
            .rsplit_once('.')
            .unwrap()
            .0,
        "3.12"
    );
    assert_eq!(provisioned.interpreter_path, root.join("bin/python"));
    assert!(root.join("pyvenv.cfg").is_file());

    let wheel = build_wheel(temp.path());
    let wheel = wheel.display().to_string();
    let install = ["uv", "pip", "install", "--offline", "--no-config", &wheel];
    let ran = backend.run(run(&root, &install)).await.unwrap();
    assert_eq!(ran.exit_code, 0, "{ran:?}");
    let import = [
        "python",
        "-c",
        "import sys, wspdemo; print(wspdemo.VALUE, sys.prefix)",
    ];
    let ran = backend.run(run(&root, &import)).await.unwrap();
    assert_eq!(ran.stdout.trim(), format!("42 {}", root.display()));
    assert_has_wspdemo(&backend, &root).await;
}

/// The environment at `root` is described with `wspdemo` 0.1 installed.
async fn assert_has_wspdemo(backend: &UvBackend, root: &Path) {
    let described = backend
        .describe(wsp_backend::DescribeRequest {
            root: root.to_owned(),
        })
        .await
        .unwrap();
    assert!(described
        .installed_packages
        .iter()
        .any(|p| p.name == "wspdemo" && p.version == "0.1"));
}

#[tokio::test]
async fn an_unknown_version_lists_the_available_ones() {
    let temp = tempfile::tempdir().unwrap();
    match backend(None)
        .provision(provision(temp.path(), "3.99"))
        .await
    {
        Err(BackendError::VersionUnavailable {
            requested,
            available,
        }) => {
            assert_eq!(requested, "3.99");
            assert!(
                available.iter().any(|v| v.starts_with("3.12.")),
                "{available:?}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_missing_uv_is_backend_unavailable_at_create() {
    let temp = tempfile::tempdir().unwrap();
    let backend = backend(Some(temp.path().join("no-such-uv")));
    assert!(backend.uv().unwrap_err().to_string().contains("no-such-uv"));
    match backend.provision(provision(temp.path(), "3.12")).await {
        Err(BackendError::Failed { reason, detail, .. }) => {
            assert_eq!(reason, "backend-unavailable");
            assert!(detail.contains("no-such-uv"), "{detail}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_install_into_a_prepared_spare_starts_without_looking_at_its_interpreter_again() {
    let backend = backend(None);
    let temp = tempfile::tempdir().unwrap();
    let links = temp.path().join("wheels");
    std::fs::create_dir(&links).unwrap();
    build_wheel(&links);
    let (prepared, unprepared) = (temp.path().join("prepared"), temp.path().join("unprepared"));
    let mut counters = Vec::new();
    for root in [&prepared, &unprepared] {
        std::fs::create_dir(root).unwrap();
        backend.provision(provision(root, "3.12")).await.unwrap();
        counters.push(InterpreterStarts::count_in(root));
    }

    let request = PrepareSpareRequest {
        root: prepared.clone(),
        interpreter_path: prepared.join("bin/python"),
    };
    backend.prepare_spare(request).await.unwrap();
    let looked = counters[0].count();
    assert!(looked >= 1, "preparing ran no interpreter");
    backend
        .install(offline_install(&prepared, &links, &["wspdemo"]))
        .await
        .unwrap();
    assert_eq!(counters[0].count(), looked, "the install looked again");

    backend
        .install(offline_install(&unprepared, &links, &["wspdemo"]))
        .await
        .unwrap();
    assert!(
        counters[1].count() >= 1,
        "an unprepared install looks first"
    );
    for root in [&prepared, &unprepared] {
        assert_has_wspdemo(&backend, root).await;
    }
}

#[tokio::test]
async fn preparing_with_a_missing_uv_fails_and_changes_nothing() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().join("env");
    std::fs::create_dir(&root).unwrap();
    let request = PrepareSpareRequest {
        root: root.clone(),
        interpreter_path: root.join("bin/python"),
    };
    let missing = backend(Some(temp.path().join("no-such-uv")));
    assert!(missing.prepare_spare(request).await.is_err());
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0);
}
