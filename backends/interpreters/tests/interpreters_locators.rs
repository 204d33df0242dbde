//! The locators beyond pyenv and `PATH`: mise and asdf installs in a home directory, the
//! system's `/usr/bin`, and locators a user adds. Install trees are built in temporary
//! directories with links to this machine's real pyenv interpreters, so every query is real.

mod interpreters_support;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::atomic::Ordering;

use interpreters_support::*;
use wsp_interpreters::locators::{InstallsLocator, SystemLocator, SYSTEM_DIRS};
use wsp_interpreters::{Candidate, Inventory, InventoryConfig, Locator, Source};

/// `config` searching only what its home-derived fields say: no system dirs, no `PATH`.
fn home_only(mut config: InventoryConfig) -> InventoryConfig {
    config.system_dirs.clear();
    config.path = None;
    config
}

#[tokio::test]
async fn mise_and_asdf_installs_in_a_home_are_found_and_queried() {
    let (Some((py312, v312)), Some((py311, v311))) =
        (real_interpreter(3, 12), real_interpreter(3, 11))
    else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let mise = home.path().join(".local/share/mise/installs/python");
    let asdf = home.path().join(".asdf/installs/python");
    let mise_bin = link_installation(&mise, &v312, &py312);
    // mise's alias links (`3.12 -> 3.12.1`) are the same installation again.
    symlink(v312.to_string(), mise.join("3.12")).unwrap();
    symlink(v312.to_string(), mise.join("latest")).unwrap();
    let asdf_bin = link_installation(&asdf, &v311, &py311);
    let listed: Vec<_> = InstallsLocator::mise(&mise)
        .find()
        .into_iter()
        .map(|c| c.executable)
        .collect();
    assert_eq!(
        listed,
        [mise_bin.join("python3.12")],
        "aliases are not listed"
    );

    let inventory = Inventory::new(home_only(config_from_vars(&[("HOME", home.path())])));
    let candidates = inventory.candidates().await;
    assert_eq!(
        candidates,
        [
            Candidate {
                executable: mise_bin.join("python3.12"),
                version: Some(v312),
                source: Source::Mise,
            },
            Candidate {
                executable: asdf_bin.join("python3.11"),
                version: Some(v311),
                source: Source::Asdf,
            },
        ]
    );
    assert_eq!(
        inventory.query_count(),
        0,
        "versions come from directory names"
    );
    let chosen = inventory.resolve_detailed(&v("3.12")).await.unwrap();
    assert_eq!(chosen.candidate.source, Source::Mise);
    assert_eq!(chosen.info.version, v312);
    assert_eq!(chosen.info.executable, fs::canonicalize(&py312).unwrap());
    let chosen = inventory.resolve_detailed(&v("3.11")).await.unwrap();
    assert_eq!(chosen.candidate.source, Source::Asdf);
    assert_eq!(chosen.info.executable, fs::canonicalize(&py311).unwrap());
    assert_eq!(inventory.query_count(), 2);

    // An installation added later is seen by the next resolve of the same inventory.
    let Some((py313, v313)) = real_interpreter(3, 13) else {
        return;
    };
    link_installation(&asdf, &v313, &py313);
    let chosen = inventory.resolve_detailed(&v("3.13")).await.unwrap();
    assert_eq!(chosen.candidate.source, Source::Asdf);
    assert_eq!(chosen.info.version, v313);
}

#[tokio::test]
async fn data_dir_variables_move_mise_and_asdf() {
    let Some((real, version)) = real_interpreter(3, 12) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    link_installation(&home.join(".asdf/installs/python"), &version, &real);
    let mise_data = tmp.path().join("mise-data");
    let asdf_data = tmp.path().join("asdf-data");
    link_installation(&mise_data.join("installs/python"), &version, &real);
    let config = home_only(config_from_vars(&[
        ("HOME", &home),
        ("MISE_DATA_DIR", &mise_data),
        ("ASDF_DATA_DIR", &asdf_data),
    ]));
    let candidates = Inventory::new(config).candidates().await;
    let found: Vec<(&Path, &Source)> = candidates
        .iter()
        .map(|c| (c.executable.as_path(), &c.source))
        .collect();
    let expected = mise_data.join(format!("installs/python/{version}/bin/python3.12"));
    assert_eq!(
        found,
        [(expected.as_path(), &Source::Mise)],
        "home's asdf is not searched"
    );
}

#[tokio::test]
async fn the_same_file_under_two_sources_counts_once_under_the_preferred() {
    let (Some(root), Some((real, version))) = (pyenv_root(), real_interpreter(3, 12)) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    link_installation(&home.path().join(".asdf/installs/python"), &version, &real);
    let config = InventoryConfig {
        pyenv_root: Some(root),
        ..home_only(config_from_vars(&[("HOME", home.path())]))
    };
    let inventory = Inventory::new(config);
    let of_version: Vec<Candidate> = inventory
        .candidates()
        .await
        .into_iter()
        .filter(|c| c.version == Some(version))
        .collect();
    assert_eq!(of_version.len(), 1, "{of_version:?}");
    assert_eq!(of_version[0].source, Source::Pyenv);
}

#[tokio::test]
async fn the_system_locator_finds_this_machines_python3() {
    let python3 = Path::new("/usr/bin/python3");
    if !python3.is_file() {
        eprintln!("no /usr/bin/python3 on this machine: skipping");
        return;
    }
    let found = SystemLocator::standard().find();
    assert!(
        found
            .iter()
            .any(|c| c.executable == python3 && c.source == Source::System),
        "{found:?}"
    );
    assert!(
        found.iter().all(|c| {
            let name = c.executable.file_name().unwrap().to_str().unwrap();
            name == "python3"
                || name
                    .strip_prefix("python3.")
                    .is_some_and(|minor| minor.parse::<u64>().is_ok())
        }),
        "only python3 and python3.N: {found:?}"
    );
    let config = InventoryConfig {
        system_dirs: SYSTEM_DIRS.iter().map(Into::into).collect(),
        ..InventoryConfig::default()
    };
    let inventory = Inventory::new(config);
    let info = inventory.query(python3).await.unwrap();
    let request = v(&format!("{}.{}", info.version.major, info.version.minor));
    let chosen = inventory.resolve_detailed(&request).await.unwrap();
    assert_eq!(chosen.candidate.source, Source::System);
    assert_eq!(chosen.info, info);
    assert_eq!(info.executable, fs::canonicalize(python3).unwrap());
}

#[tokio::test]
async fn system_dirs_skip_shims_broken_links_and_other_names() {
    let (Some((py312, v312)), Some((py27, _))) = (real_interpreter(3, 12), real_interpreter(2, 7))
    else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let shims = tmp.path().join("shims");
    let shim_ran = tmp.path().join("shim-ran");
    marked_script(&shims.join("python3.12"), &shim_ran, "exit 127");
    let local = tmp.path().join("local-bin");
    fs::create_dir_all(&local).unwrap();
    symlink(tmp.path().join("gone/python3.12"), local.join("python3.12")).unwrap();
    symlink(&py27, local.join("python2.7")).unwrap();
    symlink(&py312, local.join("python")).unwrap();
    symlink(&py312, local.join("python3.12-config")).unwrap();
    symlink(&py312, local.join("python3")).unwrap();
    let inventory = Inventory::new(InventoryConfig {
        system_dirs: vec![shims, local.clone(), "relative/bin".into()],
        ..InventoryConfig::default()
    });
    let found: Vec<_> = inventory
        .candidates()
        .await
        .into_iter()
        .map(|c| c.executable)
        .collect();
    assert_eq!(found, [local.join("python3")]);
    let chosen = inventory.resolve_detailed(&v("3.12")).await.unwrap();
    assert_eq!(chosen.info.version, v312);
    assert_eq!(chosen.candidate.source, Source::System);
    assert!(!shim_ran.exists(), "a shim was run");
}

#[tokio::test]
async fn a_custom_locator_is_used_by_resolve() {
    let Some((real, version)) = real_interpreter(3, 12) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("opt");
    link_into(&dir, "python3.12", &real);
    let locator = ListedDir::new("opt-pythons", &dir);
    let calls = locator.calls();
    let inventory = Inventory::new(InventoryConfig::default().with_locator(locator));
    let chosen = inventory.resolve_detailed(&v("3.12")).await.unwrap();
    assert_eq!(
        chosen.candidate.source,
        Source::Custom("opt-pythons".into())
    );
    assert_eq!(chosen.candidate.source.to_string(), "opt-pythons");
    assert_eq!(chosen.candidate.executable, dir.join("python3.12"));
    assert_eq!(chosen.info.version, version);
    assert_eq!(chosen.info.executable, fs::canonicalize(&real).unwrap());

    // Its answer is reused while its directory is unchanged, and asked again once it is not.
    inventory.resolve(&v("3.12")).await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    fs::remove_file(dir.join("python3.12")).unwrap();
    assert!(inventory.resolve(&v("3.12")).await.is_err());
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

/// A locator that always panics.
struct Panicking;

impl Locator for Panicking {
    fn name(&self) -> &str {
        "panicking"
    }

    fn find(&self) -> Vec<Candidate> {
        panic!("this locator is broken");
    }
}

#[tokio::test]
async fn unwatched_locators_are_asked_every_time_and_panics_are_contained() {
    let Some((real, _)) = real_interpreter(3, 12) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let [watched, unwatched] = ["watched", "unwatched"].map(|name| tmp.path().join(name));
    for dir in [&watched, &unwatched] {
        link_into(dir, "python3.12", &real);
    }
    let watched = ListedDir::new("watched", &watched);
    let unwatched = ListedDir {
        watch: false,
        ..ListedDir::new("unwatched", &unwatched)
    };
    let (watched_calls, unwatched_calls) = (watched.calls(), unwatched.calls());
    let inventory = Inventory::new(
        InventoryConfig::default()
            .with_locator(Panicking)
            .with_locator(watched)
            .with_locator(unwatched),
    );
    for round in 1..=3 {
        let candidates = inventory.candidates().await;
        assert_eq!(candidates.len(), 1, "one real file: {candidates:?}");
        assert_eq!(candidates[0].source, Source::Custom("watched".into()));
        assert_eq!(unwatched_calls.load(Ordering::SeqCst), round);
    }
    assert_eq!(watched_calls.load(Ordering::SeqCst), 1);
    inventory.resolve(&v("3.12")).await.unwrap();
}
