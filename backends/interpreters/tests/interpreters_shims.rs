//! The `PATH` trap: pyenv shims are never run, failing interpreters are skipped without
//! ending the search, and broken interpreters give precise query errors.

mod interpreters_support;

use std::fs;
use std::time::{Duration, Instant};

use interpreters_support::*;
use wsp_interpreters::{Inventory, InventoryConfig, QueryError, Source};

#[tokio::test]
async fn failing_and_shim_entries_on_path_do_not_end_the_search() {
    let Some((real, version)) = real_interpreter(3, 12) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    // A shims directory whose shim would leave a marker and fail like the real trap does.
    let shims = tmp.path().join("shims");
    let shim_ran = tmp.path().join("shim-ran");
    marked_script(&shims.join("python3.12"), &shim_ran, "exit 127");
    // A script elsewhere that mentions pyenv: also a shim.
    let pyenvish = tmp.path().join("pyenvish");
    let pyenvish_ran = tmp.path().join("pyenvish-ran");
    marked_script(
        &pyenvish.join("python3"),
        &pyenvish_ran,
        "exec pyenv exec python3 \"$@\"",
    );
    // Not a shim, but it fails exactly like one: it is tried and skipped.
    let failing = tmp.path().join("failing");
    let failing_ran = tmp.path().join("failing-ran");
    marked_script(&failing.join("python3.12"), &failing_ran, "exit 127");
    let good = tmp.path().join("good");
    link_into(&good, "python3.12", &real);

    let inventory = Inventory::new(InventoryConfig {
        path: Some(search_path(&[&shims, &pyenvish, &failing, &good])),
        ..InventoryConfig::default()
    });
    let candidates = inventory.candidates().await;
    let paths: Vec<_> = candidates.iter().map(|c| c.executable.clone()).collect();
    assert_eq!(
        paths,
        [failing.join("python3.12"), good.join("python3.12")],
        "shims are not candidates"
    );
    assert_eq!(
        candidates[1].version,
        Some(version),
        "read from patchlevel.h"
    );

    let resolved = inventory.resolve_detailed(&v("3.12")).await.unwrap();
    assert_eq!(resolved.candidate.source, Source::Path);
    assert_eq!(resolved.info.executable, fs::canonicalize(&real).unwrap());
    assert_eq!(resolved.info.version, version);
    inventory.resolve(&v("3.12")).await.unwrap();
    let failing_runs = fs::read_to_string(&failing_ran).unwrap_or_default();
    assert_eq!(
        failing_runs.lines().count(),
        1,
        "tried once, then remembered"
    );
    assert!(!shim_ran.exists(), "a shim was run");
    assert!(!pyenvish_ran.exists(), "a script mentioning pyenv was run");

    for shim in [shims.join("python3.12"), pyenvish.join("python3")] {
        assert!(matches!(
            inventory.query(&shim).await,
            Err(QueryError::Shim { .. })
        ));
    }
    assert!(!shim_ran.exists() && !pyenvish_ran.exists());
}

#[tokio::test]
async fn the_real_shims_lead_to_the_pyenv_versions_behind_them() {
    let Some(root) = pyenv_root() else {
        eprintln!("no pyenv root: skipping");
        return;
    };
    let shims = root.join("shims");
    if !shims.join("python3.12").exists() {
        skip_outside_ci("no pyenv python3.12 shim");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let failing = tmp.path().join("failing");
    write_script(&failing.join("python3.12"), "#!/bin/sh\nexit 127\n");
    // No pyenv root configured: only the shims on PATH tell where pyenv is.
    let inventory = Inventory::new(InventoryConfig {
        path: Some(search_path(&[&shims, &failing])),
        ..InventoryConfig::default()
    });
    let candidates = inventory.candidates().await;
    assert!(candidates.iter().all(|c| !c.executable.starts_with(&shims)));
    assert!(candidates.iter().any(|c| c.source == Source::Pyenv));
    let resolved = inventory.resolve_detailed(&v("3.12")).await.unwrap();
    assert_eq!(resolved.candidate.source, Source::Pyenv);
    assert!(resolved
        .info
        .executable
        .starts_with(fs::canonicalize(root.join("versions")).unwrap()));
}

#[tokio::test]
async fn this_machines_own_environment_resolves_every_pyenv_minor() {
    let config = InventoryConfig::from_env();
    let Some(root) = pyenv_root() else {
        eprintln!("no pyenv root: skipping");
        return;
    };
    let inventory = Inventory::new(config);
    for (version, _) in pyenv_versions(&root) {
        let request = v(&format!("{}.{}", version.major, version.minor));
        let info = inventory.resolve(&request).await.unwrap();
        assert!(
            request.matches(&info.version),
            "{request} gave {}",
            info.version
        );
        assert!(!info.executable.starts_with(root.join("shims")));
    }
}

#[tokio::test]
async fn broken_interpreters_give_precise_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let inventory = Inventory::new(InventoryConfig::default());
    let script = |name: &str, body: &str| {
        let path = tmp.path().join(name);
        write_script(&path, body);
        path
    };
    let cases = [
        (
            script("exits", "#!/bin/sh\necho oops >&2\nexit 3\n"),
            "failed",
        ),
        (script("garbage", "#!/bin/sh\necho hello\n"), "output"),
        (
            script("wrong-json", "#!/bin/sh\necho '{\"version\": 3}'\n"),
            "output",
        ),
        (
            script("flood", "#!/bin/sh\nhead -c 1000000 /dev/zero\n"),
            "output",
        ),
        (tmp.path().join("missing"), "inaccessible"),
    ];
    for (path, expected) in cases {
        let error = inventory.query(&path).await.unwrap_err();
        let kind = match &error {
            QueryError::Failed { stderr, .. } => {
                assert_eq!(stderr, "oops");
                "failed"
            }
            QueryError::BadOutput { .. } => "output",
            QueryError::Inaccessible { .. } => "inaccessible",
            other => panic!("{}: unexpected {other}", path.display()),
        };
        assert_eq!(kind, expected, "{}: {error}", path.display());
    }
    let not_executable = tmp.path().join("plain");
    fs::write(&not_executable, "").unwrap();
    assert!(matches!(
        inventory.query(&not_executable).await,
        Err(QueryError::Spawn { .. })
    ));
}

#[tokio::test]
async fn a_hanging_interpreter_is_killed_with_its_children() {
    let tmp = tempfile::tempdir().unwrap();
    let hanging = tmp.path().join("python3");
    // The background child keeps stdout open after the script itself is gone.
    write_script(&hanging, "#!/bin/sh\nsleep 60 &\nexec sleep 60\n");
    let inventory =
        Inventory::with_query_timeout(InventoryConfig::default(), Duration::from_millis(300));
    let started = Instant::now();
    let error = inventory.query(&hanging).await.unwrap_err();
    assert!(matches!(error, QueryError::Timeout { .. }), "{error}");
    assert!(started.elapsed() < Duration::from_secs(5));
    // A timeout may be passing: the next query runs again.
    inventory.query(&hanging).await.unwrap_err();
    assert_eq!(inventory.query_count(), 2);
}

#[tokio::test]
async fn a_configured_interpreter_that_does_not_work_is_skipped() {
    let Some((real, version)) = real_interpreter(3, 11) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let broken = tmp.path().join("broken/python3.11");
    write_script(&broken, "#!/bin/sh\nexit 1\n");
    let inventory = Inventory::new(InventoryConfig {
        extra_interpreters: vec![tmp.path().join("absent"), broken, real.clone()],
        ..InventoryConfig::default()
    });
    assert_eq!(inventory.candidates().await.len(), 2);
    let info = inventory.resolve(&v("3.11")).await.unwrap();
    assert_eq!(info.version, version);
    assert_eq!(inventory.available_versions().await, [version]);
}
