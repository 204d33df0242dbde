//! A private `TMPDIR` made in a directory of the hidden state directory
//! (`SandboxPolicy::private_tmp_in`): the run writes there, and sees neither the directories
//! of other runs beside it nor the directories holding them, while the system's own temporary
//! directory stays readable.

use std::path::Path;

use crate::execute_sandbox_support::{op, Fixture};
use wsp_exec::{containment_mode, RunOptions};

#[tokio::test]
async fn a_tmpdir_in_the_hidden_state_directory_is_the_runs_alone() {
    let fixture = Fixture::new();
    let tmp = fixture.state.path().join("tmp");
    let other_run = tmp.join("another-run");
    std::fs::create_dir_all(&other_run).unwrap();
    std::fs::write(other_run.join("secret.txt"), "another run's\n").unwrap();
    let system_tmp = tempfile::NamedTempFile::new().unwrap();
    let options = RunOptions {
        containment: Some(containment_mode()),
        sandbox: Some(fixture.policy().with_private_tmp_in(tmp.clone())),
        ..RunOptions::default()
    };
    let attempts = [
        op("create", &[Path::new("$TMPDIR/scratch")]),
        op("list", &[Path::new("$TMPDIR/..")]),
        op("list", &[&tmp]),
        op("read", &[&other_run.join("secret.txt")]),
        op("read", &[system_tmp.path()]),
    ];
    let (tmpdir, results) = fixture.attempt(&attempts, options).await;
    let tmpdir = tmpdir.expect("TMPDIR is set");
    assert!(
        tmpdir.starts_with(tmp.canonicalize().unwrap()),
        "{} is not in {}",
        tmpdir.display(),
        tmp.display()
    );
    assert_eq!(results[&attempts[0]], "ok", "{results:?}");
    for attempt in &attempts[1..4] {
        assert_eq!(results[attempt], "EACCES", "{attempt}: {results:?}");
    }
    assert_eq!(results[&attempts[4]], "ok", "{results:?}");
    assert!(!tmpdir.exists(), "{} was not removed", tmpdir.display());

    // Unsandboxed, the same reads succeed: the refusals above can fail.
    let (_, unconfined) = fixture.attempt(&attempts[2..], RunOptions::default()).await;
    assert!(
        unconfined.values().all(|outcome| outcome == "ok"),
        "{unconfined:?}"
    );
}

/// A server killed during a run leaves its base, and the run's directory in it, in the state
/// directory's `tmp/`: the next server to make a base there removes it, unless a live process
/// still holds its lock (a server this one cannot see, in another PID namespace).
#[tokio::test]
async fn a_dead_servers_base_is_removed_with_what_it_left_unless_its_lock_is_held() {
    let fixture = Fixture::new();
    let tmp = fixture.state.path().join("tmp");
    let uid = rustix::process::geteuid().as_raw();
    let mut ended = std::process::Command::new("true").spawn().unwrap();
    let dead = ended.id();
    ended.wait().unwrap();
    let abandoned = tmp.join(format!("wsp-sandbox-{uid}-{dead}-0000000000000001"));
    let held = tmp.join(format!("wsp-sandbox-{uid}-{dead}-0000000000000002"));
    for base in [&abandoned, &held] {
        std::fs::create_dir_all(base.join("a-run")).unwrap();
        std::fs::write(base.join("a-run/left.txt"), "left by a killed run\n").unwrap();
    }
    let lock = std::fs::File::open(&held).unwrap();
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive).unwrap();

    let options = RunOptions {
        containment: Some(containment_mode()),
        sandbox: Some(fixture.policy().with_private_tmp_in(tmp.clone())),
        ..RunOptions::default()
    };
    let (tmpdir, _) = fixture.attempt(&[], options).await;
    assert!(tmpdir
        .expect("TMPDIR is set")
        .starts_with(tmp.canonicalize().unwrap()));
    assert!(!abandoned.exists(), "the dead server's base is still there");
    assert!(
        held.join("a-run/left.txt").exists(),
        "a base whose lock is held was removed"
    );
}
