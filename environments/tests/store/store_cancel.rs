//! Cancellation never lies: a removal that waits for another process's user of the
//! environment can be cancelled (its task aborted, as `$/cancelRequest` does, or its future
//! dropped, as the drain deadline does), and then nothing has changed: the environment is
//! still listed, usable and intact, before and after its user lets go. A removal that did
//! complete has removed the environment, whatever happens to its caller afterwards.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{ChildStdin, ChildStdout};

use crate::store_support::{assert_whole, child_entry, create, wait_for_removal_to_wait};
use wsp_environments::store::{EnvironmentRecord, Store, StoreError};

const ROLE_STORE: &str = "WSP_STORE_CANCEL_TEST_DIR";
const ROLE_ID: &str = "WSP_STORE_CANCEL_TEST_ID";

/// Not a test by itself: the child process, which holds a use of an environment (as a
/// running execute does) until told to let go.
#[tokio::test]
async fn child_process_entry() {
    let (Some(dir), Some(id)) = (std::env::var_os(ROLE_STORE), std::env::var(ROLE_ID).ok()) else {
        return;
    };
    let store = Store::open(Path::new(&dir)).unwrap();
    let guard = store.acquire_use(&id).await.unwrap();
    println!("holding");
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).unwrap();
    drop(guard);
    println!("released");
}

/// Another process using an environment.
struct User {
    process: std::process::Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl User {
    fn start(store: &Store, id: &str) -> User {
        let mut process = child_entry("store_cancel::child_process_entry")
            .env(ROLE_STORE, store.dir())
            .env(ROLE_ID, id)
            .spawn()
            .unwrap();
        let stdin = process.stdin.take().unwrap();
        let stdout = BufReader::new(process.stdout.take().unwrap());
        let mut user = User {
            process,
            stdin,
            stdout,
        };
        user.expect("holding");
        user
    }

    fn expect(&mut self, said: &str) {
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the user died"
            );
            if line.trim_end() == said {
                return;
            }
        }
    }

    fn release(mut self) {
        writeln!(self.stdin, "go").unwrap();
        self.stdin.flush().unwrap();
        self.expect("released");
        assert!(self.process.wait().unwrap().success());
    }
}

/// Waits, off the async threads, until a removal of `record` waits for its users.
async fn removal_waits(store: &Store, record: &EnvironmentRecord) {
    let (store, id) = (store.clone(), record.id.clone());
    tokio::task::spawn_blocking(move || wait_for_removal_to_wait(&store, &id))
        .await
        .unwrap();
}

/// The environment is exactly as it was: listed, found, usable, its files in place.
async fn assert_untouched(store: &Store, record: &EnvironmentRecord) {
    assert_eq!(
        store.list().await.unwrap(),
        vec![record.clone()],
        "still listed"
    );
    assert_eq!(store.get(&record.id).await.unwrap().as_ref(), Some(record));
    let guard = store.acquire_use(&record.id).await.expect("usable again");
    assert_eq!(guard.record(), record);
    assert_whole(record, "its files are intact");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aborted_removal_waiting_for_another_process_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state")).unwrap();
    let record = create(&store, "kept").await;
    let user = User::start(&store, &record.id);
    let remover = crate::store_support::start_waiting_removal(&store, &record.id).await;
    remover.abort();
    assert!(remover.await.unwrap_err().is_cancelled());
    assert_untouched(&store, &record).await;
    // Once the other process lets go, nothing left behind acts on the cancelled removal.
    user.release();
    assert_untouched(&store, &record).await;
    // The sweep may tidy the unheld marker file away, and nothing else.
    let report = store.sweep().await.unwrap();
    let locks = store.dir().join("locks");
    assert!(
        report.removed.iter().all(|path| path.starts_with(&locks)) && report.failed.is_empty(),
        "{report:?}"
    );
    assert_untouched(&store, &record).await;
    // And a removal that runs to the end still works.
    store.remove(&record.id).await.unwrap();
    assert!(store.list().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removal_dropped_at_a_deadline_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state")).unwrap();
    let record = create(&store, "kept").await;
    let user = User::start(&store, &record.id);
    for _ in 0..20 {
        // The drain drops the response future in place when its deadline passes.
        tokio::select! {
            removed = store.remove(&record.id) => panic!("removed while in use: {removed:?}"),
            () = removal_waits(&store, &record) => {}
        }
        assert_untouched(&store, &record).await;
    }
    user.release();
    assert_untouched(&store, &record).await;
}

/// Aborting a removal just as its wait ends either cancels it (nothing changed) or comes too
/// late (it completed, and the environment is gone): never anything in between.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abort_racing_the_end_of_the_wait_is_all_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state")).unwrap();
    let (mut cancelled, mut completed) = (0, 0);
    for round in 0..40 {
        let record = create(&store, &format!("raced-{round}")).await;
        let guard = store.acquire_use(&record.id).await.unwrap();
        let remover = crate::store_support::start_waiting_removal(&store, &record.id).await;
        drop(guard);
        // Only to spread the abort over the end of the wait: the outcome is read from the
        // task, never assumed from the timing.
        tokio::time::sleep(std::time::Duration::from_micros(300 * (round % 10))).await;
        remover.abort();
        match remover.await {
            Ok(removed) => {
                removed.unwrap();
                completed += 1;
                assert_eq!(store.get(&record.id).await.unwrap(), None);
                assert!(matches!(
                    store.acquire_use(&record.id).await,
                    Err(StoreError::NotFound { .. })
                ));
                assert!(!record.root.exists());
            }
            Err(error) => {
                assert!(error.is_cancelled());
                cancelled += 1;
                assert_untouched(&store, &record).await;
                store.remove(&record.id).await.unwrap();
            }
        }
        assert!(store.list().await.unwrap().is_empty());
    }
    eprintln!("{cancelled} cancelled, {completed} completed");
    assert_eq!(cancelled + completed, 40);
}
