//! Leftovers: files that cannot be deleted, orphan directories, the trash and sweeping.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::store_support::{create, delete_lock_path, entries, provision, reservation_ids};
use wsp_environments::store::Store;

fn open_temp() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state")).unwrap();
    (dir, store)
}

/// Makes `file` impossible to delete (immutable as root, a read-only parent otherwise).
fn pin(file: &Path) {
    if rustix::process::geteuid().is_root() {
        let status = Command::new("chattr").arg("+i").arg(file).status().unwrap();
        assert!(status.success(), "chattr +i {}", file.display());
    } else {
        set_mode(file.parent().unwrap(), 0o500);
    }
}

fn unpin(file: &Path) {
    if rustix::process::geteuid().is_root() {
        let status = Command::new("chattr").arg("-i").arg(file).status().unwrap();
        assert!(status.success(), "chattr -i {}", file.display());
    } else {
        set_mode(file.parent().unwrap(), 0o700);
    }
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[tokio::test]
async fn undeletable_files_are_reported_and_swept_later() {
    let (_dir, store) = open_temp();
    let record = create(&store, "sticky").await;
    let pinned = record.root.join("lib").join("pinned");
    std::fs::create_dir_all(pinned.parent().unwrap()).unwrap();
    std::fs::write(&pinned, "x").unwrap();
    pin(&pinned);
    let removal = store.remove(&record.id).await.unwrap();
    assert_eq!(removal.record, record);
    let left = removal.files_deleted().await.expect("a leftover");
    assert!(!left.error.to_string().is_empty());
    assert_eq!(
        left.root, record.root,
        "it names the environment's own directory"
    );
    let leftover = left.path;
    assert_eq!(leftover.parent(), Some(store.dir().join("trash").as_path()));
    assert!(leftover.join("lib").join("pinned").exists());
    assert!(!record.root.exists());
    assert_eq!(store.get(&record.id).await.unwrap(), None);

    // While it stays undeletable, sweep reports it and keeps going.
    let report = store.sweep().await.unwrap();
    assert!(report.failed.iter().any(|(path, _)| path == &leftover));

    unpin(&leftover.join("lib").join("pinned"));
    let report = store.sweep().await.unwrap();
    assert!(report.removed.contains(&leftover), "{report:?}");
    assert!(report.failed.is_empty(), "{report:?}");
    assert!(entries(&store.dir().join("trash")).is_empty());
}

#[tokio::test]
async fn sweep_removes_orphans_and_spares_live_things() {
    let (_dir, store) = open_temp();
    let committed = create(&store, "committed").await;
    let live = store.reserve("live", "test").await.unwrap();
    provision(&live.root);
    let environments = store.dir().join("environments");
    let orphans: Vec<PathBuf> = ["env-0123456789ab", "stray"]
        .iter()
        .map(|name| environments.join(name))
        .collect();
    for orphan in &orphans {
        provision(orphan);
    }
    std::fs::write(environments.join("stray-file"), "x").unwrap();
    let trash = store.dir().join("trash");
    provision(&trash.join("env-ba9876543210.0000000000000001"));
    std::fs::write(trash.join("junk"), "x").unwrap();
    let locks = store.dir().join("locks");
    std::fs::write(locks.join("env-0123456789ab.use"), "").unwrap();
    std::fs::write(locks.join("env-0123456789ac.owner"), "").unwrap();
    std::fs::write(store.dir().join("index.json.tmp"), "{\"half").unwrap();

    let report = store.sweep().await.unwrap();
    assert!(report.failed.is_empty(), "{report:?}");
    assert!(report.stale_reservations.is_empty());
    let mut remaining = vec![committed.id.clone(), live.id.clone()];
    remaining.sort();
    assert_eq!(entries(&environments), remaining);
    assert!(entries(&trash).is_empty());
    assert_eq!(entries(&locks), vec![format!("{}.owner", live.id)]);
    assert!(!store.dir().join("index.json.tmp").exists());
    assert!(live.root.join("bin").join("python").is_file());
    assert!(committed.root.join("bin").join("python").is_file());
    assert_eq!(reservation_ids(&store), vec![live.id.clone()]);
    assert_eq!(store.list().await.unwrap(), vec![committed]);

    let root = live.root.clone();
    let record = live
        .commit(crate::store_support::details(&root))
        .await
        .unwrap();
    assert_eq!(store.get(&record.id).await.unwrap(), Some(record));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sweep_leaves_a_removal_that_waits_for_users_alone() {
    let (_dir, store) = open_temp();
    let record = create(&store, "in-use").await;
    let guard = store.acquire_use(&record.id).await.unwrap();
    let remover = crate::store_support::start_waiting_removal(&store, &record.id).await;
    // A user still holds the environment: the sweep touches neither it nor the removal's lock.
    let report = store.sweep().await.unwrap();
    assert!(
        report.failed.is_empty() && report.removed.is_empty(),
        "{report:?}"
    );
    assert!(record.root.join("bin").join("python").is_file());
    assert!(delete_lock_path(&store, &record.id).exists());
    drop(guard);
    let removal = remover.await.unwrap().unwrap();
    assert!(removal.files_deleted().await.is_none());
    assert!(!record.root.exists());
}

/// A removal whose answer nobody awaits still deletes the files, and a sweep waits for it.
#[tokio::test]
async fn background_deletion_finishes_unawaited_and_sweep_waits_for_it() {
    let (_dir, store) = open_temp();
    let record = create(&store, "unawaited").await;
    for i in 0..200 {
        let dir = record.root.join("lib").join(format!("d{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("f"), "x").unwrap();
    }
    drop(store.remove(&record.id).await.unwrap());
    let report = store.sweep().await.unwrap();
    assert!(
        report.busy.is_empty() && report.failed.is_empty(),
        "{report:?}"
    );
    assert!(entries(&store.dir().join("trash")).is_empty());
    assert!(entries(&store.dir().join("locks")).is_empty());
}

#[tokio::test]
async fn reserve_commit_and_remove_take_milliseconds() {
    const ROUNDS: u32 = 20;
    let (_dir, store) = open_temp();
    let mut ids = Vec::new();
    let started = Instant::now();
    for round in 0..ROUNDS {
        let reservation = store
            .reserve(&format!("timed-{round}"), "test")
            .await
            .unwrap();
        let root = reservation.root.clone();
        ids.push(
            reservation
                .commit(crate::store_support::details(&root))
                .await
                .unwrap()
                .id,
        );
    }
    let create_each = started.elapsed() / ROUNDS;
    let started = Instant::now();
    for id in &ids {
        store.remove(id).await.unwrap();
    }
    let remove_each = started.elapsed() / ROUNDS;
    let started = Instant::now();
    store.sweep().await.unwrap();
    let sweep = started.elapsed();
    eprintln!(
        "store timing: reserve+commit {create_each:?} each, remove {remove_each:?} each \
         (empty roots), sweep {sweep:?}"
    );
    assert!(create_each.as_millis() < 1000 && remove_each.as_millis() < 1000);
}
