//! The store on a full file system: a removal still succeeds and frees the space, a cancelled
//! one changes nothing, a reservation fails naming the cause, and kill -9 at random instants
//! during removals on a full disk leaves a consistent store.
//!
//! Each test mounts a small tmpfs of its own (as root, which CI is); elsewhere the tests skip,
//! except when `CI` is set.

use std::io::{BufRead, BufReader};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::store_support::{
    assert_whole, child_entry, create, details, entries, provision, raw_index,
};
use rand::Rng;
use wsp_environments::store::{EnvironmentRecord, Store};
use wsp_testing::small_fs::{fill, free_bytes, SmallFs};

const ROLE: &str = "WSP_FULL_DISK_TEST_ROLE";
const STORE_DIR: &str = "WSP_FULL_DISK_TEST_DIR";
const LINE_PREFIX: &str = "WSP-FULL-DISK-TEST: ";

/// Writes `bytes` of files into an environment's root.
fn add_files(root: &Path, bytes: usize) {
    let dir = root.join("lib");
    std::fs::create_dir_all(&dir).unwrap();
    for n in 0..bytes / (32 << 10) {
        std::fs::write(dir.join(format!("f{n}")), vec![1u8; 32 << 10]).unwrap();
    }
}

async fn create_big(store: &Store, name: &str, bytes: usize) -> EnvironmentRecord {
    let reservation = store.reserve(name, "test").await.unwrap();
    provision(&reservation.root);
    add_files(&reservation.root, bytes);
    let root = reservation.root.clone();
    reservation.commit(details(&root)).await.unwrap()
}

fn reserve_len(store: &Store) -> u64 {
    std::fs::metadata(store.dir().join("index.reserve")).map_or(0, |m| m.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removals_on_a_full_tmpfs_succeed_and_free_the_space() {
    if let Some(fs) = SmallFs::tmpfs(16 << 20) {
        removals_on_a_full_file_system_succeed_and_free_the_space(&fs).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removals_on_a_full_ext4_succeed_and_free_the_space() {
    if let Some(fs) = SmallFs::ext4(32 << 20) {
        removals_on_a_full_file_system_succeed_and_free_the_space(&fs).await;
    }
}

async fn removals_on_a_full_file_system_succeed_and_free_the_space(fs: &SmallFs) {
    let store = Store::open(&fs.path().join("state")).unwrap();
    let keep = create(&store, "keep").await;
    let mut big = Vec::new();
    for name in ["big-1", "big-2"] {
        big.push(create_big(&store, name, 3 << 20).await);
    }
    assert!(reserve_len(&store) >= 256 << 10, "no space reserve");
    for (round, record) in big.iter().enumerate() {
        fill(&fs.path().join(format!("filler-{round}")));
        let before = free_bytes(fs.path());

        let refused = store.reserve("no-room", "test").await.unwrap_err();
        assert!(
            refused.to_string().contains("No space left on device"),
            "{refused}"
        );

        let removal = store.remove(&record.id).await.unwrap();
        assert!(removal.files_deleted().await.is_none());
        assert!(!record.root.exists());
        assert!(entries(&store.dir().join("trash")).is_empty());
        let freed = free_bytes(fs.path()) - before;
        // Everything but what the refilled reserve took back.
        assert!(freed >= (3 << 20) - (320 << 10), "only {freed} bytes freed");
        assert!(reserve_len(&store) >= 256 << 10, "the reserve is not back");

        let ids: Vec<String> = raw_index(&store)["environments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|record| record["id"].as_str().unwrap().to_owned())
            .collect();
        assert!(!ids.contains(&record.id));
        assert!(ids.contains(&keep.id));
        let index_len = std::fs::metadata(store.dir().join("index.json"))
            .unwrap()
            .len();
        assert!(
            index_len < 16 << 10,
            "the index was not trimmed: {index_len}"
        );
        assert!(!store.dir().join("index.json.tmp").exists());
        let reopened = Store::open(store.dir()).unwrap();
        assert_eq!(reopened.list().await.unwrap(), store.list().await.unwrap());
    }
    let kept = store.acquire_use(&keep.id).await.unwrap();
    assert_whole(kept.record(), "the kept environment");
}

/// Holds the index lock the way a writer in another process would.
struct IndexLockHolder {
    _locked: std::fs::File,
}

impl IndexLockHolder {
    fn take(store: &Store) -> IndexLockHolder {
        let file = std::fs::File::open(store.dir().join("index.lock")).unwrap();
        rustix::fs::flock(file.as_fd(), rustix::fs::FlockOperation::LockExclusive).unwrap();
        IndexLockHolder { _locked: file }
    }
}

/// Whether anyone holds or waits for a flock on the file at `path`, as `/proc/locks` says.
fn flock_in_use(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let inode = std::fs::metadata(path).unwrap().ino().to_string();
    let locks = std::fs::read_to_string("/proc/locks").unwrap();
    locks.lines().any(|line| {
        line.contains("FLOCK")
            && line
                .split_whitespace()
                .any(|field| field.rsplit(':').next() == Some(inode.as_str()))
    })
}

fn wait_until(what: &str, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting: {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removal_cancelled_while_it_writes_into_the_reserve_changes_nothing() {
    let Some(fs) = SmallFs::tmpfs(8 << 20) else {
        return;
    };
    let store = Store::open(&fs.path().join("state")).unwrap();
    let record = create_big(&store, "victim", 1 << 20).await;
    fill(&fs.path().join("filler"));
    let index_before = raw_index(&store);
    let lock_path = store.dir().join("index.lock");

    // The removal stages its index behind the held index lock; it is cancelled meanwhile, so
    // the staging happens after the future is gone and must be undone.
    let holder = IndexLockHolder::take(&store);
    let removing = tokio::spawn({
        let store = store.clone();
        let id = record.id.clone();
        async move { store.remove(&id).await.map(|_| ()) }
    });
    let waiting = lock_path.clone();
    tokio::task::spawn_blocking(move || {
        crate::store_support::wait_for_blocked_exclusive_flock(&waiting)
    })
    .await
    .unwrap();
    removing.abort();
    assert!(removing.await.unwrap_err().is_cancelled());
    drop(holder);
    // The reserve, all spaces so far, holds the staged index once it is given back; the
    // index lock is let go after that.
    let reserve = store.dir().join("index.reserve");
    wait_until("the staging is done and undone", || {
        std::fs::read(&reserve).is_ok_and(|bytes| bytes.first() == Some(&b'{'))
            && !flock_in_use(&lock_path)
    });

    assert_eq!(raw_index(&store), index_before);
    assert!(!store.dir().join("index.json.tmp").exists());
    assert!(reserve_len(&store) >= 256 << 10, "the reserve was lost");
    let guard = store.acquire_use(&record.id).await.unwrap();
    assert_whole(
        guard.record(),
        "the environment whose removal was cancelled",
    );
    drop(guard);
    // The reserve given back still works, on the still full disk.
    let removal = store.remove(&record.id).await.unwrap();
    assert!(removal.files_deleted().await.is_none());
    assert!(store.list().await.unwrap().is_empty());
}

/// Not a test by itself: the body of the child process `kill_nine_...` starts. On a full
/// file system it creates an environment in room it makes by shrinking the filler, fills the
/// disk again and removes the environment, forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_disk_child_entry() {
    let Ok(role) = std::env::var(ROLE) else {
        return;
    };
    assert_eq!(role, "churn");
    let dir = PathBuf::from(std::env::var(STORE_DIR).unwrap());
    let store = Store::open(&dir).unwrap();
    let filler = dir.parent().unwrap().join("filler");
    println!("{LINE_PREFIX}started");
    for round in 0u64.. {
        std::fs::remove_file(&filler).unwrap();
        let record = create_big(&store, &format!("churn-{round}"), 256 << 10).await;
        fill(&filler);
        store.remove(&record.id).await.unwrap();
        println!("{LINE_PREFIX}removed");
    }
}

#[test]
fn kill_nine_during_removals_on_a_full_disk_leaves_a_consistent_store() {
    let Some(fs) = SmallFs::tmpfs(8 << 20) else {
        return;
    };
    let state = fs.path().join("state");
    let filler = fs.path().join("filler");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut removed = 0;
    for _ in 0..20 {
        fill(&filler);
        let mut child = child_entry("store_full_disk::full_disk_child_entry")
            .env(ROLE, "churn")
            .env(STORE_DIR, &state)
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        while !line.starts_with(LINE_PREFIX) {
            line.clear();
            assert!(stdout.read_line(&mut line).unwrap() > 0, "the child ended");
        }
        std::thread::sleep(Duration::from_micros(rand::rng().random_range(0..60_000)));
        assert!(child.try_wait().unwrap().is_none(), "the child failed");
        child.kill().unwrap();
        child.wait().unwrap();
        let said: Vec<String> = stdout.lines().map_while(Result::ok).collect();
        removed += said.iter().filter(|line| line.ends_with("removed")).count();

        // Still full (or nearly): the index must read, and every listed root be whole.
        let store = Store::open(&state).unwrap();
        let records = runtime.block_on(store.list()).unwrap();
        for record in &records {
            assert_whole(record, &format!("{record:?}"));
        }
        let _ = std::fs::remove_file(&filler);
        let report = runtime.block_on(store.sweep()).unwrap();
        assert!(report.failed.is_empty(), "{report:?}");
        let mut ids: Vec<String> = records.iter().map(|r| r.id.clone()).collect();
        ids.sort();
        assert_eq!(entries(&state.join("environments")), ids);
        assert!(entries(&state.join("trash")).is_empty());
        assert!(!state.join("index.json.tmp").exists());
        assert!(reserve_len(&store) >= 256 << 10, "the reserve is not back");
        for record in records {
            let removal = runtime.block_on(store.remove(&record.id)).unwrap();
            assert!(runtime.block_on(removal.files_deleted()).is_none());
        }
    }
    assert!(
        removed > 0,
        "the child never removed anything on the full disk"
    );
}

#[tokio::test]
async fn a_reserve_planted_as_a_symlink_or_hard_link_is_replaced_never_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    let outside = dir.path().join("outside");
    std::fs::write(&outside, "precious").unwrap();
    let reserve = state.join("index.reserve");
    for plant in [
        |from: &Path, to: &Path| std::os::unix::fs::symlink(from, to),
        |from: &Path, to: &Path| std::fs::hard_link(from, to),
    ] {
        plant(&outside, &reserve).unwrap();
        let store = Store::open(&state).unwrap();
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious");
        let metadata = std::fs::symlink_metadata(&reserve).unwrap();
        assert!(metadata.is_file() && metadata.len() >= 256 << 10);
        drop(store);
        std::fs::remove_file(&reserve).unwrap();
    }
}
