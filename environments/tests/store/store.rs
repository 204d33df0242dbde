//! The store in one process: ids, records, reservations, name conflicts, removal, sweeping.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use crate::store_support::{create, details, entries, provision, raw_index, reservation_ids};
use wsp_environments::store::{
    is_environment_id, new_environment_id, Store, StoreError, ID_PREFIX,
};

fn open_temp() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state")).unwrap();
    (dir, store)
}

#[test]
fn ids_are_env_and_twelve_lowercase_hex_digits_and_unique() {
    let ids: Vec<String> = (0..10_000).map(|_| new_environment_id()).collect();
    for id in &ids {
        let digits = id.strip_prefix(ID_PREFIX).unwrap();
        assert_eq!(digits.len(), 12, "{id}");
        assert!(
            digits.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f')),
            "{id}"
        );
        assert!(is_environment_id(id));
    }
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), ids.len());
}

#[tokio::test]
async fn committed_environments_are_listed_ascending_and_found_by_id() {
    let (_dir, store) = open_temp();
    assert!(store.list().await.unwrap().is_empty());
    let mut created = Vec::new();
    for name in ["e", "d", "c", "b", "a"] {
        created.push(create(&store, name).await);
    }
    let listed = store.list().await.unwrap();
    let ids: Vec<&str> = listed.iter().map(|r| r.id.as_str()).collect();
    let mut expected: Vec<&str> = created.iter().map(|r| r.id.as_str()).collect();
    expected.sort();
    assert_eq!(ids, expected);
    for record in &created {
        assert_eq!(store.get(&record.id).await.unwrap().as_ref(), Some(record));
        assert_eq!(
            record.root,
            store.dir().join("environments").join(&record.id)
        );
        assert_eq!(record.python_version, "3.12");
        assert_eq!(record.python_full_version, "3.12.4");
        assert_eq!(record.backend, "test");
        assert!(record.root.is_dir());
    }
    // A store opened again sees the same records.
    let reopened = Store::open(store.dir()).unwrap();
    assert_eq!(reopened.list().await.unwrap(), listed);
}

#[tokio::test]
async fn unknown_and_malformed_ids_are_not_found() {
    let (_dir, store) = open_temp();
    create(&store, "present").await;
    for id in [
        "env-000000000000",
        "nope",
        "",
        "../../etc",
        "env-../../../x",
    ] {
        assert_eq!(store.get(id).await.unwrap(), None, "{id}");
        assert!(matches!(
            store.acquire_use(id).await,
            Err(StoreError::NotFound { id: ref missing }) if missing == id
        ));
        assert!(matches!(
            store.remove(id).await,
            Err(StoreError::NotFound { .. })
        ));
    }
    assert_eq!(store.list().await.unwrap().len(), 1);
    // Asking about unknown ids left no lock files behind.
    assert!(entries(&store.dir().join("locks")).is_empty());
}

#[tokio::test]
async fn a_reservation_is_invisible_until_committed() {
    let (_dir, store) = open_temp();
    let reservation = store.reserve("fresh", "test").await.unwrap();
    assert!(is_environment_id(&reservation.id));
    assert_eq!(reservation.name(), "fresh");
    assert_eq!(
        reservation.root,
        store.dir().join("environments").join(&reservation.id)
    );
    assert!(entries(&reservation.root).is_empty());
    assert!(store.list().await.unwrap().is_empty());
    assert_eq!(store.get(&reservation.id).await.unwrap(), None);
    assert!(matches!(
        store.acquire_use(&reservation.id).await,
        Err(StoreError::NotFound { .. })
    ));
    let id = reservation.id.clone();
    provision(&reservation.root);
    let root = reservation.root.clone();
    let record = reservation.commit(details(&root)).await.unwrap();
    assert_eq!(record.id, id);
    assert_eq!(record.name, "fresh");
    assert_eq!(store.list().await.unwrap(), vec![record.clone()]);
    assert!(reservation_ids(&store).is_empty());
    assert!(
        !entries(&store.dir().join("locks")).contains(&format!("{id}.owner")),
        "the owner lock outlived the reservation"
    );
}

#[tokio::test]
async fn abort_deletes_the_root_and_restores_the_index() {
    let (_dir, store) = open_temp();
    create(&store, "kept").await;
    let before = raw_index(&store);
    let reservation = store.reserve("doomed", "test").await.unwrap();
    provision(&reservation.root);
    let root = reservation.root.clone();
    assert_ne!(raw_index(&store), before);
    reservation.abort().await.unwrap();
    assert!(!root.exists());
    assert_eq!(raw_index(&store), before);
    assert!(entries(&store.dir().join("trash")).is_empty());
    store
        .reserve("doomed", "test")
        .await
        .unwrap()
        .abort()
        .await
        .unwrap();
}

#[test]
fn dropping_a_reservation_outside_a_runtime_aborts_it_at_once() {
    let (_dir, store) = open_temp();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let reservation = runtime.block_on(store.reserve("dropped", "test")).unwrap();
    provision(&reservation.root);
    let root = reservation.root.clone();
    drop(reservation);
    assert!(!root.exists());
    assert!(reservation_ids(&store).is_empty());
    runtime.block_on(store.reserve("dropped", "test")).unwrap();
}

#[tokio::test]
async fn dropping_a_reservation_in_a_runtime_aborts_it_in_the_background() {
    let (_dir, store) = open_temp();
    let reservation = store.reserve("dropped", "test").await.unwrap();
    let root = reservation.root.clone();
    drop(reservation);
    let deadline = Instant::now() + Duration::from_secs(10);
    while root.exists() || !reservation_ids(&store).is_empty() {
        assert!(Instant::now() < deadline, "the dropped reservation stayed");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    store.reserve("dropped", "test").await.unwrap();
}

#[tokio::test]
async fn names_conflict_with_committed_environments_and_live_reservations() {
    let (_dir, store) = open_temp();
    let committed = create(&store, "taken").await;
    assert!(matches!(
        store.reserve("taken", "test").await,
        Err(StoreError::NameConflict { name }) if name == "taken"
    ));
    let held = store.reserve("held", "test").await.unwrap();
    let other_handle = Store::open(store.dir()).unwrap();
    assert!(matches!(
        other_handle.reserve("held", "test").await,
        Err(StoreError::NameConflict { .. })
    ));
    // Names are matched exactly.
    store
        .reserve("Taken", "test")
        .await
        .unwrap()
        .abort()
        .await
        .unwrap();
    store
        .reserve("held ", "test")
        .await
        .unwrap()
        .abort()
        .await
        .unwrap();
    held.abort().await.unwrap();
    store
        .reserve("held", "test")
        .await
        .unwrap()
        .abort()
        .await
        .unwrap();
    store.remove(&committed.id).await.unwrap();
    store
        .reserve("taken", "test")
        .await
        .unwrap()
        .abort()
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_concurrent_reserves_of_one_name_admit_exactly_one() {
    let (_dir, store) = open_temp();
    let start = std::sync::Arc::new(tokio::sync::Barrier::new(20));
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            // Half the tasks use their own handle: handles share nothing but the directory.
            let store = if i % 2 == 0 {
                store.clone()
            } else {
                Store::open(store.dir()).unwrap()
            };
            let start = start.clone();
            tokio::spawn(async move {
                start.wait().await;
                store.reserve("contested", "test").await
            })
        })
        .collect();
    let mut winners = Vec::new();
    let mut conflicts = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(reservation) => winners.push(reservation),
            Err(StoreError::NameConflict { name }) if name == "contested" => conflicts += 1,
            Err(other) => panic!("unexpected error: {other}"),
        }
    }
    assert_eq!(winners.len(), 1);
    assert_eq!(conflicts, 19);
    assert_eq!(reservation_ids(&store), vec![winners[0].id.clone()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remove_waits_for_a_use_guard_and_later_uses_miss() {
    let (_dir, store) = open_temp();
    let record = create(&store, "busy").await;
    let guard = store.acquire_use(&record.id).await.unwrap();
    assert_eq!(guard.record(), &record);
    let remover = crate::store_support::start_waiting_removal(&store, &record.id).await;
    // The remover waits for the guard: nothing has changed yet, but new users are turned away
    // and so is a second removal.
    assert!(!remover.is_finished());
    assert!(record.root.join("bin").join("python").is_file());
    assert_eq!(store.get(&record.id).await.unwrap().as_ref(), Some(&record));
    assert_eq!(store.list().await.unwrap(), vec![record.clone()]);
    assert!(matches!(
        store.acquire_use(&record.id).await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store.remove(&record.id).await,
        Err(StoreError::NotFound { .. })
    ));
    drop(guard);
    let removal = remover.await.unwrap().unwrap();
    assert_eq!(removal.record, record);
    assert!(!record.root.exists(), "the root is in the trash at once");
    assert_eq!(store.get(&record.id).await.unwrap(), None);
    assert!(store.list().await.unwrap().is_empty());
    let leftover = removal.files_deleted().await;
    assert!(leftover.is_none(), "{leftover:?}");
    assert!(entries(&store.dir().join("trash")).is_empty());
    assert!(entries(&store.dir().join("locks")).is_empty());
    assert!(matches!(
        store.remove(&record.id).await,
        Err(StoreError::NotFound { .. })
    ));
}

#[tokio::test]
async fn shared_users_do_not_block_each_other() {
    let (_dir, store) = open_temp();
    let record = create(&store, "shared").await;
    let first = store.acquire_use(&record.id).await.unwrap();
    let second = Store::open(store.dir())
        .unwrap()
        .acquire_use(&record.id)
        .await
        .unwrap();
    assert_eq!(first.record(), second.record());
}

#[tokio::test]
async fn a_corrupt_index_is_an_error_naming_the_file() {
    let (_dir, store) = open_temp();
    create(&store, "before").await;
    let index = store.dir().join("index.json");
    for garbage in ["{\"format\": 1, \"environ", "", "[]", "{\"format\": 99}"] {
        std::fs::write(&index, garbage).unwrap();
        let error = store.list().await.unwrap_err();
        assert!(
            matches!(&error, StoreError::Corrupt { path, .. } if *path == index),
            "{error}"
        );
        assert!(error.to_string().contains("index.json"), "{error}");
        assert!(matches!(
            store.reserve("after", "test").await,
            Err(StoreError::Corrupt { .. })
        ));
    }
}
