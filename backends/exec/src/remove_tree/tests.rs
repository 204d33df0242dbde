use std::os::fd::OwnedFd;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use rustix::fs::{Mode, OFlags};

use super::remove_tree;

/// Makes `levels` nested directories `d/d/d/...` under `top`, one descriptor at a time (a
/// path that long could not be named at once), with a file at the bottom.
fn deep_chain(top: &Path, levels: usize) {
    let open = |parent: &OwnedFd| {
        rustix::fs::openat(
            parent,
            c"d",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .expect("open a level")
    };
    std::fs::create_dir(top).expect("the top");
    let mut dir = rustix::fs::open(top, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())
        .expect("open the top");
    for _ in 0..levels {
        rustix::fs::mkdirat(&dir, c"d", Mode::RWXU).expect("mkdirat");
        dir = open(&dir);
    }
    rustix::fs::openat(&dir, c"bottom", OFlags::CREATE | OFlags::WRONLY, Mode::RUSR)
        .expect("a file at the bottom");
}

/// A temporary directory in memory where there is one: a tree this deep takes a minute and
/// more to remove from a disk, and a second from tmpfs.
fn memory_temp() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(temp) = tempfile::tempdir_in(shm) {
            return temp;
        }
    }
    tempfile::tempdir().expect("temp")
}

#[test]
fn removes_a_tree_deeper_than_any_stack() {
    let temp = memory_temp();
    let top = temp.path().join("deep");
    deep_chain(&top, 100_000);
    // A small stack: a walk that recursed per level would overflow it many times over.
    let removed = std::thread::Builder::new()
        .stack_size(64 * 1024)
        .spawn(move || remove_tree(&top).map(|()| top))
        .expect("a thread")
        .join()
        .expect("no stack overflow");
    let top = removed.expect("removed");
    assert!(!top.exists());
}

#[test]
fn never_follows_symlinks() {
    let temp = tempfile::tempdir().expect("temp");
    let outside = temp.path().join("outside");
    std::fs::create_dir_all(outside.join("sub")).expect("outside");
    std::fs::write(outside.join("keep"), "x").expect("a file outside");
    std::fs::write(outside.join("sub/keep"), "x").expect("a file outside");
    let tree = temp.path().join("tree");
    std::fs::create_dir_all(tree.join("a/b")).expect("tree");
    std::os::unix::fs::symlink(&outside, tree.join("a/b/link")).expect("dir symlink");
    std::os::unix::fs::symlink(outside.join("keep"), tree.join("a/file-link")).expect("link");
    std::os::unix::fs::symlink(&outside, tree.join("a/b/sub")).expect("dir symlink");
    remove_tree(&tree).expect("removed");
    assert!(!tree.exists());
    assert!(outside.join("keep").exists() && outside.join("sub/keep").exists());

    // A symlink given as the tree itself is removed as a link.
    let link = temp.path().join("top-link");
    std::os::unix::fs::symlink(&outside, &link).expect("link");
    remove_tree(&link).expect("removed");
    assert!(link.symlink_metadata().is_err());
    assert!(outside.join("sub/keep").exists());
}

#[test]
fn removes_wide_trees_files_and_missing_paths() {
    let temp = tempfile::tempdir().expect("temp");
    let tree = temp.path().join("wide");
    for i in 0..300 {
        let sub = tree.join(format!("pkg{i}/inner"));
        std::fs::create_dir_all(&sub).expect("sub");
        std::fs::write(sub.join("f"), "x").expect("file");
        std::fs::write(tree.join(format!("file{i}")), "x").expect("file");
        std::fs::create_dir(tree.join(format!("empty{i}"))).expect("empty");
    }
    remove_tree(&tree).expect("removed");
    assert!(!tree.exists());

    let file = temp.path().join("file");
    std::fs::write(&file, "x").expect("file");
    remove_tree(&file).expect("a file is removed");
    assert!(!file.exists());
    remove_tree(&temp.path().join("missing")).expect("missing is gone already");
    remove_tree(&temp.path().join("missing/below")).expect("so is below it");
}

#[test]
fn gives_back_the_owners_rights_inside_the_tree_only() {
    let temp = tempfile::tempdir().expect("temp");
    let tree = temp.path().join("locked");
    std::fs::create_dir_all(tree.join("a/b/c")).expect("tree");
    std::fs::write(tree.join("a/b/c/f"), "x").expect("file");
    let mode = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod")
    };
    mode(&tree.join("a/b/c"), 0o000);
    mode(&tree.join("a/b"), 0o500);
    mode(&tree.join("a"), 0o300);
    mode(temp.path(), 0o755);
    remove_tree(&tree).expect("removed");
    assert!(!tree.exists());
    let parent_mode = std::fs::metadata(temp.path())
        .expect("parent")
        .permissions()
        .mode();
    assert_eq!(parent_mode & 0o777, 0o755, "the parent's mode is its own");
}
