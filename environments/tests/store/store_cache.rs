//! Fast reads: `list` and `get` reuse the parsed index while `index.json` is unchanged, and
//! still see every change made by another handle or another process at once.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::time::Instant;

use crate::store_support::{child_entry, create};
use rustix::fs::inotify;
use wsp_environments::store::Store;

const ROLE: &str = "WSP_STORE_CACHE_TEST_DIR";

/// Not a test by itself: the child process, which creates environments in the store named by
/// its environment, one per line read, and prints each id.
#[tokio::test]
async fn child_process_entry() {
    let Some(dir) = std::env::var_os(ROLE) else {
        return;
    };
    let store = Store::open(Path::new(&dir)).unwrap();
    for line in std::io::stdin().lock().lines() {
        let name = line.unwrap();
        let record = create(&store, &name).await;
        println!("created {}", record.id);
    }
}

fn ids(records: &[wsp_environments::store::EnvironmentRecord]) -> BTreeSet<String> {
    records.iter().map(|record| record.id.clone()).collect()
}

/// Names of the files in `dir` opened since the watch was set up.
fn opened(watch: &impl std::os::fd::AsFd) -> Vec<String> {
    let mut buffer = [std::mem::MaybeUninit::uninit(); 4096];
    let mut reader = inotify::Reader::new(watch, &mut buffer);
    let mut names = Vec::new();
    while let Ok(event) = reader.next() {
        if let Some(name) = event.file_name() {
            names.push(name.to_string_lossy().into_owned());
        }
    }
    names
}

fn watch_opens(dir: &Path) -> std::os::fd::OwnedFd {
    let watch =
        inotify::init(inotify::CreateFlags::NONBLOCK | inotify::CreateFlags::CLOEXEC).unwrap();
    inotify::add_watch(&watch, dir, inotify::WatchFlags::OPEN).unwrap();
    watch
}

#[tokio::test]
async fn unchanged_index_is_not_reopened_by_list_or_get() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state")).unwrap();
    let record = create(&store, "cached").await;
    assert_eq!(
        ids(&store.list().await.unwrap()),
        ids(std::slice::from_ref(&record))
    );
    let watch = watch_opens(store.dir());
    for _ in 0..100 {
        assert_eq!(store.list().await.unwrap().len(), 1);
        assert_eq!(store.get(&record.id).await.unwrap().as_ref(), Some(&record));
        drop(store.acquire_use(&record.id).await.unwrap());
    }
    assert_eq!(opened(&watch), Vec::<String>::new());
    // A change through another handle (its own cache, as in another process) is read once.
    let other = Store::open(store.dir()).unwrap();
    let second = create(&other, "second").await;
    let _ = opened(&watch);
    assert_eq!(store.list().await.unwrap().len(), 2);
    assert_eq!(store.list().await.unwrap().len(), 2);
    assert_eq!(store.get(&second.id).await.unwrap(), Some(second));
    assert_eq!(opened(&watch), vec!["index.json".to_owned()]);
}

#[tokio::test]
async fn rapid_same_size_changes_by_another_handle_are_all_seen() {
    let dir = tempfile::tempdir().unwrap();
    let reader = Store::open(&dir.path().join("state")).unwrap();
    let writer = Store::open(reader.dir()).unwrap();
    let mut expected = BTreeSet::new();
    assert!(reader.list().await.unwrap().is_empty());
    for round in 0..100 {
        // Names of one length: successive indexes often have exactly the same size, and are
        // written within one mtime tick.
        let record = create(&writer, &format!("n{round:03}")).await;
        expected.insert(record.id.clone());
        assert_eq!(
            ids(&reader.list().await.unwrap()),
            expected,
            "round {round}"
        );
        if round % 2 == 1 {
            let victim = expected.iter().next().unwrap().clone();
            writer.remove(&victim).await.unwrap();
            expected.remove(&victim);
            assert_eq!(
                ids(&reader.list().await.unwrap()),
                expected,
                "round {round}"
            );
            assert_eq!(reader.get(&victim).await.unwrap(), None);
        }
    }
}

#[tokio::test]
async fn a_commit_by_another_process_is_seen_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state")).unwrap();
    // Every round below runs with the store watching its directory.
    list_often(&store).await;
    assert!(store.list().await.unwrap().is_empty());
    let mut child = child_entry("store_cache::child_process_entry")
        .env(ROLE, store.dir())
        .spawn()
        .unwrap();
    let mut to_child = child.stdin.take().unwrap();
    let mut from_child = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut expected = BTreeSet::new();
    for round in 0..10 {
        use std::io::Write;
        writeln!(to_child, "p{round:02}").unwrap();
        to_child.flush().unwrap();
        let id = loop {
            let line = from_child.next().expect("the child answers").unwrap();
            if let Some(id) = line.strip_prefix("created ") {
                break id.to_owned();
            }
        };
        expected.insert(id.clone());
        assert_eq!(ids(&store.list().await.unwrap()), expected, "round {round}");
        assert!(store.get(&id).await.unwrap().is_some());
    }
    drop(to_child);
    assert!(child.wait().unwrap().success());
}

#[tokio::test]
async fn list_of_an_unchanged_store_opens_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state")).unwrap();
    let empty = Store::open(&dir.path().join("empty")).unwrap();
    for i in 0..10 {
        create(&store, &format!("small-{i}")).await;
    }
    for (what, store) in [("empty", &empty), ("10 environments", &store)] {
        store.list().await.unwrap();
        let watch = watch_opens(store.dir());
        for _ in 0..10_000 {
            store.list().await.unwrap();
        }
        assert_eq!(opened(&watch), Vec::<String>::new(), "{what}");
    }
}

/// A server's requests read together share one look at the watch: a lookup for a request
/// read before the last look began takes that look's answer. A request read after another
/// process's commit still sees it.
#[tokio::test]
async fn requests_read_before_the_last_look_share_it_and_later_ones_see_new_commits() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state")).unwrap();
    list_often(&store).await;
    let read_together = Instant::now();
    assert!(store.listing(Some(read_together)).await.unwrap().is_empty());
    let other = Store::open(store.dir()).unwrap();
    let record = create(&other, "later").await;
    assert!(
        store.listing(Some(read_together)).await.unwrap().is_empty(),
        "read before the look: its answer"
    );
    let read_after = Instant::now();
    assert_eq!(
        ids(&store.listing(Some(read_after)).await.unwrap()),
        ids(std::slice::from_ref(&record))
    );
    assert_eq!(ids(&store.list().await.unwrap()), ids(&[record]));
}

/// Lists often enough that the store watches its directory instead of checking `index.json`
/// at each lookup.
async fn list_often(store: &Store) {
    for _ in 0..100 {
        store.list().await.unwrap();
    }
}

#[tokio::test]
async fn an_edit_in_place_by_hand_is_seen_by_a_store_listed_often() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state")).unwrap();
    let record = create(&store, "before").await;
    list_often(&store).await;
    assert_eq!(store.list().await.unwrap()[0].name, "before");
    // Same length, same mtime: only the edit itself tells.
    let index = store.dir().join("index.json");
    let modified = std::fs::metadata(&index).unwrap().modified().unwrap();
    let text = std::fs::read_to_string(&index).unwrap();
    assert!(text.contains("\"before\""), "{text}");
    std::fs::write(&index, text.replace("\"before\"", "\"edited\"")).unwrap();
    let file = std::fs::File::options().write(true).open(&index).unwrap();
    file.set_modified(modified).unwrap();
    drop(file);
    let listed = store.list().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].id.as_str(), listed[0].name.as_str()),
        (record.id.as_str(), "edited")
    );
}

#[tokio::test]
async fn removing_the_index_by_hand_is_seen_by_a_store_listed_often() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state")).unwrap();
    create(&store, "listed").await;
    list_often(&store).await;
    assert_eq!(store.list().await.unwrap().len(), 1);
    std::fs::remove_file(store.dir().join("index.json")).unwrap();
    assert!(store.list().await.unwrap().is_empty());
}
