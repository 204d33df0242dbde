//! `environment/install` and `environment/create` with packages against the tools a user would
//! run instead, on the same interpreter (pyenv 3.12), the same 10 local wheels and the same uv
//! cache.
//!
//! install: `environment/install` of 10 wheels from `find_links` through an in-process server
//! (venv backend with uv and with the environment's own pip; uv backend), against
//! `uv pip install --python <venv> --no-index --find-links DIR` and
//! `<venv>/bin/python -m pip install --no-index --find-links DIR`, each into a fresh
//! environment (made before the clock starts).
//! create: `environment/create` with those 10 packages (venv backend with uv, and the uv
//! backend), against `uv venv` followed by `uv pip install`.
//! mirror: the install against `uv pip install` from a local mirror of real distributions, a
//! PEP 503 index or a directory of wheels (see [`mirror`]; skipped unless one is given).
//!
//! Every environment, wsp's and the peers', is made at a path not used before in the run (see
//! [`fresh_root`]).
//!
//! `cargo bench --bench install` (uv on `PATH`)

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use wsp_testing::ClientExt;

mod support;

use support::{interpreter, run_quietly, runtime};

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{json, Value};
use wsp_backend_venv::VenvOptions;
use wsp_conformance::{BackendUnderTest, Client, Fixture};
use wsp_install::{find_uv, Installer};
use wsp_testing::Distribution;

const PACKAGES: usize = 10;

/// Writes the 10 wheels into `dir`; returns their names.
fn wheels(dir: &Path) -> Vec<String> {
    (0..PACKAGES)
        .map(|i| {
            let name = format!("wsp-bench-{i:02}");
            Distribution::new(&name, "1.0")
                .write_wheel(dir)
                .expect("a wheel");
            name
        })
        .collect()
}

fn venv_backend(installer: Installer, seed_pip: bool, seed_cache: PathBuf) -> BackendUnderTest {
    BackendUnderTest::new("venv", "3.12", move |ctx| {
        let options = VenvOptions {
            seed_pip,
            seed_cache_dir: Some(seed_cache.clone()),
            ..VenvOptions::default()
        };
        wsp_backend_venv::VenvBackend::new(ctx.inventory(), options)
            .with_installer(installer.clone())
    })
}

fn uv_backend() -> BackendUnderTest {
    BackendUnderTest::new("uv", "3.12", |ctx| {
        wsp_backend_uv::UvBackend::new(None, ctx.inventory())
    })
}

/// A path no environment of this run had before, under `base`. uv keeps what it learned of an
/// interpreter by the interpreter's path, so a peer making its environments at reused paths
/// would skip the interpreter query that every new environment costs (about 100 ms here), as
/// every environment wsp makes does.
fn fresh_root(base: &Path) -> PathBuf {
    static MADE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    base.join(format!("env-{n}"))
}

/// `uv venv -p PYTHON ROOT`, as a user makes a venv with uv.
fn uv_venv(uv: &Path, python: &Path, root: &Path) {
    run_quietly(
        Command::new(uv)
            .args(["venv", "--quiet", "--no-config", "-p"])
            .arg(python)
            .arg(root),
    )
}

/// `uv pip install` of `names` into the venv at `root`, from `links` with no index.
fn uv_pip_install(uv: &Path, root: &Path, links: &str, names: &[String]) {
    run_quietly(
        Command::new(uv)
            .args(["pip", "install", "--no-config", "--python"])
            .arg(root.join("bin/python"))
            .args(["--no-index", "--find-links", links])
            .args(names),
    )
}

/// `uv pip install` of `names` from `links` ([`timed_installs`]), each into a fresh `uv venv`
/// of `python`.
fn timed_uv_installs(
    base: &Path,
    iters: u64,
    uv: &Path,
    python: &Path,
    links: &str,
    names: &[String],
) -> Duration {
    let make = |root: &Path| uv_venv(uv, python, root);
    let install = |root: &Path| uv_pip_install(uv, root, links, names);
    timed_installs(base, iters, make, install)
}

/// Times `install` into a fresh environment made by `make` each iteration.
fn timed_installs(
    base: &Path,
    iters: u64,
    mut make: impl FnMut(&Path),
    mut install: impl FnMut(&Path),
) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let root = fresh_root(base);
        make(&root);
        let start = Instant::now();
        install(&root);
        total += start.elapsed();
        let _ = std::fs::remove_dir_all(&root);
    }
    total
}

/// Times `environment/install` of `packages` into a fresh environment each iteration.
fn timed_wsp_installs(
    rt: &tokio::runtime::Runtime,
    client: &mut Client,
    iters: u64,
    install: &Value,
) -> Duration {
    let mut total = Duration::ZERO;
    for n in 0..iters {
        let created = rt.block_on(client.ok(
            "environment/create",
            json!({"name": format!("i{n}"), "python_version": "3.12"}),
        ));
        let mut params = install.clone();
        params["id"] = created["id"].clone();
        let start = Instant::now();
        let installed = rt.block_on(client.ok("environment/install", params));
        total += start.elapsed();
        let count = installed["installed_packages"].as_array().map(Vec::len);
        assert!(count >= Some(PACKAGES), "{installed}");
        rt.block_on(client.ok("environment/delete", json!({"id": created["id"]})));
    }
    total
}

fn install(c: &mut Criterion) {
    let rt = runtime();
    let info = interpreter(&rt);
    let uv = find_uv(None).expect("uv is on PATH");
    let scratch = tempfile::tempdir().expect("a temp dir");
    let links = scratch.path().join("wheels");
    let names = wheels(&links);
    let links_text = links.display().to_string();
    let seed_cache = scratch.path().join("seed");
    let request = json!({"packages": names, "find_links": [links_text], "no_index": true});

    let mut group = c.benchmark_group("install (10 local wheels)");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    let with_uv = Fixture::for_backend(&venv_backend(
        Installer::Uv(uv.clone()),
        false,
        seed_cache.clone(),
    ));
    let mut client = rt.block_on(with_uv.client());
    group.bench_function("wsp environment/install (venv backend, uv)", |b| {
        b.iter_custom(|iters| timed_wsp_installs(&rt, &mut client, iters, &request))
    });
    let uv_made = Fixture::for_backend(&uv_backend());
    let mut client = rt.block_on(uv_made.client());
    group.bench_function("wsp environment/install (uv backend)", |b| {
        b.iter_custom(|iters| timed_wsp_installs(&rt, &mut client, iters, &request))
    });
    let with_pip = Fixture::for_backend(&venv_backend(Installer::Pip, true, seed_cache.clone()));
    let mut client = rt.block_on(with_pip.client());
    group.bench_function("wsp environment/install (venv backend, pip)", |b| {
        b.iter_custom(|iters| timed_wsp_installs(&rt, &mut client, iters, &request))
    });
    let envs = scratch.path().join("envs");
    group.bench_function("uv pip install --no-index --find-links", |b| {
        b.iter_custom(|iters| {
            timed_uv_installs(&envs, iters, &uv, &info.executable, &links_text, &names)
        })
    });
    let seeded = VenvOptions {
        seed_pip: true,
        seed_cache_dir: Some(seed_cache.clone()),
        ..VenvOptions::default()
    };
    group.bench_function("pip install --no-index --find-links", |b| {
        b.iter_custom(|iters| {
            let make = |root: &Path| {
                rt.block_on(wsp_backend_venv::create_venv(root, &info, &seeded))
                    .expect("a venv with pip");
            };
            let install = |root: &Path| {
                run_quietly(
                    Command::new(root.join("bin/python"))
                        .args(["-m", "pip", "install", "--disable-pip-version-check"])
                        .args(["--no-index", "--find-links", &links_text])
                        .args(&names),
                )
            };
            timed_installs(&envs, iters, make, install)
        })
    });
    group.finish();
}

fn create(c: &mut Criterion) {
    let rt = runtime();
    let info = interpreter(&rt);
    let uv = find_uv(None).expect("uv is on PATH");
    let scratch = tempfile::tempdir().expect("a temp dir");
    let links = scratch.path().join("wheels");
    let names = wheels(&links);
    let links_text = links.display().to_string();

    let mut group = c.benchmark_group("create with 10 packages");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    let backends = [
        (
            "wsp environment/create with packages (venv backend, uv)",
            venv_backend(
                Installer::Uv(uv.clone()),
                false,
                scratch.path().join("seed"),
            ),
        ),
        (
            "wsp environment/create with packages (uv backend)",
            uv_backend(),
        ),
    ];
    // Each backend twice: as the library builds it (no spares), and with spare environments
    // as `wsp serve` has them by default (here a spare is made after each create, and the next
    // create, coming right after the delete, waits for it).
    let runs = backends.into_iter().flat_map(|(label, backend)| {
        [
            (label.to_owned(), backend.clone(), false),
            (format!("{label}, spares"), backend, true),
        ]
    });
    for (label, backend, spares) in runs {
        let fixture = Fixture::for_backend(&backend);
        let environments = fixture.environments(|b| b).with_spare_environments(spares);
        let server = wsp_server::ServerBuilder::new().group(environments).build();
        let mut client = rt.block_on(Client::initialized(server));
        let mut n = 0u64;
        group.bench_function(&label, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    n += 1;
                    let params = json!({"name": format!("c{n}"), "python_version": "3.12",
                        "packages": names, "find_links": [links_text], "no_index": true});
                    let start = Instant::now();
                    let created = rt.block_on(client.ok("environment/create", params));
                    total += start.elapsed();
                    rt.block_on(client.ok("environment/delete", json!({"id": created["id"]})));
                }
                total
            })
        });
    }
    let envs = scratch.path().join("envs");
    group.bench_function("uv venv + uv pip install", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let root = fresh_root(&envs);
                let start = Instant::now();
                uv_venv(&uv, &info.executable, &root);
                uv_pip_install(&uv, &root, &links_text, &names);
                total += start.elapsed();
                let _ = std::fs::remove_dir_all(&root);
            }
            total
        })
    });
    group.finish();
}

/// Where the mirror's distributions come from.
enum Mirror {
    /// A directory of wheels, given as `find_links` with no index.
    FindLinks(String),
    /// A PEP 503 simple index (`bench/pep503_mirror.py serve`), given as `index_url`.
    Index(String),
}

impl Mirror {
    /// `WSP_BENCH_INDEX_URL` if set, else `WSP_BENCH_MIRROR`.
    fn from_env() -> Option<Mirror> {
        match std::env::var("WSP_BENCH_INDEX_URL") {
            Ok(url) => Some(Mirror::Index(url)),
            Err(_) => std::env::var("WSP_BENCH_MIRROR")
                .ok()
                .map(Mirror::FindLinks),
        }
    }

    /// The `environment/install` params for `names`.
    fn request(&self, names: &[String]) -> Value {
        match self {
            Mirror::FindLinks(links) => {
                json!({"packages": names, "find_links": [links], "no_index": true})
            }
            Mirror::Index(url) => json!({"packages": names, "index_url": url}),
        }
    }

    /// `uv pip install`'s options for the same source.
    fn uv_options(&self) -> Vec<&str> {
        match self {
            Mirror::FindLinks(links) => vec!["--no-index", "--find-links", links],
            Mirror::Index(url) => vec!["--index-url", url],
        }
    }

    fn peer_name(&self) -> &'static str {
        match self {
            Mirror::FindLinks(_) => "uv pip install --no-index --find-links",
            Mirror::Index(_) => "uv pip install --index-url",
        }
    }
}

/// Installs from a local mirror of real distributions, into a fresh environment each time,
/// uv's cache warm for both: wsp's venv backend installing with uv against `uv pip install`.
/// The mirror is `WSP_BENCH_INDEX_URL`, a PEP 503 index (made and served by
/// `bench/pep503_mirror.py`), or else `WSP_BENCH_MIRROR`, a directory of wheels (`pip download
/// --only-binary=:all: --dest DIR PKG...`); `WSP_BENCH_MIRROR_PACKAGES` names the requirements
/// to install from it, space-separated (their dependencies come from the same mirror). Skipped
/// unless a mirror and the packages are given.
fn mirror(c: &mut Criterion) {
    let (Some(mirror), Ok(packages)) = (
        Mirror::from_env(),
        std::env::var("WSP_BENCH_MIRROR_PACKAGES"),
    ) else {
        return;
    };
    let names: Vec<String> = packages.split_whitespace().map(str::to_owned).collect();
    let rt = runtime();
    let info = interpreter(&rt);
    let uv = find_uv(None).expect("uv is on PATH");
    let scratch = tempfile::tempdir().expect("a temp dir");
    let request = mirror.request(&names);

    let mut group = c.benchmark_group("install from a local mirror");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(40));
    let backend = venv_backend(
        Installer::Uv(uv.clone()),
        false,
        scratch.path().join("seed"),
    );
    let fixture = Fixture::for_backend(&backend);
    let mut client = rt.block_on(fixture.client());
    group.bench_function("wsp environment/install (venv backend, uv)", |b| {
        b.iter_custom(|iters| timed_wsp_installs(&rt, &mut client, iters, &request))
    });
    let envs = scratch.path().join("envs");
    let options = mirror.uv_options();
    group.bench_function(mirror.peer_name(), |b| {
        b.iter_custom(|iters| {
            let make = |root: &Path| uv_venv(&uv, &info.executable, root);
            let install = |root: &Path| {
                run_quietly(
                    Command::new(&uv)
                        .args(["pip", "install", "--no-config", "--python"])
                        .arg(root.join("bin/python"))
                        .args(&options)
                        .args(&names),
                )
            };
            timed_installs(&envs, iters, make, install)
        })
    });
    group.finish();
}

criterion_group!(benches, install, create, mirror);
criterion_main!(benches);
