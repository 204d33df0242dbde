//! Helpers shared by the store tests: building environments, reading the store's files
//! directly, and waiting for lock events through `/proc/locks`.
#![allow(dead_code)]

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use wsp_environments::store::{CommitFacts, EnvironmentRecord, Removal, Store, StoreError};

/// What the tests write into an environment root before committing it.
pub const MARKER_CONTENTS: &str = "provisioned completely\n";

/// Provisioning details for an environment whose "interpreter" is a marker file in `root`.
pub fn details(root: &Path) -> CommitFacts {
    let mut extra = serde_json::Map::new();
    extra.insert("backend".into(), "test".into());
    CommitFacts {
        python_version: "3.12".into(),
        python_full_version: "3.12.4".into(),
        interpreter_path: root.join("bin").join("python"),
        extra,
        reuse_key: None,
    }
}

/// Fills `root` the way a provisioning step would.
pub fn provision(root: &Path) {
    std::fs::create_dir_all(root.join("bin")).unwrap();
    std::fs::write(root.join("bin").join("python"), MARKER_CONTENTS).unwrap();
}

/// Asserts that `record`'s files are whole: its interpreter is what [`provision`] wrote.
pub fn assert_whole(record: &EnvironmentRecord, why: &str) {
    let contents = std::fs::read_to_string(&record.interpreter_path);
    assert_eq!(contents.ok().as_deref(), Some(MARKER_CONTENTS), "{why}");
}

/// A command that runs this test binary again for the one test `entry` (`module::name`: the
/// body of a child process), with its stdin and stdout piped.
pub fn child_entry(entry: &str) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([entry, "--exact", "--nocapture", "--quiet"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    command
}

/// Reserves, provisions and commits an environment.
pub async fn create(store: &Store, name: &str) -> EnvironmentRecord {
    let reservation = store.reserve(name, "test").await.unwrap();
    provision(&reservation.root);
    let root = reservation.root.clone();
    reservation.commit(details(&root)).await.unwrap()
}

/// The store's index file, parsed without the store's code.
pub fn raw_index(store: &Store) -> serde_json::Value {
    match std::fs::read(store.dir().join("index.json")) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap(),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => serde_json::json!({
            "format": 2, "environments": [], "reservations": []
        }),
        Err(error) => panic!("reading the index: {error}"),
    }
}

/// Ids of the reservations in the index.
pub fn reservation_ids(store: &Store) -> Vec<String> {
    raw_index(store)["reservations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["id"].as_str().unwrap().to_owned())
        .collect()
}

pub use wsp_testing::entry_names as entries;

/// The use-lock file of environment `id`.
pub fn use_lock_path(store: &Store, id: &str) -> PathBuf {
    store.dir().join("locks").join(format!("{id}.use"))
}

/// The deletion marker of environment `id`, held while a removal of it runs.
pub fn delete_lock_path(store: &Store, id: &str) -> PathBuf {
    store.dir().join("locks").join(format!("{id}.delete"))
}

/// Waits until a removal of `id` has started and is waiting for users: it holds the
/// deletion marker (or, as removals did before they had one, it is blocked on the use-lock),
/// as listed in `/proc/locks`.
pub fn wait_for_removal_to_wait(store: &Store, id: &str) {
    let marker = delete_lock_path(store, id);
    let gate = use_lock_path(store, id);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let holds_marker = std::fs::metadata(&marker)
            .is_ok_and(|metadata| exclusive_flock_on(metadata.ino(), false));
        let blocked_on_gate =
            std::fs::metadata(&gate).is_ok_and(|metadata| exclusive_flock_on(metadata.ino(), true));
        if holds_marker || blocked_on_gate {
            return;
        }
        assert!(Instant::now() < deadline, "no removal of {id} started");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Waits until some process is blocked waiting for an exclusive flock on `path`, as listed
/// in `/proc/locks` (a line with `->` for the file's inode).
pub fn wait_for_blocked_exclusive_flock(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(metadata) = std::fs::metadata(path) {
            if exclusive_flock_on(metadata.ino(), true) {
                return;
            }
        }
        assert!(
            Instant::now() < deadline,
            "nobody started waiting for {}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Whether `/proc/locks` lists an exclusive flock on `inode` that is waited for (`blocked`)
/// or held.
fn exclusive_flock_on(inode: u64, blocked: bool) -> bool {
    let locks = std::fs::read_to_string("/proc/locks").unwrap();
    locks.lines().any(|line| {
        let mut fields: Vec<&str> = line.split_whitespace().collect();
        let waiting = fields.get(1) == Some(&"->");
        if waiting {
            fields.remove(1);
        }
        waiting == blocked
            && fields.get(1) == Some(&"FLOCK")
            && fields.get(3) == Some(&"WRITE")
            && fields
                .get(5)
                .and_then(|device_inode| device_inode.rsplit(':').next())
                .and_then(|number| number.parse::<u64>().ok())
                == Some(inode)
    })
}

/// Starts removing `id` in a task of its own, and returns that task once the removal is
/// waiting for the environment's users (see [`wait_for_removal_to_wait`]).
pub async fn start_waiting_removal(
    store: &Store,
    id: &str,
) -> tokio::task::JoinHandle<Result<Removal, StoreError>> {
    let remover = {
        let (store, id) = (store.clone(), id.to_owned());
        tokio::spawn(async move { store.remove(&id).await })
    };
    let (store, id) = (store.clone(), id.to_owned());
    tokio::task::spawn_blocking(move || wait_for_removal_to_wait(&store, &id))
        .await
        .expect("the waiting task ends");
    remover
}
