//! pip seeding: the first create per interpreter fills the seed cache (running `ensurepip` in a
//! native environment), later creates replicate it; the seeded pip works and installs wheels.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{
    block_on, build_wheel, for_each, install_and_import, python, python3_seeding_boundaries,
    run_ok, site_packages,
};
use wsp_backend_venv::{create_venv, SeedOutcome, VenvMode, VenvOptions};
use wsp_interpreters::InterpreterInfo;

/// A seed cache shared by the tests that are not about filling it (kept between runs under
/// the target directory).
fn shared_cache() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("wsp-venv-seed-cache")
}

fn seeded(cache: Option<&Path>) -> VenvOptions {
    VenvOptions {
        seed_pip: true,
        seed_cache_dir: cache.map(Path::to_path_buf),
        ..VenvOptions::default()
    }
}

/// Runs `bin/<script> --version` and checks that pip reports this environment's site-packages.
fn assert_pip_runs(root: &Path, info: &InterpreterInfo, script: &str) {
    let output = run_ok(Command::new(root.join("bin").join(script)).arg("--version"));
    let site = site_packages(root, info);
    assert!(
        output.contains(&*site.to_string_lossy()),
        "{script} of {}: {output}",
        info.version
    );
}

#[test]
fn seeding_fills_the_cache_once_and_works_on_the_python3s_where_ensurepip_changes() {
    for_each(python3_seeding_boundaries(), |info| {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = dir.path().join("cache");
        let (first, second) = (dir.path().join("first"), dir.path().join("second"));
        let made = block_on(create_venv(&first, info, &seeded(Some(&cache))))
            .unwrap_or_else(|e| panic!("{}: {e}", info.version));
        assert_eq!(made.seed, Some(SeedOutcome::CacheFilled));
        let made = block_on(create_venv(&second, info, &seeded(Some(&cache)))).expect("second");
        assert_eq!(made.seed, Some(SeedOutcome::CacheHit), "{}", info.version);

        // One launcher text serves every name; running the versioned one is enough.
        let minor = format!("pip{}.{}", info.version.major, info.version.minor);
        assert_pip_runs(&second, info, &minor);
        let read = |name: &str| {
            let text = fs::read_to_string(second.join("bin").join(name)).expect("pip script");
            text.replace(&format!("`{name}`"), "`NAME`")
        };
        for script in ["pip", "pip3"] {
            assert_eq!(
                read(script),
                read(&minor),
                "{script} runs what {minor} runs"
            );
        }
        let site = site_packages(&second, info);
        let pip_init = fs::metadata(site.join("pip/__init__.py")).expect("pip is there");
        assert!(
            pip_init.nlink() >= 3,
            "the cache, first and second share pip's files"
        );
        // pip's bytecode came along and is valid: a run free to write bytecode keeps it shared.
        run_ok(
            Command::new(second.join("bin").join(&minor))
                .arg("--version")
                .env_remove("PYTHONDONTWRITEBYTECODE"),
        );
        let tag = format!("cpython-{}{}", info.version.major, info.version.minor);
        let pyc = site.join(format!("pip/__pycache__/__init__.{tag}.pyc"));
        let pyc = fs::metadata(&pyc).unwrap_or_else(|e| panic!("{}: {e}", pyc.display()));
        assert!(pyc.nlink() >= 3, "pip's bytecode is the cache's");
        let leftovers: Vec<_> = fs::read_dir(&cache)
            .expect("cache dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.contains(".partial-"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");

        let wheel = build_wheel(&info.executable, dir.path());
        install_and_import(&first, &wheel, &site_packages(&first, info));
    });
}

#[test]
fn concurrent_first_creates_fill_the_cache_once() {
    let info = python("3.12");
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = dir.path().join("cache");
    let options = seeded(Some(&cache));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let outcomes = runtime.block_on(async {
        let tasks: Vec<_> = (0..3)
            .map(|i| {
                let (root, info, options) = (
                    dir.path().join(format!("env{i}")),
                    info.clone(),
                    options.clone(),
                );
                tokio::spawn(async move { create_venv(&root, &info, &options).await })
            })
            .collect();
        let mut outcomes = Vec::new();
        for task in tasks {
            let created = task.await.expect("task").expect("created");
            outcomes.push(created.seed.expect("seeded"));
        }
        outcomes
    });
    let filled = outcomes
        .iter()
        .filter(|o| **o == SeedOutcome::CacheFilled)
        .count();
    assert_eq!(filled, 1, "{outcomes:?}");
    for i in 0..3 {
        assert_pip_runs(&dir.path().join(format!("env{i}")), &info, "pip");
    }
}

#[test]
fn without_a_cache_ensurepip_runs_in_the_environment() {
    let info = python("3.12");
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("env");
    let made = block_on(create_venv(&root, &info, &seeded(None))).expect("created");
    assert_eq!(made.seed, Some(SeedOutcome::Ensurepip));
    assert_pip_runs(&root, &info, "pip");
}

#[test]
fn stdlib_mode_environments_are_seeded_from_the_same_cache() {
    let info = python("3.12");
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = shared_cache();
    let native = dir.path().join("native");
    block_on(create_venv(&native, &info, &seeded(Some(&cache)))).expect("native");
    let options = VenvOptions {
        mode: VenvMode::Stdlib,
        ..seeded(Some(&cache))
    };
    let root = dir.path().join("stdlib");
    let made = block_on(create_venv(&root, &info, &options)).expect("stdlib");
    assert_eq!(made.seed, Some(SeedOutcome::CacheHit));
    assert_pip_runs(&root, &info, "pip3");
}

#[test]
fn long_roots_get_working_scripts() {
    let info = python("3.12");
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = shared_cache();
    let root = dir
        .path()
        .join("a long directory name ".repeat(8).trim_end());
    block_on(create_venv(&root, &info, &seeded(Some(&cache)))).expect("created");
    let pip = fs::read_to_string(root.join("bin/pip")).expect("script");
    assert!(pip.starts_with("#!/bin/sh\n"), "{pip}");
    assert_pip_runs(&root, &info, "pip");
}

#[test]
fn an_unusable_cache_dir_is_an_error() {
    let info = python("3.12");
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = dir.path().join("cache");
    fs::write(&cache, "a file, not a directory").expect("blocker");
    let error = block_on(create_venv(
        &dir.path().join("env"),
        &info,
        &seeded(Some(&cache)),
    ))
    .expect_err("cache unusable");
    assert!(error.to_string().contains("cache"), "{error}");
}
