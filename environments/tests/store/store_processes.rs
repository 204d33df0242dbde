//! The store shared by several processes: reservations of dead processes, use-locks held by
//! another process, concurrent reserves from several processes, and kill -9 at random
//! instants. The child processes are this test binary itself, run with an environment
//! variable that makes `child_process_entry` play a role; they talk over stdin/stdout lines.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{ChildStdin, ChildStdout};
use std::time::Duration;

use crate::store_support::{
    assert_whole, child_entry, create, details, entries, provision, reservation_ids,
};
use rand::Rng;
use wsp_environments::store::{Store, StoreError};

const ROLE: &str = "WSP_STORE_TEST_ROLE";
const STORE_DIR: &str = "WSP_STORE_TEST_DIR";
const ARGUMENT: &str = "WSP_STORE_TEST_ARGUMENT";
const LINE_PREFIX: &str = "WSP-STORE-TEST: ";

/// Not a test by itself: the body of the child processes the other tests start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn child_process_entry() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    let store = Store::open(Path::new(&std::env::var(STORE_DIR).unwrap())).unwrap();
    let argument = std::env::var(ARGUMENT).unwrap_or_default();
    match role.as_str() {
        "reserve-and-wait" => {
            let reservation = store.reserve(&argument, "test").await.unwrap();
            say(&reservation.id);
            read_parent_line();
            unreachable!("the parent kills this process");
        }
        "reserve-on-signal" => {
            say("ready");
            read_parent_line();
            match store.reserve(&argument, "test").await {
                Ok(reservation) => {
                    say("reserved");
                    read_parent_line();
                    reservation.abort().await.unwrap();
                }
                Err(StoreError::NameConflict { .. }) => say("conflict"),
                Err(other) => panic!("{other}"),
            }
        }
        "hold-use" => {
            let guard = store.acquire_use(&argument).await.unwrap();
            say("holding");
            read_parent_line();
            let contents = std::fs::read_to_string(&guard.record().interpreter_path);
            say(if contents.is_ok() {
                "intact"
            } else {
                "damaged"
            });
            drop(guard);
        }
        "churn" => churn(&store).await,
        other => panic!("unknown role {other}"),
    }
}

/// Creates, uses, removes and aborts environments as fast as it can, forever.
async fn churn(store: &Store) {
    say("started");
    let pid = std::process::id();
    for round in 0u64.. {
        let reservation = store
            .reserve(&format!("churn-{pid}-{round}"), "test")
            .await
            .unwrap();
        provision(&reservation.root);
        let root = reservation.root.clone();
        match round % 4 {
            1 => reservation.abort().await.unwrap(),
            2 => {
                let record = reservation.commit(details(&root)).await.unwrap();
                store.remove(&record.id).await.unwrap();
            }
            _ => {
                let record = reservation.commit(details(&root)).await.unwrap();
                drop(store.acquire_use(&record.id).await.unwrap());
                let listed = store.list().await.unwrap();
                if listed.len() > 8 {
                    store.remove(&listed[0].id).await.unwrap();
                }
            }
        }
        if round % 8 == 7 {
            store.sweep().await.unwrap();
        }
    }
}

fn say(line: &str) {
    println!("{LINE_PREFIX}{line}");
}

fn read_parent_line() -> String {
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).unwrap();
    line
}

/// A child process playing a role.
struct Child {
    process: std::process::Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Child {
    fn spawn(role: &str, store: &Path, argument: &str) -> Child {
        let mut process = child_entry("store_processes::child_process_entry")
            .env(ROLE, role)
            .env(STORE_DIR, store)
            .env(ARGUMENT, argument)
            .spawn()
            .unwrap();
        let stdin = process.stdin.take().unwrap();
        let stdout = BufReader::new(process.stdout.take().unwrap());
        Child {
            process,
            stdin,
            stdout,
        }
    }

    /// The next line the child said.
    fn next(&mut self) -> String {
        loop {
            let mut line = String::new();
            let read = self.stdout.read_line(&mut line).unwrap();
            assert!(read > 0, "the child ended without saying anything");
            if let Some(said) = line.trim_end().strip_prefix(LINE_PREFIX) {
                return said.to_owned();
            }
        }
    }

    fn tell(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn kill(mut self) {
        self.process.kill().unwrap();
        self.process.wait().unwrap();
    }

    fn finish(mut self) {
        let status = self.process.wait().unwrap();
        assert!(status.success(), "child failed: {status}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_processes_reservation_frees_its_name_and_is_swept() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state")).unwrap();
    let mut child = Child::spawn("reserve-and-wait", store.dir(), "wanted");
    let dead_id = child.next();
    let dead_root = store.dir().join("environments").join(&dead_id);
    assert!(dead_root.is_dir());

    // While the other process lives, its reservation holds the name and survives sweeps.
    assert!(matches!(
        store.reserve("wanted", "test").await,
        Err(StoreError::NameConflict { .. })
    ));
    let report = store.sweep().await.unwrap();
    assert!(report.stale_reservations.is_empty());
    assert!(dead_root.is_dir());

    child.kill();
    let ours = store.reserve("wanted", "test").await.unwrap();
    let report = store.sweep().await.unwrap();
    assert_eq!(report.stale_reservations, vec![dead_id.clone()]);
    assert!(report.failed.is_empty(), "{report:?}");
    assert!(!dead_root.exists());
    assert!(ours.root.is_dir());
    assert_eq!(reservation_ids(&store), vec![ours.id.clone()]);
    assert!(entries(&store.dir().join("trash")).is_empty());
    provision(&ours.root);
    let root = ours.root.clone();
    let record = ours.commit(details(&root)).await.unwrap();
    assert_eq!(store.list().await.unwrap(), vec![record]);
}

#[tokio::test]
async fn concurrent_reserves_from_several_processes_admit_exactly_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state")).unwrap();
    let mut children: Vec<Child> = (0..4)
        .map(|_| Child::spawn("reserve-on-signal", store.dir(), "shared-name"))
        .collect();
    for child in &mut children {
        assert_eq!(child.next(), "ready");
    }
    for child in &mut children {
        child.tell("go");
    }
    let answers: Vec<String> = children.iter_mut().map(Child::next).collect();
    assert_eq!(
        answers.iter().filter(|a| *a == "reserved").count(),
        1,
        "{answers:?}"
    );
    assert_eq!(
        answers.iter().filter(|a| *a == "conflict").count(),
        3,
        "{answers:?}"
    );
    for (child, answer) in children.iter_mut().zip(&answers) {
        if answer == "reserved" {
            child.tell("done");
        }
    }
    for child in children {
        child.finish();
    }
    assert!(reservation_ids(&store).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remove_waits_for_a_use_guard_held_by_another_process() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state")).unwrap();
    let record = create(&store, "shared").await;
    let mut child = Child::spawn("hold-use", store.dir(), &record.id);
    assert_eq!(child.next(), "holding");
    let remover = crate::store_support::start_waiting_removal(&store, &record.id).await;
    assert!(!remover.is_finished());
    assert!(matches!(
        store.acquire_use(&record.id).await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(record.interpreter_path.is_file());
    child.tell("release");
    assert_eq!(child.next(), "intact");
    let removal = remover.await.unwrap().unwrap();
    assert!(removal.files_deleted().await.is_none());
    assert!(!record.root.exists());
    child.finish();
}

#[test]
fn kill_nine_at_random_instants_leaves_a_consistent_store() {
    let dir = tempfile::tempdir().unwrap();
    let store_dir = dir.path().join("state");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut committed_seen = HashSet::new();
    let mut stale_swept = 0;
    for _ in 0..30 {
        let mut child = Child::spawn("churn", &store_dir, "");
        assert_eq!(child.next(), "started");
        let delay = rand::rng().random_range(0..80_000);
        std::thread::sleep(Duration::from_micros(delay));
        child.kill();

        let store = Store::open(&store_dir).unwrap();
        let records = runtime.block_on(store.list()).unwrap();
        for record in &records {
            assert_whole(record, &format!("{record:?}"));
            committed_seen.insert(record.id.clone());
        }
        let report = runtime.block_on(store.sweep()).unwrap();
        assert!(report.failed.is_empty(), "{report:?}");
        assert!(report.busy.is_empty(), "{report:?}");
        stale_swept += report.stale_reservations.len();
        assert_eq!(runtime.block_on(store.list()).unwrap(), records);
        let mut ids: Vec<String> = records.iter().map(|r| r.id.clone()).collect();
        ids.sort();
        assert_eq!(entries(&store_dir.join("environments")), ids);
        assert!(entries(&store_dir.join("trash")).is_empty());
        assert!(reservation_ids(&store).is_empty());
        // Only committed environments may keep a (use-)lock file.
        for lock in entries(&store_dir.join("locks")) {
            let (id, kind) = lock.rsplit_once('.').unwrap();
            assert!(
                kind == "use" && ids.iter().any(|known| known == id),
                "{lock}"
            );
        }
    }
    assert!(
        !committed_seen.is_empty(),
        "the child never committed anything"
    );
    assert!(stale_swept > 0, "no kill ever landed inside a reservation");
}
