//! Installing into conda prefixes from a local channel holding `noarch: python` packages:
//! solved with what is installed, a failed solve changing nothing, upgrades, uninstalls that
//! take dependents along, and rattler's own steps as progress.

use std::path::{Path, PathBuf};

use tokio::sync::mpsc;
use wsp_backend::{
    Backend, BackendError, DescribeRequest, InstallRequest, ProvisionRequest, RunRequest,
    UninstallRequest,
};
use wsp_backend_conda::{CondaBackend, CondaConfig};
use wsp_install::{InstallSource, ProgressStep};
use wsp_interpreters::VersionRequest;
use wsp_testing::conda::{build_local_channel_with, CondaPackage, PythonBuild};

struct Fixture {
    dir: tempfile::TempDir,
    backend: CondaBackend,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let python = PythonBuild::from_pyenv("3.12.1").expect("pyenv has 3.12.1");
        let packages = [
            CondaPackage::new("wsp-alpha", "1.0"),
            CondaPackage::new("wsp-alpha", "2.0"),
            CondaPackage::new("wsp-beta", "1.0").depends("wsp-alpha"),
        ];
        let channel =
            build_local_channel_with(&dir.path().join("channel"), &[python], &packages).unwrap();
        let backend = CondaBackend::new(CondaConfig {
            channels: vec![channel.to_string()],
            cache_dir: dir.path().join("cache"),
            platform: None,
        });
        Fixture { dir, backend }
    }

    async fn prefix(&self, name: &str) -> PathBuf {
        let root = self.dir.path().join("envs").join(name);
        std::fs::create_dir_all(&root).unwrap();
        let request = ProvisionRequest {
            root: root.clone(),
            name: name.into(),
            python_version: "3.12".parse::<VersionRequest>().unwrap(),
            interpreter: None,
        };
        self.backend.provision(request).await.unwrap();
        root
    }

    async fn install(
        &self,
        root: &Path,
        packages: &[&str],
        upgrade: bool,
        progress: Option<mpsc::Sender<ProgressStep>>,
    ) -> Result<(), BackendError> {
        self.backend
            .install(InstallRequest {
                root: root.to_owned(),
                environment_id: "env-0123456789ab".into(),
                packages: packages.iter().map(|p| p.to_string()).collect(),
                source: InstallSource::default(),
                upgrade,
                progress,
                sandbox: None,
            })
            .await
    }

    async fn packages(&self, root: &Path) -> Vec<(String, String)> {
        let request = DescribeRequest {
            root: root.to_owned(),
        };
        let description = self.backend.describe(request).await.unwrap();
        description
            .installed_packages
            .into_iter()
            .map(|p| (p.name, p.version))
            .collect()
    }

    async fn python(&self, root: &Path, code: &str) -> String {
        let request = RunRequest {
            root: root.to_owned(),
            environment_id: "env-0123456789ab".into(),
            argv: vec!["python".into(), "-c".into(), code.into()],
            cwd: wsp_exec::resolve_cwd(root, None).unwrap(),
            env: Default::default(),
            options: Default::default(),
        };
        let ran = self.backend.run(request).await.unwrap();
        assert_eq!(ran.exit_code, 0, "{ran:?}");
        ran.stdout.trim().to_owned()
    }
}

fn version_of(packages: &[(String, String)], name: &str) -> Option<String> {
    packages
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.clone())
}

#[tokio::test]
async fn packages_are_solved_with_their_dependencies_and_import() {
    let f = Fixture::new();
    let root = f.prefix("solve").await;
    f.install(&root, &["wsp-beta"], false, None).await.unwrap();
    let packages = f.packages(&root).await;
    assert_eq!(version_of(&packages, "wsp-alpha").as_deref(), Some("2.0"));
    assert_eq!(version_of(&packages, "wsp-beta").as_deref(), Some("1.0"));
    assert_eq!(version_of(&packages, "python").as_deref(), Some("3.12.1"));
    let imported = f
        .python(&root, "import wsp_alpha, wsp_beta, sys; print(wsp_alpha.VERSION, wsp_alpha.__file__.startswith(sys.prefix))")
        .await;
    assert_eq!(imported, "2.0 True");
}

#[tokio::test]
async fn an_unsolvable_request_changes_nothing() {
    let f = Fixture::new();
    let root = f.prefix("stable").await;
    f.install(&root, &["wsp-alpha ==1.0"], false, None)
        .await
        .unwrap();
    let before = f.packages(&root).await;
    for specs in [
        &["wsp-beta", "wsp-missing"][..],
        &["wsp-alpha >=3"],
        &["wsp-alpha ==1.0", "wsp-alpha ==2.0"],
        &["not a spec ((("],
    ] {
        match f.install(&root, specs, false, None).await {
            Err(BackendError::Failed { reason, detail, .. }) => {
                assert_eq!(reason, "install-failed", "{detail}");
                assert!(!detail.is_empty());
            }
            other => panic!("{specs:?}: {other:?}"),
        }
        assert_eq!(f.packages(&root).await, before, "{specs:?}");
    }
}

#[tokio::test]
async fn installed_versions_are_kept_unless_upgrade_says_otherwise() {
    let f = Fixture::new();
    let root = f.prefix("upgrade").await;
    f.install(&root, &["wsp-alpha ==1.0"], false, None)
        .await
        .unwrap();
    f.install(&root, &["wsp-alpha"], false, None).await.unwrap();
    assert_eq!(
        version_of(&f.packages(&root).await, "wsp-alpha").as_deref(),
        Some("1.0"),
        "solved together with what is installed"
    );
    f.install(&root, &["wsp-alpha"], true, None).await.unwrap();
    assert_eq!(
        version_of(&f.packages(&root).await, "wsp-alpha").as_deref(),
        Some("2.0")
    );
    assert_eq!(
        f.python(&root, "import wsp_alpha; print(wsp_alpha.VERSION)")
            .await,
        "2.0"
    );
}

#[tokio::test]
async fn uninstall_takes_dependents_along_and_ignores_unknown_names() {
    let f = Fixture::new();
    let root = f.prefix("remove").await;
    f.install(&root, &["wsp-beta"], false, None).await.unwrap();
    let request = |names: &[&str]| UninstallRequest {
        root: root.clone(),
        environment_id: "env-0123456789ab".into(),
        packages: names.iter().map(|n| n.to_string()).collect(),
        sandbox: None,
    };
    let before = f.packages(&root).await;
    f.backend
        .uninstall(request(&["never-installed"]))
        .await
        .unwrap();
    assert_eq!(f.packages(&root).await, before);
    f.backend
        .uninstall(request(&["wsp-alpha", "never-installed"]))
        .await
        .unwrap();
    let after = f.packages(&root).await;
    assert_eq!(version_of(&after, "wsp-alpha"), None);
    assert_eq!(version_of(&after, "wsp-beta"), None, "beta needs alpha");
    assert_eq!(version_of(&after, "python").as_deref(), Some("3.12.1"));
    let gone = f
        .python(
            &root,
            "import importlib.util as u; print(u.find_spec('wsp_alpha'))",
        )
        .await;
    assert_eq!(gone, "None");
}

#[tokio::test]
async fn the_solve_fetch_and_link_steps_are_reported() {
    let f = Fixture::new();
    let root = f.prefix("steps").await;
    let (sink, mut steps) = mpsc::channel(256);
    f.install(&root, &["wsp-beta"], false, Some(sink))
        .await
        .unwrap();
    let mut seen = Vec::new();
    while let Some(step) = steps.recv().await {
        seen.push(step);
    }
    let messages: Vec<&str> = seen.iter().map(|s| s.message.as_str()).collect();
    for expected in [
        "Solving ",
        "Solved: ",
        "Fetched wsp-beta-1.0",
        "Linked wsp-alpha-2.0",
    ] {
        assert!(
            messages.iter().any(|m| m.starts_with(expected)),
            "no `{expected}` in {messages:?}"
        );
    }
    let percentages: Vec<u32> = seen.iter().filter_map(|s| s.percentage).collect();
    assert!(
        percentages.windows(2).all(|w| w[0] <= w[1]),
        "{percentages:?}"
    );
}

#[tokio::test]
async fn uninstall_removes_the_bytecode_of_removed_modules_and_keeps_the_rest() {
    let f = Fixture::new();
    let root = f.prefix("bytecode").await;
    f.install(&root, &["wsp-alpha"], false, None).await.unwrap();
    let compiled = f
        .python(
            &root,
            "import importlib.util, py_compile, wsp_alpha; py_compile.compile(wsp_alpha.__file__); \
             print(importlib.util.cache_from_source(wsp_alpha.__file__))",
        )
        .await;
    let compiled = PathBuf::from(compiled);
    assert!(compiled.is_file(), "{}", compiled.display());
    let other = compiled.with_file_name("unrelated.cpython-312.pyc");
    std::fs::write(&other, "").unwrap();
    let request = UninstallRequest {
        root: root.clone(),
        environment_id: "env-0123456789ab".into(),
        packages: vec!["wsp-alpha".into()],
        sandbox: None,
    };
    f.backend.uninstall(request).await.unwrap();
    assert!(!compiled.exists(), "{} is left", compiled.display());
    assert!(other.exists(), "another module's bytecode stays");
    assert!(root.join("conda-meta").is_dir());
    assert_eq!(
        version_of(&f.packages(&root).await, "python").as_deref(),
        Some("3.12.1")
    );
}

#[tokio::test]
async fn a_package_linking_bin_pip_takes_that_name_from_the_stubs_only() {
    let dir = tempfile::tempdir().unwrap();
    let python = PythonBuild::from_pyenv("3.12.1").expect("pyenv has 3.12.1");
    let own_pip = "#!/bin/sh\necho the package's pip\n";
    let packages = [
        CondaPackage::new("pip", "24.0").raw_file("bin/pip", own_pip),
        CondaPackage::new("wsp-alpha", "1.0"),
    ];
    let channel =
        build_local_channel_with(&dir.path().join("channel"), &[python], &packages).unwrap();
    let f = Fixture {
        backend: CondaBackend::new(CondaConfig {
            channels: vec![channel.to_string()],
            cache_dir: dir.path().join("cache"),
            platform: None,
        }),
        dir,
    };
    let root = f.prefix("pip").await;
    let read = |name: &str| std::fs::read_to_string(root.join("bin").join(name)).unwrap();
    let stub = read("pip");
    assert!(stub.contains("pip is not installed"), "{stub}");

    f.install(&root, &["wsp-alpha"], false, None).await.unwrap();
    for name in ["pip", "pip3", "pip3.12"] {
        assert_eq!(read(name), stub, "{name}");
    }
    f.install(&root, &["pip"], false, None).await.unwrap();
    assert_eq!(
        read("pip"),
        own_pip,
        "the package's bin/pip replaced the stub"
    );
    assert_eq!(
        read("pip3"),
        stub,
        "a name the package left free keeps its stub"
    );
}

#[tokio::test]
async fn each_install_keeps_the_specs_earlier_requests_asked_for() {
    let f = Fixture::new();
    let root = f.prefix("requested").await;
    f.install(&root, &["wsp-alpha ==1.0"], false, None)
        .await
        .unwrap();
    f.install(&root, &["wsp-beta"], false, None).await.unwrap();
    let requested = |file: &str| -> Vec<String> {
        let text = std::fs::read_to_string(root.join("conda-meta").join(file)).unwrap();
        let record: serde_json::Value = serde_json::from_str(&text).unwrap();
        serde_json::from_value(record["requested_specs"].clone()).unwrap()
    };
    assert_eq!(requested("python-3.12.1-0.json"), ["python 3.12.*"]);
    assert_eq!(requested("wsp-alpha-1.0-0.json"), ["wsp-alpha ==1.0"]);
    assert_eq!(requested("wsp-beta-1.0-0.json"), ["wsp-beta"]);
}
