//! Conda installs against rattler's own pipeline (the one pixi and `rattler create` run), from
//! one local channel holding a `python` package over pyenv's 3.12.1 and 10 `noarch: python`
//! packages (some depending on others, four files each), every case into a fresh prefix with
//! the same warm package cache (`<cache>/pkgs`, filled before the first sample; each case opens
//! it anew per iteration, as wsp does per request and a `pixi` or `rattler` process per run):
//!
//! - `wsp provision + install`: [`CondaBackend::provision`] of Python 3.12, then
//!   [`CondaBackend::install`] of the 10 packages, as `environment/create` with packages does;
//! - `wsp install`: the install alone, into a prefix provisioned before the clock starts;
//! - `rattler gateway + solve + Installer`: the channel's repodata read with a new
//!   [`Gateway`], the virtual packages detected, python 3.12 and the 10 packages solved with
//!   resolvo, and the solution installed by rattler's [`Installer`];
//! - `rattler Installer (pre-solved)`: the [`Installer`] alone, given the solution (the floor).
//!
//! Prefix directories are made outside the clock and all removed at the end of the run: removed
//! after each iteration, they made the files every case creates in the iterations that followed
//! slower (ext4 passes over inodes freed moments before).
//!
//! `cargo bench -p wsp-backend-conda --bench install` (pyenv with 3.12.1)

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use rattler::install::Installer;
use rattler::package_cache::PackageCache;
use rattler_conda_types::{
    Channel, ChannelConfig, MatchSpec, ParseStrictness, RepoDataRecord, Subdir,
};
use rattler_repodata_gateway::Gateway;
use rattler_solve::{SolverImpl, SolverTask};
use rattler_virtual_packages::{VirtualPackageOverrides, VirtualPackages};
use url::Url;
use wsp_backend::{Backend, InstallRequest, ProvisionRequest};
use wsp_backend_conda::{CondaBackend, CondaConfig};
use wsp_install::InstallSource;
use wsp_testing::conda::{build_local_channel_with, CondaPackage, PythonBuild};

const PACKAGES: usize = 10;

/// `wsp-bench-00` … `wsp-bench-09`: each a module plus a package of three files; the odd ones
/// depend on the one before them, and `wsp-bench-09` on `wsp-bench-00` too.
fn packages() -> Vec<CondaPackage> {
    (0..PACKAGES)
        .map(|i| {
            let name = format!("wsp-bench-{i:02}");
            let module = format!("site-packages/wsp_bench_{i:02}_data");
            let mut package = CondaPackage::new(&name, "1.0")
                .raw_file(&format!("{module}/__init__.py"), "from .core import f\n")
                .raw_file(&format!("{module}/core.py"), "def f():\n    return 1\n")
                .raw_file(&format!("{module}/data.txt"), &"x".repeat(4096));
            if i % 2 == 1 {
                package = package.depends(&format!("wsp-bench-{:02} >=1.0", i - 1));
            }
            if i == PACKAGES - 1 {
                package = package.depends("wsp-bench-00");
            }
            package
        })
        .collect()
}

/// The channel, the shared cache and the prefixes, in one temporary directory.
struct Setup {
    dir: tempfile::TempDir,
    channel: Url,
    names: Vec<String>,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().expect("a temp dir");
        let python = PythonBuild::from_pyenv("3.12.1").expect("pyenv has 3.12.1");
        let packages = packages();
        let channel = build_local_channel_with(&dir.path().join("channel"), &[python], &packages)
            .expect("a local channel");
        let names = packages.iter().map(|p| p.name.clone()).collect();
        Setup {
            dir,
            channel,
            names,
        }
    }

    fn cache_dir(&self) -> PathBuf {
        self.dir.path().join("cache")
    }

    fn backend(&self) -> CondaBackend {
        CondaBackend::new(CondaConfig {
            channels: vec![self.channel.to_string()],
            cache_dir: self.cache_dir(),
            platform: None,
        })
    }

    fn package_cache(&self) -> PackageCache {
        PackageCache::new(self.cache_dir().join("pkgs"))
    }

    /// An empty directory at a path no prefix of this run had.
    fn fresh_root(&self) -> PathBuf {
        static MADE: AtomicU64 = AtomicU64::new(0);
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        let root = self.dir.path().join("envs").join(format!("env-{n}"));
        std::fs::create_dir_all(&root).expect("a prefix directory");
        root
    }

    /// python 3.12 and the 10 packages.
    fn specs(&self) -> Vec<MatchSpec> {
        std::iter::once("python 3.12.*".to_owned())
            .chain(self.names.iter().cloned())
            .map(|text| MatchSpec::from_str(&text, ParseStrictness::Strict).expect("a spec"))
            .collect()
    }
}

async fn wsp_provision(backend: &CondaBackend, root: &Path) {
    let request = ProvisionRequest {
        root: root.to_owned(),
        name: "bench".into(),
        python_version: "3.12".parse().expect("a version"),
        interpreter: None,
    };
    backend.provision(request).await.expect("provisioned");
}

async fn wsp_install(backend: &CondaBackend, root: &Path, names: &[String]) {
    let request = InstallRequest {
        root: root.to_owned(),
        environment_id: "env-0123456789ab".into(),
        packages: names.to_vec(),
        source: InstallSource::default(),
        upgrade: false,
        progress: None,
        sandbox: None,
    };
    backend.install(request).await.expect("installed");
}

/// rattler's pipeline up to the installer: a new gateway's repodata, the virtual packages, and
/// a resolvo solve of `specs`.
async fn rattler_solve(
    setup: &Setup,
    cache: &PackageCache,
    specs: Vec<MatchSpec>,
) -> Vec<RepoDataRecord> {
    let channel_config = ChannelConfig::default_with_root_dir(setup.dir.path().to_owned());
    let channel = Channel::from_str(setup.channel.as_str(), &channel_config).expect("a channel");
    let platform = Subdir::current().expect("a known platform");
    let gateway = Gateway::builder()
        .with_cache_dir(setup.cache_dir().join("repodata"))
        .with_package_cache(cache.clone())
        .finish();
    let repodata = gateway
        .query([channel], [platform, Subdir::NoArch], specs.clone())
        .recursive(true)
        .execute()
        .await
        .expect("repodata")
        .repodata;
    let cache_dir = setup.cache_dir().join("virtual-packages");
    let solved = tokio::task::spawn_blocking(move || {
        let virtual_packages =
            VirtualPackages::detect(&VirtualPackageOverrides::from_env(), Some(&cache_dir))
                .expect("virtual packages")
                .into_generic_virtual_packages()
                .collect();
        let task = SolverTask {
            specs,
            virtual_packages,
            ..SolverTask::from_iter(&repodata)
        };
        rattler_solve::resolvo::Solver.solve(task)
    })
    .await
    .expect("the solver ran");
    solved.expect("a solution").records
}

async fn rattler_install(
    cache: &PackageCache,
    root: &Path,
    specs: Vec<MatchSpec>,
    records: Vec<RepoDataRecord>,
) {
    Installer::new()
        .with_package_cache(cache.clone())
        .with_requested_specs(specs)
        .install(root, records)
        .await
        .expect("installed");
}

/// Times `measured` into a fresh prefix each iteration, `prepare`d outside the clock.
fn timed<P, M>(
    rt: &tokio::runtime::Runtime,
    setup: &Setup,
    iters: u64,
    prepare: impl Fn(PathBuf) -> P,
    measured: impl Fn(PathBuf) -> M,
) -> Duration
where
    P: std::future::Future<Output = ()>,
    M: std::future::Future<Output = ()>,
{
    let last = format!("conda-meta/wsp-bench-{:02}-1.0-0.json", PACKAGES - 1);
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let root = setup.fresh_root();
        rt.block_on(prepare(root.clone()));
        let start = Instant::now();
        rt.block_on(measured(root.clone()));
        total += start.elapsed();
        assert!(root.join(&last).is_file(), "the last package is installed");
    }
    total
}

fn install(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let setup = Setup::new();
    let backend = backend_warmed(&rt, &setup);
    let specs = setup.specs();
    let solved = rt.block_on(rattler_solve(&setup, &setup.package_cache(), specs.clone()));
    assert_eq!(solved.len(), PACKAGES + 1, "python and the 10 packages");
    let names = &setup.names;

    let mut group = c.benchmark_group("conda: python 3.12 + 10 noarch packages, warm cache");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(20));
    settle();
    group.bench_function("wsp provision + install", |b| {
        b.iter_custom(|iters| {
            let measured = |root: PathBuf| {
                let backend = &backend;
                async move {
                    wsp_provision(backend, &root).await;
                    wsp_install(backend, &root, names).await;
                }
            };
            timed(&rt, &setup, iters, |_| async {}, measured)
        })
    });
    settle();
    group.bench_function("wsp install", |b| {
        b.iter_custom(|iters| {
            let backend = &backend;
            let prepare = |root: PathBuf| async move { wsp_provision(backend, &root).await };
            let measured = |root: PathBuf| async move { wsp_install(backend, &root, names).await };
            timed(&rt, &setup, iters, prepare, measured)
        })
    });
    settle();
    group.bench_function("rattler gateway + solve + Installer", |b| {
        b.iter_custom(|iters| {
            let measured = |root: PathBuf| {
                let (setup, specs) = (&setup, specs.clone());
                async move {
                    let cache = setup.package_cache();
                    let records = rattler_solve(setup, &cache, specs.clone()).await;
                    rattler_install(&cache, &root, specs, records).await;
                }
            };
            timed(&rt, &setup, iters, |_| async {}, measured)
        })
    });
    settle();
    group.bench_function("rattler Installer (pre-solved)", |b| {
        b.iter_custom(|iters| {
            let measured = |root: PathBuf| {
                let (setup, specs, records) = (&setup, specs.clone(), solved.clone());
                async move { rattler_install(&setup.package_cache(), &root, specs, records).await }
            };
            timed(&rt, &setup, iters, |_| async {}, measured)
        })
    });
    group.finish();
}

/// Writes out what earlier cases left dirty, so that its writeback lands in no later case's
/// clock.
fn settle() {
    rustix::fs::sync();
}

/// The backend, after one create with the packages has filled the package cache and the
/// repodata and virtual-package caches.
fn backend_warmed(rt: &tokio::runtime::Runtime, setup: &Setup) -> CondaBackend {
    let backend = setup.backend();
    let root = setup.fresh_root();
    rt.block_on(async {
        wsp_provision(&backend, &root).await;
        wsp_install(&backend, &root, &setup.names).await;
    });
    backend
}

criterion_group!(benches, install);
criterion_main!(benches);
