//! Resolution against this machine's real interpreters: every pyenv version by `X.Y` and by
//! `X.Y.Z`, newest patch, source preference, and the unavailable error.

mod interpreters_support;

use std::fs;
use std::os::unix::fs::symlink;

use interpreters_support::*;
use wsp_interpreters::{
    Inventory, InventoryConfig, PythonVersion, ResolveError, Source, VersionRequest,
};

#[tokio::test]
async fn every_pyenv_version_resolves_by_minor_and_by_exact_version() {
    let Some(root) = pyenv_root() else {
        eprintln!("PYENV_ROOT has no versions directory: skipping");
        return;
    };
    let installed = pyenv_versions(&root);
    let minors: Vec<u64> = installed
        .iter()
        .filter(|(v, _)| v.major == 3)
        .map(|(v, _)| v.minor)
        .collect();
    for minor in 6..=13 {
        if !minors.contains(&minor) {
            eprintln!("pyenv has no Python 3.{minor}; it is not checked");
        }
    }
    assert!(!installed.is_empty(), "pyenv root without plain versions");
    let inventory = Inventory::new(pyenv_only(&root));
    for (version, dir) in &installed {
        let newest_of_minor = installed
            .iter()
            .filter(|(o, _)| o.major == version.major && o.minor == version.minor)
            .map(|(o, _)| *o)
            .max();
        let minor_request: VersionRequest = v(&format!("{}.{}", version.major, version.minor));
        let by_minor = inventory
            .resolve(&minor_request)
            .await
            .expect("resolve X.Y");
        assert_eq!(Some(by_minor.version), newest_of_minor, "{minor_request}");
        let exact_request = VersionRequest::Exact(*version);
        let exact = inventory
            .resolve(&exact_request)
            .await
            .expect("resolve X.Y.Z");
        assert_eq!(exact.version, *version);
        let real_dir = fs::canonicalize(dir).expect("canonical version dir");
        assert!(
            exact.executable.starts_with(&real_dir),
            "{} is not in {}",
            exact.executable.display(),
            real_dir.display()
        );
        assert!(exact.executable.is_absolute());
        assert_eq!(
            fs::canonicalize(&exact.base_prefix).ok(),
            Some(real_dir.clone())
        );
        assert_eq!(
            fs::canonicalize(&exact.base_exec_prefix).ok(),
            Some(real_dir)
        );
        assert_eq!(exact.implementation, "cpython");
        let expected_abiflags = if (version.major, version.minor) >= (3, 8) || version.major < 3 {
            ""
        } else {
            "m"
        };
        assert_eq!(exact.abiflags, expected_abiflags, "{version}");
    }
    assert_eq!(
        inventory.query_count(),
        installed.len() as u64,
        "each interpreter is queried exactly once"
    );
    let mut newest_first: Vec<PythonVersion> = installed.iter().map(|(v, _)| *v).collect();
    newest_first.sort_by(|a, b| b.cmp(a));
    let listed: Vec<PythonVersion> = inventory
        .available()
        .await
        .iter()
        .map(|available| available.version)
        .collect();
    assert_eq!(
        listed, newest_first,
        "available() lists every version, newest first"
    );
}

#[tokio::test]
async fn an_unknown_version_is_unavailable_and_lists_what_is() {
    let Some(root) = pyenv_root() else {
        eprintln!("no pyenv root: skipping");
        return;
    };
    let inventory = Inventory::new(pyenv_only(&root));
    let expected: Vec<String> = pyenv_versions(&root)
        .iter()
        .map(|(v, _)| v.to_string())
        .collect();
    let listed: Vec<String> = inventory
        .available_versions()
        .await
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(listed, expected);
    for request in ["3.99", "3.12.99", "4.0.0"] {
        let error = inventory.resolve(&v(request)).await.unwrap_err();
        assert_eq!(
            error,
            ResolveError::Unavailable {
                requested: request.to_owned(),
                available: expected.clone(),
            }
        );
    }
    let empty = Inventory::new(nothing());
    assert_eq!(
        empty.resolve(&v("3.12")).await,
        Err(ResolveError::Unavailable {
            requested: "3.12".into(),
            available: vec![],
        })
    );
}

#[tokio::test]
async fn the_newest_patch_wins_and_lying_directories_are_caught() {
    let Some((real, real_version)) = real_interpreter(3, 12) else {
        return;
    };
    let real_dir = real.parent().and_then(|bin| bin.parent()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let fake_root = tmp.path().join("pyenv");
    let older = PythonVersion {
        patch: 0,
        ..real_version
    };
    assert_ne!(older, real_version, "pyenv 3.12 should not be 3.12.0");
    let marker = tmp.path().join("older-ran");
    // An "older patch" whose directory name says 3.12.0 but which is really the 3.12 we have.
    wrapper(
        &fake_root.join(format!("versions/{older}/bin/python3.12")),
        &marker,
        &real,
    );
    symlink(real_dir, fake_root.join(format!("versions/{real_version}"))).unwrap();
    let inventory = Inventory::new(pyenv_only(&fake_root));
    let candidates = inventory.candidates().await;
    let mut versions: Vec<_> = candidates.iter().map(|c| c.version).collect();
    versions.sort();
    assert_eq!(versions, [Some(older), Some(real_version)]);

    let newest = inventory.resolve(&v("3.12")).await.unwrap();
    assert_eq!(newest.version, real_version);
    assert_eq!(newest.executable, fs::canonicalize(&real).unwrap());
    assert!(
        !marker.exists(),
        "the older patch was run although the newest works"
    );

    // Asking for the older patch runs it, and its answer (the real version) is refused.
    let older_request = VersionRequest::Exact(older);
    assert!(matches!(
        inventory.resolve(&older_request).await,
        Err(ResolveError::Unavailable { .. })
    ));
    assert!(marker.exists());
}

#[tokio::test]
async fn a_queried_newer_patch_beats_an_older_one_known_from_files() {
    let Some((real, real_version)) = real_interpreter(3, 12) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let fake_root = tmp.path().join("pyenv");
    let marker = tmp.path().join("older-ran");
    wrapper(
        &fake_root.join("versions/3.12.0/bin/python3.12"),
        &marker,
        &real,
    );
    // No files tell this one's version: only a query can.
    let configured = tmp.path().join("elsewhere/bin/python3.12");
    wrapper(&configured, &tmp.path().join("configured-ran"), &real);
    let inventory = Inventory::new(InventoryConfig {
        pyenv_root: Some(fake_root),
        extra_interpreters: vec![configured.clone()],
        ..InventoryConfig::default()
    });
    let candidates = inventory.candidates().await;
    let configured_candidate = candidates
        .iter()
        .find(|c| c.source == Source::Configured)
        .expect("configured candidate");
    assert_eq!(configured_candidate.version, None);

    let resolved = inventory.resolve_detailed(&v("3.12")).await.unwrap();
    assert_eq!(resolved.candidate.source, Source::Configured);
    assert_eq!(resolved.candidate.executable, configured);
    assert_eq!(resolved.info.version, real_version);
    assert!(!marker.exists());
    assert_eq!(
        inventory.available_versions().await,
        [v::<PythonVersion>("3.12.0"), real_version]
    );
}

/// The documented order among interpreters of one version: pyenv, uv, mise, asdf, custom
/// locators, configured paths, system directories, `PATH`. Each source holds its own file (a
/// script running the real interpreter), and sources are switched off one at a time.
#[tokio::test]
async fn equal_versions_prefer_pyenv_uv_mise_asdf_custom_configured_system_path() {
    let Some((real, version)) = real_interpreter(3, 11) else {
        return;
    };
    let real_dir = real.parent().and_then(|bin| bin.parent()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let ran = |name: &str| tmp.path().join(format!("{name}-ran"));
    let pyenv = tmp.path().join("pyenv");
    fs::create_dir_all(pyenv.join("versions")).unwrap();
    let real_name = real_dir.file_name().unwrap();
    symlink(real_dir, pyenv.join("versions").join(real_name)).unwrap();
    let uv = tmp.path().join("uv");
    let uv_exe = uv.join(format!("cpython-{version}-linux-x86_64-gnu/bin/python3.11"));
    wrapper(&uv_exe, &ran("uv"), &real);
    let [mise, asdf] = ["mise", "asdf"].map(|name| tmp.path().join(name));
    for (installs, name) in [(&mise, "mise"), (&asdf, "asdf")] {
        let exe = installs.join(format!("{version}/bin/python3.11"));
        wrapper(&exe, &ran(name), &real);
    }
    let custom = tmp.path().join("custom");
    wrapper(&custom.join("python3.11"), &ran("custom"), &real);
    let configured = tmp.path().join("configured/python3.11");
    wrapper(&configured, &ran("configured"), &real);
    let system = tmp.path().join("usr-bin");
    wrapper(&system.join("python3.11"), &ran("system"), &real);
    let on_path = tmp.path().join("bin");
    wrapper(&on_path.join("python3.11"), &ran("path"), &real);
    let mut config = InventoryConfig {
        pyenv_root: Some(pyenv),
        uv_python_dir: Some(uv),
        mise_python_dir: Some(mise),
        asdf_python_dir: Some(asdf),
        extra_interpreters: vec![configured],
        system_dirs: vec![system],
        path: Some(search_path(&[&on_path])),
        ..InventoryConfig::default()
    }
    .with_locator(ListedDir::new("custom", &custom));
    let expected = [
        Source::Pyenv,
        Source::UvManaged,
        Source::Mise,
        Source::Asdf,
        Source::Custom("custom".into()),
        Source::Configured,
        Source::System,
        Source::Path,
    ];
    let every_source = config.clone();
    let candidates = Inventory::new(config.clone()).candidates().await;
    let sources: Vec<Source> = candidates.iter().map(|c| c.source.clone()).collect();
    assert_eq!(sources, expected, "candidates come in preference order");
    for source in expected.clone() {
        let chosen = Inventory::new(config.clone())
            .resolve_detailed(&v("3.11"))
            .await
            .unwrap();
        assert_eq!(chosen.candidate.source, source);
        assert_eq!(chosen.info.version, version);
        if source == Source::Pyenv {
            for name in ["uv", "mise", "asdf"] {
                assert!(
                    !ran(name).exists(),
                    "{name} ran: its directory told its version"
                );
            }
        }
        match source {
            Source::Pyenv => config.pyenv_root = None,
            Source::UvManaged => config.uv_python_dir = None,
            Source::Mise => config.mise_python_dir = None,
            Source::Asdf => config.asdf_python_dir = None,
            Source::Custom(_) => config.custom_locators.clear(),
            Source::Configured => config.extra_interpreters.clear(),
            Source::System => config.system_dirs.clear(),
            _ => config.path = None,
        }
    }
    assert!(ran("path").exists(), "the last one standing was run");
    let listed: Vec<Source> = Inventory::new(every_source)
        .available()
        .await
        .into_iter()
        .map(|available| available.candidate.source)
        .collect();
    assert_eq!(
        listed, expected,
        "available() lists equal versions as resolution prefers them"
    );
}
