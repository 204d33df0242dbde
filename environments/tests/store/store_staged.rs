//! A commit in two steps (`Reservation::stage_commit`, then `StagedCommit::publish` or
//! `abort`): nothing is visible until it is published, and an unpublished one leaves the
//! store as it was.

use std::time::{Duration, Instant};

use crate::store_support::{create, details, entries, provision, raw_index, reservation_ids};
use wsp_environments::store::{Staging, Store, StoreError};

/// A staging under `name`, with no sweep.
fn renamed(name: &str) -> Staging {
    Staging {
        name: Some(name.to_owned()),
        sweep_first: false,
    }
}

fn open_temp() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state")).unwrap();
    (dir, store)
}

#[tokio::test]
async fn a_staged_commit_is_written_beside_the_index_and_seen_once_published() {
    let (_dir, store) = open_temp();
    let reservation = store.reserve("spare", "test").await.unwrap();
    provision(&reservation.root);
    let (id, root) = (reservation.id.clone(), reservation.root.clone());
    let before = raw_index(&store);
    let staged = reservation
        .stage_commit(details(&root), renamed("chosen"))
        .await
        .unwrap();
    assert_eq!(raw_index(&store), before, "nothing is visible yet");
    assert!(store.list().await.unwrap().is_empty());
    let written = std::fs::read_to_string(store.dir().join("index.json.tmp")).unwrap();
    assert!(written.contains("\"chosen\""), "{written}");

    let record = staged.publish().await.unwrap();
    assert_eq!(
        (record.id.as_str(), record.name.as_str()),
        (id.as_str(), "chosen")
    );
    assert_eq!(store.list().await.unwrap(), vec![record]);
    assert!(reservation_ids(&store).is_empty());
    let files = entries(store.dir());
    assert!(!files.contains(&"index.json.tmp".to_owned()), "{files:?}");
    let locks = entries(&store.dir().join("locks"));
    assert!(!locks.contains(&format!("{id}.owner")), "{locks:?}");
}

#[tokio::test]
async fn an_aborted_staged_commit_leaves_the_store_as_before_it_was_reserved() {
    let (_dir, store) = open_temp();
    create(&store, "kept").await;
    let before = raw_index(&store);
    let reservation = store.reserve("spare", "test").await.unwrap();
    provision(&reservation.root);
    let root = reservation.root.clone();
    let staged = reservation
        .stage_commit(details(&root), renamed("chosen"))
        .await
        .unwrap();
    staged.abort().await.unwrap();
    assert!(!root.exists());
    assert_eq!(raw_index(&store), before);
    let files = entries(store.dir());
    assert!(!files.contains(&"index.json.tmp".to_owned()), "{files:?}");
    // The index lock is free again, and so is the name.
    create(&store, "chosen").await;
}

#[tokio::test]
async fn a_dropped_staged_commit_is_aborted_in_the_background() {
    let (_dir, store) = open_temp();
    let reservation = store.reserve("spare", "test").await.unwrap();
    let root = reservation.root.clone();
    let staged = reservation
        .stage_commit(details(&root), renamed("chosen"))
        .await
        .unwrap();
    drop(staged);
    let deadline = Instant::now() + Duration::from_secs(10);
    while root.exists() || !reservation_ids(&store).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the dropped staged commit stayed"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    create(&store, "chosen").await;
}

#[tokio::test]
async fn staging_under_a_taken_name_fails_and_aborts_the_reservation() {
    let (_dir, store) = open_temp();
    create(&store, "taken").await;
    let reservation = store.reserve("spare", "test").await.unwrap();
    let root = reservation.root.clone();
    let staged = reservation
        .stage_commit(details(&root), renamed("taken"))
        .await;
    assert!(
        matches!(staged, Err(StoreError::NameConflict { ref name }) if name == "taken"),
        "{staged:?}"
    );
    assert!(!root.exists());
    assert!(reservation_ids(&store).is_empty());
}
