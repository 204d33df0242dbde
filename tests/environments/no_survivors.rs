//! Nothing a command starts outlives its server, or its execute, over the real binary:
//! - a server killed with SIGKILL whose guardian was killed first leaves its commands running
//!   in `cgroup` mode only until the next server starts, which kills them (and removes the
//!   dead server's cgroups);
//! - in `pid-namespace` mode (with and without a user namespace) they die with the server;
//! - a command that moves its child into the server's own cgroup, or into its cgroup's
//!   parent, does not keep it past the execute.
//!
//! Each mode is forced with `WSP_TEST_CONTAINMENT`; the tests need root (as CI has), where all
//! three modes work.

use std::path::{Path, PathBuf};

use crate::support::{assert_gone, is_running, read_pid, request, Server};
use serde_json::{json, Value};

const MODE_VAR: &str = "WSP_TEST_CONTAINMENT";

fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

async fn start(state: &Path, mode: &str) -> (Server, Value) {
    let mut server = Server::start_with_env(state, &[], &[(MODE_VAR, mode)]);
    server.initialize().await;
    let env = server.create_environment(1, "survivors").await;
    (server, env)
}

fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::RWXU,
        0,
    )
    .expect("mkfifo");
}

/// Reads one line from the FIFO `fifo` (an event, not a sleep).
async fn read_line(fifo: PathBuf) -> String {
    let text = tokio::task::spawn_blocking(move || std::fs::read_to_string(fifo))
        .await
        .expect("the reader ends")
        .expect("the command writes a line");
    text.trim().to_owned()
}

/// Sends, as request 2, `script` to run with `sh -c` in `env`; the answer is left to read.
async fn send_sh(server: &mut Server, env: &Value, script: &str) {
    server
        .send(&request(
            2,
            "environment/execute",
            json!({"id": env["id"], "argv": ["sh", "-c", script]}),
        ))
        .await;
}

/// Starts, as request 2, a command whose background `sleep` runs until killed; returns the
/// sleep's pid as this test sees it (read by the sleep itself from `/proc/self/stat`, which
/// names it in the host's PID namespace whatever namespace it runs in).
async fn start_sleeper(server: &mut Server, env: &Value, scratch: &Path) -> i32 {
    let fifo = scratch.join("sleeper");
    mkfifo(&fifo);
    let script = format!(
        "sh -c 'read stat < /proc/self/stat; echo \"${{stat%% *}}\" > {}; exec sleep 300' & wait",
        fifo.display()
    );
    send_sh(server, env, &script).await;
    read_pid(fifo).await
}

/// Kills the server with SIGKILL and reaps it.
async fn kill_9(mut server: Server) {
    server.child.start_kill().expect("SIGKILL");
    server.child.wait().await.expect("reaped");
}

/// Kills the guardian of server `server` (its child named `wsp-guardian`) and waits until it
/// is gone.
async fn kill_guardian(server: u32) {
    let tasks = std::fs::read_dir(format!("/proc/{server}/task")).expect("the server's threads");
    let children: String = tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .collect();
    let guardian = children
        .split_whitespace()
        .find(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|name| name.trim() == "wsp-guardian")
        })
        .unwrap_or_else(|| panic!("no guardian among {children}"));
    let guardian: i32 = guardian.parse().expect("a pid");
    let watched = crate::support::Watched::new(guardian);
    let pid = rustix::process::Pid::from_raw(guardian).expect("a pid");
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).expect("SIGKILL");
    watched
        .assert_ends(std::time::Duration::from_secs(10), "the guardian")
        .await;
}

/// This process's cgroup v2 directory.
fn own_cgroup_dir() -> PathBuf {
    cgroup_dir_of("self")
}

/// The `cgroup2` mount: its root inside the hierarchy, and where it is mounted.
fn cgroup2_mount() -> (String, PathBuf) {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    mounts
        .lines()
        .find_map(|line| {
            let (fields, filesystem) = line.split_once(" - ")?;
            (filesystem.split(' ').next() == Some("cgroup2")).then_some(())?;
            let mut fields = fields.split(' ').skip(3);
            Some((fields.next()?.to_owned(), PathBuf::from(fields.next()?)))
        })
        .expect("a cgroup2 mount")
}

/// The cgroup v2 directory of process `pid` (or `self`), from `/proc` and the `cgroup2` mount.
fn cgroup_dir_of(pid: &str) -> PathBuf {
    let cgroups = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).expect("cgroup");
    let own = cgroups
        .lines()
        .find_map(|line| line.strip_prefix("0::"))
        .expect("a v2 line");
    let (root, mount_point) = cgroup2_mount();
    let inside = Path::new(own).strip_prefix(root).expect("inside the mount");
    mount_point.join(inside)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_cgroup_servers_commands_are_killed_by_its_guardian_at_once() {
    if !is_root() {
        eprintln!("skipped: cgroup mode needs root here");
        return;
    }
    let temp = tempfile::tempdir().expect("temp");
    let (mut server, env) = start(&temp.path().join("state"), "cgroup").await;
    let sleeper = start_sleeper(&mut server, &env, temp.path()).await;
    kill_9(server).await;
    assert_gone(sleeper, "a command of the killed server").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_next_server_kills_what_a_server_and_its_guardian_left() {
    if !is_root() {
        eprintln!("skipped: cgroup mode needs root here");
        return;
    }
    let temp = tempfile::tempdir().expect("temp");
    let state = temp.path().join("state");
    let (mut server, env) = start(&state, "cgroup").await;
    let dead_pid = server.child.id().expect("pid");
    let sleeper = start_sleeper(&mut server, &env, temp.path()).await;
    // Its guardian would kill the command at once (see tests/listen/listen_crash.rs); without
    // it, the command outlives the server until the next one starts.
    kill_guardian(dead_pid).await;
    kill_9(server).await;
    assert!(
        is_running(sleeper),
        "the command outlives its killed server and guardian for now"
    );

    let mut next = Server::start_with_env(&state, &[], &[(MODE_VAR, "cgroup")]);
    next.initialize().await;
    assert_gone(sleeper, "a command of the killed server").await;
    let left = own_cgroup_dir().join(format!("wsp-{dead_pid}"));
    assert!(!left.exists(), "{} is removed", left.display());
    let (code, log) = next.finish().await;
    assert_eq!(code, 0, "{log}");
}

#[tokio::test(flavor = "multi_thread")]
async fn pid_namespace_commands_die_with_their_server() {
    if !is_root() {
        eprintln!("skipped: both pid-namespace modes are certain to work only as root");
        return;
    }
    for mode in ["pid-namespace", "pid-namespace-user"] {
        let temp = tempfile::tempdir().expect("temp");
        let (mut server, env) = start(&temp.path().join("state"), mode).await;
        let sleeper = start_sleeper(&mut server, &env, temp.path()).await;
        assert!(is_running(sleeper), "{mode}: the sleeper runs");
        kill_9(server).await;
        assert_gone(sleeper, &format!("{mode}: a command of the killed server")).await;
    }
}

/// Runs, in cgroup mode, a command that writes its background child (in a session of its own,
/// out of the command's process group) into `target` (a `cgroup.procs`, given as a shell word,
/// in which `SERVER` stands for the server's cgroup directory and `MOUNT` for the hierarchy's
/// mount point), and then exits, or waits when `cancel` (and the execute is cancelled).
/// Returns the answer and the child's pid, or `None` when the move was refused.
async fn escape_into(target: &str, cancel: bool) -> (Value, Option<i32>) {
    let temp = tempfile::tempdir().expect("temp");
    let (mut server, env) = start(&temp.path().join("state"), "cgroup").await;
    let server_cgroup = cgroup_dir_of(&server.child.id().expect("pid").to_string());
    let fifo = temp.path().join("escapee");
    mkfifo(&fifo);
    let target = target
        .replace("SERVER", &server_cgroup.display().to_string())
        .replace("MOUNT", &cgroup2_mount().1.display().to_string());
    let then = if cancel { "; wait" } else { "" };
    let script = format!(
        "setsid sleep 300 & child=$!; if echo $child > {target}; then echo $child > {0}; \
         else kill $child; echo refused > {0}; exit 7; fi{then}",
        fifo.display()
    );
    send_sh(&mut server, &env, &script).await;
    let escapee = read_line(fifo).await.parse().ok();
    if cancel {
        server
            .send(&json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 2}}))
            .await;
    }
    let answer = server.recv().await;
    let (code, log) = server.finish().await;
    assert_eq!(code, 0, "{log}");
    (answer, escapee)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_child_moved_into_the_servers_cgroup_dies_with_its_execute() {
    if !is_root() {
        eprintln!("skipped: cgroup mode needs root here");
        return;
    }
    let (answer, escapee) = escape_into("SERVER/cgroup.procs", false).await;
    assert_eq!(
        answer["result"]["exit_code"], 0,
        "the move worked: {answer}"
    );
    let escapee = escapee.expect("moved");
    assert_gone(escapee, "a child moved into the server's cgroup").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_child_moved_into_its_cgroups_parent_dies_with_its_execute() {
    if !is_root() {
        eprintln!("skipped: cgroup mode needs root here");
        return;
    }
    let parent = "\"$(dirname MOUNT$(sed -n 's/^0:://p' /proc/self/cgroup))/cgroup.procs\"";
    let (answer, escapee) = escape_into(parent, false).await;
    match (answer["result"]["exit_code"].as_i64(), escapee) {
        // The parent holds controllers for its children, so it takes no process.
        (Some(7), None) => {}
        (Some(0), Some(escapee)) => {
            assert_gone(escapee, "a child moved into its cgroup's parent").await
        }
        _ => panic!("{answer}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_child_moved_into_the_servers_cgroup_dies_when_its_execute_is_cancelled() {
    if !is_root() {
        eprintln!("skipped: cgroup mode needs root here");
        return;
    }
    let (answer, escapee) = escape_into("SERVER/cgroup.procs", true).await;
    assert_eq!(answer["error"]["code"], -32800, "cancelled: {answer}");
    let escapee = escapee.expect("moved");
    assert_gone(
        escapee,
        "a child moved into the server's cgroup by a cancelled execute",
    )
    .await;
}
