//! A provisioned prefix: describing it, running in it, removing it.

use wsp_backend::{Backend, ReleaseRequest};
use wsp_protocol::Package;

use crate::common::{describe, provision, run, Fixture};

fn package(name: &str, version: &str) -> Package {
    Package {
        name: name.into(),
        version: version.into(),
    }
}

#[tokio::test]
async fn python_in_the_prefix_reports_the_prefix_and_sees_conda_prefix() {
    let fixture = Fixture::new();
    let root = fixture.new_root("run");
    provision(&fixture.backend, &root, "3.12").await.unwrap();

    let script = "import os, sys; print(sys.prefix); print(os.environ['CONDA_PREFIX']); \
                  print(os.environ['PATH'].split(os.pathsep)[0])";
    let result = run(&fixture.backend, &root, &["python", "-c", script], &[]).await;

    assert_eq!(result.exit_code, 0, "{}", result.stderr);
    let lines: Vec<&str> = result.stdout.lines().collect();
    let prefix = root.to_string_lossy();
    let bin = root.join("bin");
    assert_eq!(lines, [&*prefix, &*prefix, &*bin.to_string_lossy()]);
}

#[tokio::test]
async fn describe_lists_conda_packages_and_distributions_once_each() {
    let fixture = Fixture::new();
    let root = fixture.new_root("describe");
    provision(&fixture.backend, &root, "3.12").await.unwrap();

    let description = describe(&fixture.backend, &root).await;
    assert_eq!(description.interpreter_path, root.join("bin/python"));
    assert_eq!(
        description.installed_packages,
        [package("python", "3.12.1")]
    );

    let site_packages = root.join("lib/python3.12/site-packages");
    for (dir, name, version) in [
        ("Requests-2.31.0.dist-info", "Requests", "2.31.0"),
        ("python-1.0.dist-info", "Python", "1.0"),
    ] {
        let dist_info = site_packages.join(dir);
        std::fs::create_dir(&dist_info).unwrap();
        std::fs::write(
            dist_info.join("METADATA"),
            format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\n"),
        )
        .unwrap();
    }

    let description = describe(&fixture.backend, &root).await;
    assert_eq!(
        description.installed_packages,
        [package("Python", "1.0"), package("Requests", "2.31.0")]
    );
}

#[tokio::test]
async fn activation_scripts_and_declared_variables_reach_the_child() {
    let fixture = Fixture::new();
    let root = fixture.new_root("activate");
    provision(&fixture.backend, &root, "3.11").await.unwrap();
    let print = "import os; print(os.environ.get('WSP_TEST_SCRIPT', '-')); \
                 print(os.environ.get('WSP_TEST_DECLARED', '-'))";

    let result = run(&fixture.backend, &root, &["python", "-c", print], &[]).await;
    assert_eq!(result.stdout, "-\n-\n", "{}", result.stderr);

    let env_vars = root.join("etc/conda/env_vars.d");
    std::fs::create_dir_all(&env_vars).unwrap();
    std::fs::write(
        env_vars.join("test.json"),
        r#"{"WSP_TEST_DECLARED": "declared"}"#,
    )
    .unwrap();
    let result = run(&fixture.backend, &root, &["python", "-c", print], &[]).await;
    assert_eq!(result.stdout, "-\ndeclared\n", "{}", result.stderr);

    let activate = root.join("etc/conda/activate.d");
    std::fs::create_dir_all(&activate).unwrap();
    std::fs::write(
        activate.join("test.sh"),
        "export WSP_TEST_SCRIPT=\"from-script:$CONDA_PREFIX\"\n",
    )
    .unwrap();
    let result = run(&fixture.backend, &root, &["python", "-c", print], &[]).await;
    assert_eq!(
        result.stdout,
        format!("from-script:{}\ndeclared\n", root.display()),
        "{}",
        result.stderr
    );

    let result = run(
        &fixture.backend,
        &root,
        &["python", "-c", print],
        &[("WSP_TEST_SCRIPT", "from-request")],
    )
    .await;
    assert_eq!(
        result.stdout, "from-request\ndeclared\n",
        "{}",
        result.stderr
    );
}

#[tokio::test]
async fn release_leaves_the_prefix_to_the_store() {
    let fixture = Fixture::new();
    let root = fixture.new_root("release");
    provision(&fixture.backend, &root, "3.12").await.unwrap();
    let request = ReleaseRequest {
        root: root.clone(),
        environment_id: "env-0123456789ab".into(),
    };
    fixture.backend.release(request).await.unwrap();
    assert!(
        root.join("bin/python").exists(),
        "deleting it is the store's job"
    );
    let cached = std::fs::read_dir(fixture.dir.path().join("cache/pkgs")).unwrap();
    assert!(cached.count() > 0, "the package cache is kept");
}
