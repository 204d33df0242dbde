//! The store directory is private: created with mode 0700 whatever the umask. This is its
//! own test binary because the umask is process-wide.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use rustix::fs::Mode;
use wsp_environments::store::Store;

fn mode_of(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[tokio::test]
async fn created_directories_are_0700_whatever_the_umask() {
    let outer = tempfile::tempdir().unwrap();
    std::fs::set_permissions(outer.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = outer.path().join("parent").join("state");
    for mask in [0o277, 0o000, 0o022] {
        let previous = rustix::process::umask(Mode::from_raw_mode(mask));
        let opened = Store::open(&dir.join(format!("{mask:o}")));
        rustix::process::umask(previous);
        let store = opened.unwrap();
        for path in [
            outer.path().join("parent"),
            dir.clone(),
            store.dir().to_path_buf(),
            store.dir().join("environments"),
            store.dir().join("locks"),
            store.dir().join("trash"),
        ] {
            assert_eq!(mode_of(&path), 0o700, "{} (umask {mask:o})", path.display());
        }
        let record = crate::store_support::create(&store, "private").await;
        assert_eq!(store.get(&record.id).await.unwrap(), Some(record));
    }
    // An existing directory is left as it is.
    assert_eq!(mode_of(outer.path()), 0o755);
}
