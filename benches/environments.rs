//! `environment/create` and `environment/get` against their peers, on the same interpreter,
//! and `environment/list` on its own.
//!
//! create: the full `environment/create` request through an in-process server (store, locks,
//! fsyncs and all), the venv writer alone, `python -m venv --without-pip`, and
//! `uv venv -p <absolute path>` (when `uv` is on PATH).
//! get: `environment/get` of an environment holding 100 distributions, against
//! `pip list --format json` run with that environment's interpreter.
//!
//! list: `Store::list` on an empty store and on one with 10 environments, and the full
//! `environment/list` request through an in-process server with an empty store.
//!
//! `cargo bench --bench environments`

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use wsp_testing::ClientExt;

mod support;

use support::{interpreter, run_quietly, runtime};

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;
use wsp_conformance::{BackendUnderTest, Client, Fixture};
use wsp_environments::store::{CommitFacts, Store};
use wsp_interpreters::{Inventory, InventoryConfig};

fn venv_backend() -> BackendUnderTest {
    BackendUnderTest::new("venv", "3.12", |ctx| {
        wsp_backend_venv::VenvBackend::new(ctx.inventory(), Default::default())
    })
}

fn timed_in_fresh_dirs(base: &Path, iters: u64, mut create: impl FnMut(&Path)) -> Duration {
    let mut total = Duration::ZERO;
    for i in 0..iters {
        let root = base.join(format!("env-{i}-{}", std::process::id()));
        let start = Instant::now();
        create(&root);
        total += start.elapsed();
        let _ = std::fs::remove_dir_all(&root);
    }
    total
}

fn create(c: &mut Criterion) {
    let rt = runtime();
    let info = interpreter(&rt);
    let python = info.executable.clone();
    let scratch = tempfile::tempdir().expect("a temp dir");
    let mut group = c.benchmark_group("create");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(8));

    let fixture = Fixture::for_backend(&venv_backend());
    let mut client: Client = rt.block_on(fixture.client());
    let mut n = 0u64;
    group.bench_function("wsp environment/create (venv backend, full request)", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                n += 1;
                let start = Instant::now();
                let created = rt.block_on(client.ok(
                    "environment/create",
                    json!({"name": format!("b{n}"), "python_version": "3.12"}),
                ));
                total += start.elapsed();
                rt.block_on(client.ok("environment/delete", json!({"id": created["id"]})));
            }
            total
        })
    });
    group.bench_function("wsp venv writer alone", |b| {
        b.iter_custom(|iters| {
            timed_in_fresh_dirs(scratch.path(), iters, |root| {
                rt.block_on(wsp_backend_venv::create_venv(
                    root,
                    &info,
                    &Default::default(),
                ))
                .expect("created");
            })
        })
    });
    group.bench_function("python -m venv --without-pip", |b| {
        b.iter_custom(|iters| {
            timed_in_fresh_dirs(scratch.path(), iters, |root| {
                run_quietly(
                    Command::new(&python)
                        .args(["-m", "venv", "--without-pip"])
                        .arg(root),
                );
            })
        })
    });
    if let Ok(uv) = wsp_backend_uv::find_uv(None) {
        group.bench_function("uv venv -p <absolute path>", |b| {
            b.iter_custom(|iters| {
                timed_in_fresh_dirs(scratch.path(), iters, |root| {
                    run_quietly(
                        Command::new(&uv)
                            .args(["venv", "--quiet", "--no-config", "-p"])
                            .arg(&python)
                            .arg(root),
                    );
                })
            })
        });
    }
    group.finish();
}

fn add_distributions(site_packages: &Path, count: usize) {
    for i in 0..count {
        let dist = site_packages.join(format!("bench_pkg_{i:03}-1.{i}.0.dist-info"));
        std::fs::create_dir_all(&dist).expect("a dist-info");
        let metadata = format!("Metadata-Version: 2.1\nName: bench-pkg-{i:03}\nVersion: 1.{i}.0\nSummary: a benchmark distribution\n\n{}", "long description\n".repeat(100));
        std::fs::write(dist.join("METADATA"), metadata).expect("METADATA");
        std::fs::write(dist.join("RECORD"), "").expect("RECORD");
    }
}

fn get(c: &mut Criterion) {
    let rt = runtime();
    let fixture = Fixture::for_backend(&venv_backend());
    let mut client: Client = rt.block_on(fixture.client());
    let created = rt.block_on(client.ok(
        "environment/create",
        json!({"name": "hundred", "python_version": "3.12"}),
    ));
    let id = created["id"].clone();
    let root = PathBuf::from(created["extra"]["path"].as_str().expect("path"));
    let site = wsp_install::packages::site_packages_dirs(&root)
        .into_iter()
        .next()
        .expect("site-packages");
    add_distributions(&site, 100);
    let details = rt.block_on(client.ok("environment/get", json!({"id": id})));
    assert_eq!(
        details["installed_packages"].as_array().map(Vec::len),
        Some(100)
    );
    // pip from the base interpreter, run with the environment as its target.
    let base = created["extra"]["base_interpreter"]
        .as_str()
        .expect("base_interpreter")
        .to_owned();
    let pip_args = [
        "-m",
        "pip",
        "--disable-pip-version-check",
        "--no-python-version-warning",
        "list",
        "--format",
        "json",
        "--path",
    ];

    let mut group = c.benchmark_group("get (100 distributions)");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(8));
    group.bench_function("wsp environment/get", |b| {
        b.iter(|| rt.block_on(client.ok("environment/get", json!({"id": id}))))
    });
    group.bench_function("pip list --format json", |b| {
        b.iter(|| run_quietly(Command::new(&base).args(pip_args).arg(&site)))
    });
    group.finish();
}

fn resolve(c: &mut Criterion) {
    let rt = runtime();
    let inventory = Inventory::new(InventoryConfig::from_env());
    let request = "3.12".parse().expect("a version");
    rt.block_on(inventory.resolve(&request))
        .expect("Python 3.12 is installed");
    c.bench_function("resolve 3.12 (warm query cache)", |b| {
        b.iter(|| rt.block_on(inventory.resolve(&request)).expect("resolves"))
    });
}

/// A store holding `count` committed environments with placeholder files.
fn store_with(rt: &tokio::runtime::Runtime, dir: &Path, count: usize) -> Store {
    let store = Store::open(dir).expect("a store");
    for i in 0..count {
        let reservation = rt
            .block_on(store.reserve(&format!("env-{i}"), "bench"))
            .expect("a reservation");
        let interpreter_path = reservation.root.join("bin").join("python");
        rt.block_on(reservation.commit(CommitFacts {
            python_version: "3.12".into(),
            python_full_version: "3.12.4".into(),
            interpreter_path,
            extra: Default::default(),
            reuse_key: None,
        }))
        .expect("a commit");
    }
    store
}

fn list(c: &mut Criterion) {
    let rt = runtime();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let empty = store_with(&rt, &dir.path().join("empty"), 0);
    let small = store_with(&rt, &dir.path().join("small"), 10);
    let fixture = Fixture::for_backend(&venv_backend());
    let mut client: Client = rt.block_on(fixture.client());
    let mut group = c.benchmark_group("list");
    group.bench_function("Store::list, empty store", |b| {
        b.iter(|| rt.block_on(empty.list()).expect("lists"))
    });
    group.bench_function("Store::list, 10 environments", |b| {
        b.iter(|| rt.block_on(small.list()).expect("lists"))
    });
    group.bench_function("environment/list, in-process server, empty store", |b| {
        b.iter(|| rt.block_on(client.ok("environment/list", json!(null))))
    });
    group.finish();
}

criterion_group!(benches, create, get, resolve, list);
criterion_main!(benches);
