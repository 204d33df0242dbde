//! The query cache: one query per interpreter, invalidation when the file changes, and the
//! on-disk cache shared by later inventories. Also measures cold and warm resolution.

mod interpreters_support;

use std::fs;
use std::time::{Duration, Instant, SystemTime};

use interpreters_support::*;
use wsp_interpreters::{Inventory, InventoryConfig, VersionRequest};

#[tokio::test]
async fn each_interpreter_is_queried_once() {
    let Some(root) = pyenv_root() else {
        eprintln!("no pyenv root: skipping");
        return;
    };
    let Some((real, _)) = real_interpreter(3, 12) else {
        return;
    };
    let inventory = Inventory::new(pyenv_only(&root));
    let first = inventory.resolve(&v("3.12")).await.unwrap();
    assert_eq!(inventory.query_count(), 1);
    let again = inventory.resolve(&v("3.12")).await.unwrap();
    let exact = inventory
        .resolve(&VersionRequest::Exact(first.version))
        .await
        .unwrap();
    let direct = inventory.query(&real).await.unwrap();
    assert_eq!((&again, &exact, &direct), (&first, &first, &first));
    assert_eq!(inventory.query_count(), 1);
    // Versions from directory names need no query at all.
    inventory.available_versions().await;
    assert_eq!(inventory.query_count(), 1);

    // Concurrent resolutions of one version share a single query, clones share the cache.
    let request: VersionRequest = v("3.11");
    let clones: Vec<Inventory> = (0..8).map(|_| inventory.clone()).collect();
    let results =
        futures::future::join_all(clones.iter().map(|clone| clone.resolve(&request))).await;
    assert!(results.iter().all(|r| r.as_ref() == results[0].as_ref()));
    assert!(results[0].is_ok());
    assert_eq!(inventory.query_count(), 2);
}

#[tokio::test]
async fn a_changed_file_is_queried_again() {
    let Some((real, version)) = real_interpreter(3, 12) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let marker = tmp.path().join("ran");
    let interpreter = tmp.path().join("bin/python3.12");
    wrapper(&interpreter, &marker, &real);
    let inventory = Inventory::new(InventoryConfig::default());
    let first = inventory.query(&interpreter).await.unwrap();
    assert_eq!(first.version, version);
    inventory.query(&interpreter).await.unwrap();
    assert_eq!(inventory.query_count(), 1);

    let file = fs::File::options().write(true).open(&interpreter).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
    drop(file);
    assert_eq!(inventory.query(&interpreter).await.unwrap(), first);
    assert_eq!(inventory.query_count(), 2);
    assert_eq!(fs::read_to_string(&marker).unwrap().lines().count(), 2);
}

/// A resolve answered from the cache alone (discovery and the choice in one blocking step)
/// still stats the chosen file: a changed interpreter is queried again.
#[tokio::test]
async fn a_resolve_from_the_cache_sees_a_changed_interpreter() {
    let Some((real, version)) = real_interpreter(3, 12) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("pyenv");
    let marker = tmp.path().join("ran");
    let interpreter = root
        .join("versions")
        .join(version.to_string())
        .join("bin/python3.12");
    wrapper(&interpreter, &marker, &real);
    let inventory = Inventory::new(pyenv_only(&root));
    let first = inventory.resolve(&v("3.12")).await.unwrap();
    assert_eq!(first.version, version);
    assert_eq!(inventory.resolve(&v("3.12")).await.unwrap(), first);
    assert_eq!(inventory.query_count(), 1);

    let file = fs::File::options().write(true).open(&interpreter).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
    drop(file);
    assert_eq!(inventory.resolve(&v("3.12")).await.unwrap(), first);
    assert_eq!(inventory.query_count(), 2);
    assert_eq!(fs::read_to_string(&marker).unwrap().lines().count(), 2);
}

#[tokio::test]
async fn the_disk_cache_serves_a_new_inventory() {
    let Some((real, _)) = real_interpreter(3, 12) else {
        return;
    };
    let Some(root) = pyenv_root() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let cache_file = tmp.path().join("state/cache/interpreters.json");
    let wrapped = tmp.path().join("bin/python3.12");
    wrapper(&wrapped, &tmp.path().join("ran"), &real);
    let config = InventoryConfig {
        cache_file: Some(cache_file.clone()),
        ..pyenv_only(&root)
    };

    let first = Inventory::new(config.clone());
    let resolved = first.resolve(&v("3.12")).await.unwrap();
    let wrapped_info = first.query(&wrapped).await.unwrap();
    assert_eq!(first.query_count(), 2);
    let document: serde_json::Value =
        serde_json::from_slice(&fs::read(&cache_file).unwrap()).unwrap();
    assert_eq!(document["entries"].as_array().map(Vec::len), Some(2));
    let leftovers: Vec<_> = fs::read_dir(cache_file.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|name| name != "interpreters.json")
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");

    let second = Inventory::new(config.clone());
    assert_eq!(second.resolve(&v("3.12")).await.unwrap(), resolved);
    assert_eq!(second.query(&wrapped).await.unwrap(), wrapped_info);
    assert_eq!(second.query_count(), 0);

    // A stale entry is not trusted.
    let file = fs::File::options().write(true).open(&wrapped).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(60))
        .unwrap();
    drop(file);
    let third = Inventory::new(config.clone());
    assert_eq!(third.query(&wrapped).await.unwrap(), wrapped_info);
    assert_eq!(third.query_count(), 1);

    // A corrupt file is ignored and replaced.
    fs::write(&cache_file, "{ not json").unwrap();
    let fourth = Inventory::new(config);
    assert_eq!(fourth.resolve(&v("3.12")).await.unwrap(), resolved);
    assert_eq!(fourth.query_count(), 1);
    let document: serde_json::Value =
        serde_json::from_slice(&fs::read(&cache_file).unwrap()).unwrap();
    assert_eq!(document["format"], 1);
}

/// Prints cold and warm timings of `resolve("3.12")` over this machine's own environment.
#[tokio::test]
async fn resolve_timings() {
    if real_interpreter(3, 12).is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let config = InventoryConfig {
        cache_file: Some(tmp.path().join("interpreters.json")),
        ..InventoryConfig::from_env()
    };
    let request: VersionRequest = v("3.12");
    let inventory = Inventory::new(config.clone());
    let started = Instant::now();
    inventory.resolve(&request).await.unwrap();
    let cold = started.elapsed();
    let mut warm = Vec::new();
    for _ in 0..20 {
        let started = Instant::now();
        inventory.resolve(&request).await.unwrap();
        warm.push(started.elapsed());
    }
    warm.sort();
    let warm = warm[warm.len() / 2];
    let from_disk = Inventory::new(config);
    let started = Instant::now();
    from_disk.resolve(&request).await.unwrap();
    let disk = started.elapsed();
    assert_eq!(from_disk.query_count(), 0);
    eprintln!(
        "resolve(3.12): cold {cold:?} ({} queries), warm median of 20 {warm:?}, new inventory with disk cache {disk:?}",
        inventory.query_count()
    );
}

#[tokio::test]
async fn discovery_is_reused_until_an_interpreter_is_added_or_removed() {
    let Some((real, version)) = real_interpreter(3, 12) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("pyenv");
    // Versions come from the directory names, so these are never run; each is its own file
    // (discovery keeps one candidate per real file).
    let install = |name: &str| {
        let bin = root.join("versions").join(name).join("bin");
        fs::create_dir_all(&bin).unwrap();
        write_script(
            &bin.join("python3.12"),
            &format!("#!/bin/sh\nexec '{}' \"$@\"\n", real.display()),
        );
    };
    install(&version.to_string());
    let inventory = Inventory::new(pyenv_only(&root));
    let first = inventory.available_versions().await;
    assert_eq!(first, [version]);
    assert_eq!(
        inventory.available_versions().await,
        first,
        "nothing changed"
    );

    // A newer patch appears: the next resolve sees it without a new inventory.
    let newer = format!("{}.{}.{}", version.major, version.minor, version.patch + 50);
    install(&newer);
    let versions: Vec<String> = inventory
        .available_versions()
        .await
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(versions, [version.to_string(), newer.clone()]);

    // And when it goes away, it is gone.
    fs::remove_dir_all(root.join("versions").join(&newer)).unwrap();
    assert_eq!(inventory.available_versions().await, [version]);
}
