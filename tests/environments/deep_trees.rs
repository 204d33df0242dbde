//! Trees deeper than any stack, over the real binary: deleting an environment that holds a
//! 100,000-deep chain of directories, sweeping it from the trash, and removing a sandboxed
//! run's TMPDIR just as deep, all leave a server that goes on serving.
//!
//! The trees are made by the commands themselves (the untrusted side), except in the sandbox
//! (where Landlock makes a deep `mkdir` slow; the test makes the chain in the run's TMPDIR
//! while the command waits), in memory (`/dev/shm`) where there is one, since removing
//! 100,000 directories from a disk takes minutes.

use std::path::{Path, PathBuf};

use crate::support::Server;
use serde_json::{json, Value};

/// How deep the chains go.
const DEPTH: usize = 100_000;

/// Makes a `DEPTH`-deep chain `d/d/d/...` in the directory named by `sys.argv[1]` (one
/// descriptor at a time: no path that long could be named at once) and prints that directory.
const DEEP_CHAIN: &str = r#"
import os, sys
top = sys.argv[1]
os.makedirs(top, exist_ok=True)
fd = os.open(top, os.O_RDONLY)
for _ in range(int(sys.argv[2])):
    os.mkdir("d", dir_fd=fd)
    below = os.open("d", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = below
open("bottom", "w", opener=lambda name, flags: os.open(name, flags, dir_fd=fd)).close()
print(top)
"#;

/// A temporary directory, in memory where there is one, that is removed with `rm -rf` (which
/// does not recurse on depth) when a test failed and left a deep tree in it: `TempDir`'s own
/// removal would overflow the test's stack.
struct Scratch(Option<tempfile::TempDir>);

impl Scratch {
    fn new() -> Scratch {
        let shm = Path::new("/dev/shm");
        let temp = shm
            .is_dir()
            .then(|| tempfile::tempdir_in(shm).ok())
            .flatten()
            .unwrap_or_else(|| tempfile::tempdir().expect("a temp dir"));
        Scratch(Some(temp))
    }

    fn path(&self) -> &Path {
        self.0.as_ref().expect("until dropped").path()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(temp) = self.0.take() {
            let _ = std::process::Command::new("rm")
                .arg("-rf")
                .arg(temp.path())
                .status();
        }
    }
}

/// Runs the chain maker in `env` on `top`, unsandboxed.
async fn make_chain(server: &mut Server, id: i64, env: &Value, top: &Path) -> Value {
    let response = server
        .call(
            id,
            "environment/execute",
            json!({
                "id": env["id"],
                "argv": ["python", "-c", DEEP_CHAIN, top, DEPTH.to_string()],
            }),
        )
        .await;
    let result = &response["result"];
    assert_eq!(result["exit_code"], 0, "the chain was made: {response}");
    result.clone()
}

/// Makes a `depth`-deep chain `d/d/d/...` in `top`, one descriptor at a time.
fn deep_chain(top: &Path, depth: usize) {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut dir = rustix::fs::open(top, flags, Mode::empty()).expect("open the top");
    for _ in 0..depth {
        rustix::fs::mkdirat(&dir, c"d", Mode::RWXU).expect("mkdirat");
        dir = rustix::fs::openat(&dir, c"d", flags, Mode::empty()).expect("open a level");
    }
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .expect("list")
        .map(|entry| entry.expect("entry").path())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn deleting_an_environment_with_a_deep_tree_keeps_the_server_serving() {
    let temp = Scratch::new();
    let state = temp.path().join("state");
    let mut server = Server::start_in(&state, &[]);
    server.initialize().await;
    let env = server.create_environment(1, "deep").await;
    let root = PathBuf::from(env["extra"]["path"].as_str().expect("path"));
    make_chain(&mut server, 2, &env, &root.join("chain")).await;

    let deleted = server
        .call(3, "environment/delete", json!({"id": env["id"]}))
        .await;
    assert!(deleted.get("result").is_some(), "{deleted}");
    assert!(!root.exists(), "the root went to the trash");

    // A create sweeps the trash, waiting for this process's background deletion first.
    let next = server.create_environment(4, "after").await;
    assert_eq!(
        entries(&state.join("trash")),
        Vec::<PathBuf>::new(),
        "the deep tree is deleted"
    );
    let listed = server.call(5, "environment/list", json!({})).await;
    assert_eq!(listed["result"][0]["id"], next["id"], "{listed}");
    let (code, log) = server.finish().await;
    assert_eq!(code, 0, "{log}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deep_tree_in_the_trash_is_swept_by_the_next_server() {
    let temp = Scratch::new();
    let state = temp.path().join("state");
    let mut server = Server::start_in(&state, &[]);
    server.initialize().await;
    let env = server.create_environment(1, "deep").await;
    // Planted straight in the trash, as a server killed during the deletion leaves it.
    let trash = state.join("trash");
    let entry = trash.join(format!(
        "{}.0000000000000000",
        env["id"].as_str().expect("id")
    ));
    std::fs::create_dir(&entry).expect("a trash entry");
    make_chain(&mut server, 2, &env, &entry).await;
    let (code, log) = server.finish().await;
    assert_eq!(code, 0, "{log}");

    let mut server = Server::start_in(&state, &[]);
    server.initialize().await;
    server.create_environment(1, "sweeper").await;
    assert_eq!(entries(&trash), Vec::<PathBuf>::new(), "swept");
    let second = server.create_environment(2, "still serving").await;
    assert!(second["id"].is_string());
    let (code, log) = server.finish().await;
    assert_eq!(code, 0, "{log}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deep_sandbox_tmpdir_is_removed_and_the_server_goes_on() {
    let temp = Scratch::new();
    let state = temp.path().join("state");
    let mut server = Server::start_in(&state, &[]);
    let init = server.initialize().await;
    assert_eq!(
        init["result"]["sandbox_availability"], "available",
        "this test needs the sandbox: {init}"
    );
    let env = server.create_environment(1, "deep-tmp").await;
    let root = PathBuf::from(env["extra"]["path"].as_str().expect("path"));
    let (told, go) = (root.join("told"), root.join("go"));
    for fifo in [&told, &go] {
        rustix::fs::mknodat(
            rustix::fs::CWD,
            fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::RWXU,
            0,
        )
        .expect("mkfifo");
    }
    // The sandboxed command names its TMPDIR and waits; the chain is made in it from here
    // (a sandbox checks each mkdir against every directory above it, which makes building
    // the chain from inside cost the square of its depth).
    let script = format!(
        "echo \"$TMPDIR\" > '{}' && read go < '{}'",
        told.display(),
        go.display()
    );
    server
        .send(&crate::support::request(
            2,
            "environment/execute",
            json!({"id": env["id"], "argv": ["sh", "-c", script], "sandbox": true}),
        ))
        .await;
    let tmpdir = tokio::task::spawn_blocking(move || {
        let tmpdir = PathBuf::from(std::fs::read_to_string(&told).expect("told").trim());
        deep_chain(&tmpdir, DEPTH);
        std::fs::write(&go, "go\n").expect("go");
        tmpdir
    })
    .await
    .expect("the chain is made");
    let tmp = state.join("tmp");
    assert!(
        tmpdir.starts_with(&tmp),
        "the run's TMPDIR {tmpdir:?} is in the state directory's {tmp:?}"
    );
    let done = server.recv().await;
    assert_eq!(done["result"]["exit_code"], 0, "{done}");
    assert!(
        !tmpdir.exists(),
        "the run's TMPDIR is removed before the answer"
    );

    let again = server
        .call(
            3,
            "environment/execute",
            json!({"id": env["id"], "argv": ["true"], "sandbox": true}),
        )
        .await;
    assert_eq!(again["result"]["exit_code"], 0, "{again}");
    let (code, log) = server.finish().await;
    assert_eq!(code, 0, "{log}");
}
