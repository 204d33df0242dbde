//! A state directory that was tampered with must not be turnable against the server:
//! symlinked subdirectories, index records whose roots point elsewhere, copies made with
//! `cp -a`, reservations with forged ids, symlinks planted in environments, symlinked store
//! files. Every test keeps a canary outside the store and checks that it survives.

use std::path::PathBuf;
use std::time::Duration;

use crate::store_support::{assert_whole, create, raw_index};
use wsp_environments::store::{Removal, Store, StoreError};

/// A directory outside the store holding a file that nothing may delete.
struct Canary {
    dir: PathBuf,
}

impl Canary {
    fn plant(dir: PathBuf) -> Canary {
        std::fs::create_dir_all(dir.join("precious")).unwrap();
        std::fs::write(dir.join("precious").join("keep"), "keep me\n").unwrap();
        // Named like an environment so that nothing spares it for its name.
        std::fs::create_dir_all(dir.join("env-0123456789ab")).unwrap();
        std::fs::write(dir.join("env-0123456789ab").join("keep"), "keep me\n").unwrap();
        Canary { dir }
    }

    fn assert_alive(&self) {
        for file in ["precious/keep", "env-0123456789ab/keep"] {
            assert_eq!(
                std::fs::read_to_string(self.dir.join(file)).ok().as_deref(),
                Some("keep me\n"),
                "{} was deleted",
                self.dir.join(file).display()
            );
        }
    }
}

/// Waits for a removal's files to be deleted, then does what the venv and conda backends do
/// with the root it reports.
async fn delete_like_a_backend(removal: Removal) {
    let root = removal.record.root.clone();
    assert!(removal.files_deleted().await.is_none());
    match std::fs::remove_dir_all(root) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => panic!("{error}"),
        _ => {}
    }
}

fn edit_index(store: &Store, edit: impl FnOnce(&mut serde_json::Value)) {
    let mut index = raw_index(store);
    edit(&mut index);
    std::fs::write(
        store.dir().join("index.json"),
        serde_json::to_vec_pretty(&index).unwrap(),
    )
    .unwrap();
}

#[tokio::test]
async fn symlinked_subdirectories_are_refused_at_open() {
    for subdir in ["environments", "trash", "locks"] {
        let dir = tempfile::tempdir().unwrap();
        let canary = Canary::plant(dir.path().join("outside"));
        let state = dir.path().join("state");
        std::fs::create_dir(&state).unwrap();
        std::os::unix::fs::symlink(&canary.dir, state.join(subdir)).unwrap();
        match Store::open(&state) {
            Ok(store) => {
                let swept = store.sweep().await;
                canary.assert_alive();
                panic!("a symlinked {subdir}/ was accepted (sweep: {swept:?})");
            }
            Err(error) => {
                assert!(
                    matches!(
                        &error,
                        StoreError::SymlinkedDirectory { path, target }
                            if path == &state.canonicalize().unwrap().join(subdir)
                                && target == &canary.dir
                    ),
                    "{error:?}"
                );
                let message = error.to_string();
                assert!(
                    message.contains(subdir) && message.contains(&*canary.dir.to_string_lossy()),
                    "the error names the link and its target: {message}"
                );
            }
        }
        canary.assert_alive();
    }
}

#[tokio::test]
async fn a_record_whose_root_lies_elsewhere_is_refused_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let canary = Canary::plant(dir.path().join("outside"));
    let store = Store::open(&dir.path().join("state")).unwrap();
    let kept = create(&store, "kept").await;
    let forged_roots = [
        canary.dir.display().to_string(),
        "../outside".to_owned(),
        "environments/../../outside".to_owned(),
        format!("{}/environments/../../outside", store.dir().display()),
    ];
    let mut forged = Vec::new();
    for (n, root) in forged_roots.iter().enumerate() {
        let record = create(&store, &format!("forged-{n}")).await;
        edit_index(&store, |index| {
            for entry in index["environments"].as_array_mut().unwrap() {
                if entry["id"] == record.id.as_str() {
                    entry["root"] = root.as_str().into();
                }
            }
        });
        forged.push(record);
    }
    let listed = store.list().await.unwrap();
    assert_eq!(
        listed,
        vec![kept.clone()],
        "only the sound record is listed"
    );
    for record in &forged {
        assert_eq!(store.get(&record.id).await.unwrap(), None);
        assert!(matches!(
            store.acquire_use(&record.id).await,
            Err(StoreError::NotFound { .. })
        ));
        match store.remove(&record.id).await {
            Ok(removal) => {
                let removed = removal.record.clone();
                delete_like_a_backend(removal).await;
                canary.assert_alive();
                panic!("removed {removed:?}");
            }
            Err(error) => assert!(matches!(error, StoreError::NotFound { .. }), "{error}"),
        }
    }
    canary.assert_alive();
    // The refused records stay in the index as they were, and their ids stay taken.
    let raw = raw_index(&store);
    assert_eq!(raw["environments"].as_array().unwrap().len(), 5, "{raw}");
    let removal = store.remove(&kept.id).await.unwrap();
    delete_like_a_backend(removal).await;
    assert!(store.list().await.unwrap().is_empty());
    canary.assert_alive();
}

#[tokio::test]
async fn roots_are_stored_relative_and_old_absolute_ones_are_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state")).unwrap();
    let record = create(&store, "migrated").await;
    let raw = raw_index(&store);
    let stored = &raw["environments"][0];
    assert_eq!(
        stored["root"],
        format!("environments/{}", record.id),
        "{raw}"
    );
    assert_eq!(
        stored["interpreter_path"],
        format!("environments/{}/bin/python", record.id),
        "{raw}"
    );
    // An index written by an older version: format 1, absolute paths beneath environments/.
    edit_index(&store, |index| {
        index["format"] = 1.into();
        let entry = &mut index["environments"][0];
        entry["root"] = record.root.display().to_string().into();
        entry["interpreter_path"] = record.interpreter_path.display().to_string().into();
    });
    assert_eq!(store.list().await.unwrap(), vec![record.clone()]);
    let second = create(&store, "second").await;
    let raw = raw_index(&store);
    assert_eq!(raw["format"], 2, "{raw}");
    for entry in raw["environments"].as_array().unwrap() {
        let root = entry["root"].as_str().unwrap();
        assert!(root.starts_with("environments/env-"), "{raw}");
    }
    assert_eq!(store.list().await.unwrap().len(), 2);
    assert_eq!(store.get(&second.id).await.unwrap(), Some(second));
}

#[tokio::test]
async fn a_copied_state_directory_deletes_only_its_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let original = Store::open(&dir.path().join("original")).unwrap();
    let record = create(&original, "shared-history").await;
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(original.dir())
        .arg(dir.path().join("copy"))
        .status()
        .unwrap();
    assert!(status.success());
    let copy = Store::open(&dir.path().join("copy")).unwrap();
    let copied = copy
        .get(&record.id)
        .await
        .unwrap()
        .expect("the copy lists it");
    let removal = copy.remove(&record.id).await.unwrap();
    delete_like_a_backend(removal).await;
    assert_whole(&record, "the original's files survive a delete in the copy");
    assert_eq!(original.list().await.unwrap(), vec![record.clone()]);
    let copy_root = copy.dir().join("environments").join(&record.id);
    assert_eq!(copied.root, copy_root);
    assert!(copied.interpreter_path.starts_with(copy.dir()));
    assert!(!copy_root.exists());
}

#[tokio::test]
async fn a_forged_reservation_id_is_never_turned_into_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let canary = Canary::plant(dir.path().join("outside"));
    let store = Store::open(&dir.path().join("state")).unwrap();
    edit_index(&store, |index| {
        index["reservations"] = serde_json::json!([{
            "id": "../../outside",
            "name": "forged",
            "backend": "test",
            "reserved_at_unix_ms": 0
        }]);
    });
    let swept = store.sweep().await;
    canary.assert_alive();
    assert!(swept.is_ok(), "{swept:?}");
    assert!(
        !dir.path().join("outside.owner").exists(),
        "a lock file was made outside the store"
    );
    // The forged reservation holds no name.
    create(&store, "forged").await;
    canary.assert_alive();
}

#[tokio::test]
async fn deleting_never_follows_a_symlink_out_of_a_root() {
    let dir = tempfile::tempdir().unwrap();
    let canary = Canary::plant(dir.path().join("outside"));
    let store = Store::open(&dir.path().join("state")).unwrap();
    let record = create(&store, "planted").await;
    std::os::unix::fs::symlink(&canary.dir, record.root.join("escape")).unwrap();
    std::os::unix::fs::symlink(&canary.dir, record.root.join("bin").join("escape")).unwrap();
    std::os::unix::fs::symlink("../../../outside", record.root.join("bin").join("relative"))
        .unwrap();
    let removal = store.remove(&record.id).await.unwrap();
    delete_like_a_backend(removal).await;
    canary.assert_alive();
    assert!(!record.root.exists());

    // The same through the sweep: an orphan directory and a trash entry holding symlinks.
    let orphan = store.dir().join("environments").join("env-00000000cafe");
    std::fs::create_dir_all(orphan.join("lib")).unwrap();
    std::os::unix::fs::symlink(&canary.dir, orphan.join("lib").join("escape")).unwrap();
    let trashed = store.dir().join("trash").join("env-00000000beef.0");
    std::fs::create_dir_all(&trashed).unwrap();
    std::os::unix::fs::symlink(&canary.dir, trashed.join("escape")).unwrap();
    std::os::unix::fs::symlink(&canary.dir, store.dir().join("trash").join("bare")).unwrap();
    let report = store.sweep().await.unwrap();
    assert!(report.failed.is_empty(), "{report:?}");
    assert!(!orphan.exists() && !trashed.exists());
    canary.assert_alive();
}

#[tokio::test]
async fn a_root_that_is_itself_a_symlink_is_refused_and_deleted_as_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let canary = Canary::plant(dir.path().join("outside"));
    let store = Store::open(&dir.path().join("state")).unwrap();
    let record = create(&store, "swapped").await;
    std::fs::remove_dir_all(&record.root).unwrap();
    std::os::unix::fs::symlink(&canary.dir, &record.root).unwrap();
    match store.acquire_use(&record.id).await {
        Err(StoreError::UnsafeRoot { id, path, .. }) => {
            assert_eq!(id, record.id);
            assert_eq!(path, record.root);
        }
        other => panic!("the symlinked root was followed: {other:?}"),
    }
    let removal = store.remove(&record.id).await.unwrap();
    delete_like_a_backend(removal).await;
    assert!(std::fs::symlink_metadata(&record.root).is_err());
    assert!(store.list().await.unwrap().is_empty());
    canary.assert_alive();
}

#[tokio::test]
async fn store_files_that_are_symlinks_or_fifos_are_refused_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    // A lock file that points elsewhere is not created there.
    std::os::unix::fs::symlink(outside.join("index.lock"), state.join("index.lock")).unwrap();
    let opened = Store::open(&state);
    assert!(
        !outside.join("index.lock").exists(),
        "the store created a file through a symlink"
    );
    assert!(opened.is_err(), "{opened:?}");
    std::fs::remove_file(state.join("index.lock")).unwrap();

    let store = Store::open(&state).unwrap();
    let record = create(&store, "present").await;
    // A use-lock that is a symlink is neither created nor locked through.
    let use_lock = state.join("locks").join(format!("{}.use", record.id));
    std::os::unix::fs::symlink(outside.join("use"), &use_lock).unwrap();
    let used = store.acquire_use(&record.id).await;
    assert!(
        !outside.join("use").exists(),
        "a lock file was made outside"
    );
    assert!(used.is_err(), "{used:?}");
    std::fs::remove_file(&use_lock).unwrap();

    // index.json as a FIFO: reading it must not block.
    let index = state.join("index.json");
    std::fs::rename(&index, outside.join("index.json")).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(&index)
        .status()
        .unwrap();
    assert!(status.success());
    let listed = tokio::time::timeout(Duration::from_secs(10), store.list()).await;
    let error = listed.expect("list answers at once").unwrap_err();
    assert!(error.to_string().contains("index.json"), "{error}");
    // index.json as a symlink to a regular file elsewhere: refused, not read.
    std::fs::remove_file(&index).unwrap();
    std::os::unix::fs::symlink(outside.join("index.json"), &index).unwrap();
    let listed = tokio::time::timeout(Duration::from_secs(10), store.list()).await;
    let error = listed.expect("list answers at once").unwrap_err();
    assert!(error.to_string().contains("index.json"), "{error}");
    // Put back, the index is read again.
    std::fs::remove_file(&index).unwrap();
    std::fs::rename(outside.join("index.json"), &index).unwrap();
    assert_eq!(store.list().await.unwrap(), vec![record]);
}
