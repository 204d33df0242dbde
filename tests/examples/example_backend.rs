//! The backend written from scratch in `examples/pip_backend.rs` passes the conformance kit,
//! with a requirement installed at every create from a local wheel.

#[allow(dead_code)]
#[path = "../../examples/pip_backend.rs"]
mod pip_backend;

use serde_json::json;
use wsp_conformance::{check_backend, Fixture};
use wsp_testing::ClientExt;
use wsp_testing::Distribution;

/// `pip install` arguments for `wsp-example-dep`, from a wheel in `dir`.
fn requirements(dir: &std::path::Path) -> Vec<String> {
    Distribution::new("wsp-example-dep", "1.0")
        .write_wheel(dir)
        .expect("a wheel");
    let dir = dir.display().to_string();
    ["--no-index", "--find-links", &dir, "wsp-example-dep"]
        .map(str::to_owned)
        .to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_environment_gets_the_requirements() {
    let wheels = tempfile::tempdir().expect("a directory");
    let backend = pip_backend::under_test(requirements(wheels.path()));
    let fixture = Fixture::for_backend(&backend);
    let mut client = fixture.client().await;
    let params = json!({"name": "with-deps", "python_version": "3.12"});
    let created = client.ok("environment/create", params).await;
    let names: Vec<&str> = created["installed_packages"]
        .as_array()
        .expect("installed_packages")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(names.contains(&"wsp-example-dep"), "{created}");
    assert!(!names.contains(&"pip"), "no pip of its own: {created}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pip_example_backend_conforms() {
    // Without requirements: they have their own test.
    check_backend(pip_backend::under_test(Vec::new())).await;
}
