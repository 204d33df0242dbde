//! Nothing a command starts outlives its execute, in every containment mode this machine has:
//! `setsid` daemons and background jobs are gone when the run returns or is dropped.

use crate::execute_support::{alive, contained, containing_modes, wait_gone, Env, PidPipe, BOUND};
use wsp_backend::BackendError;
use wsp_exec::{containment_mode, ContainmentMode, PIPE_GRACE};

/// Held by each test that runs commands. In `cgroup` mode the end of every run kills the
/// processes in this process's own cgroup that do not descend from it, which is where a
/// `process-group` daemon lands: the test that shows it escaping runs alone.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A double fork and `setsid`: the daemon records its pid, signals that it is up, and sleeps
/// holding stdout; the main process exits as soon as it is up.
fn daemon_script(pipe: &PidPipe, marker: &std::path::Path) -> String {
    format!(
        "( setsid record-and-sleep {} {} & ); while [ ! -e {} ]; do sleep 0.01; done",
        pipe.arg(),
        marker.display(),
        marker.display()
    )
}

#[test]
fn the_best_mode_here_contains_new_sessions() {
    let mode = containment_mode();
    println!("containment mode: {}", mode.as_str());
    if rustix::process::geteuid().is_root() {
        assert!(mode.contains_new_sessions(), "{mode:?}");
    }
    assert_eq!(containment_mode(), mode, "detected once");
}

#[tokio::test]
async fn setsid_daemons_are_gone_when_the_run_returns() {
    let _serial = SERIAL.lock().await;
    for mode in containing_modes() {
        let env = Env::new();
        let mut pipe = PidPipe::new(env.root(), "pids");
        let script = daemon_script(&pipe, &env.path("up"));
        let start = std::time::Instant::now();
        let result = env.sh(&script, contained(mode)).await;
        assert_eq!(result.exit_code, 0, "{mode:?}: {result:?}");
        let daemon = pipe.pids(1).await[0];
        assert!(!alive(daemon), "{mode:?}: daemon {daemon} survived");
        // The daemon held stdout: the run did not have to wait out the grace for it.
        assert!(start.elapsed() < BOUND, "{mode:?}");
    }
}

#[tokio::test]
async fn in_process_group_mode_a_setsid_daemon_escapes_and_costs_the_grace() {
    let _serial = SERIAL.lock().await;
    // The daemon lands in this process's cgroup. Any cgroup run's end (another test's run
    // dropped earlier ends in a background thread, after that test returned) kills what sits
    // there and does not descend from this process; as a subreaper, this process adopts the
    // daemon, so the daemon descends from it and only the process group's failure is seen.
    let _subreaper = Subreaper::become_one();
    let env = Env::new();
    let sweeps = containing_modes().contains(&ContainmentMode::Cgroup);
    if sweeps {
        // This process in its cgroup leaf (where the daemon then lands), as after any earlier
        // cgroup run of this binary.
        let first = env.sh("true", contained(ContainmentMode::Cgroup)).await;
        assert_eq!(first.exit_code, 0, "{first:?}");
    }
    let mut pipe = PidPipe::new(env.root(), "pids");
    let script = daemon_script(&pipe, &env.path("up"));
    let start = std::time::Instant::now();
    let result = env
        .sh(&script, contained(ContainmentMode::ProcessGroup))
        .await;
    let elapsed = start.elapsed();
    let daemon = pipe.pids(1).await[0];
    if sweeps {
        // A cgroup run's end sweeps this process's cgroup, as the late one of a test would.
        let swept = env.sh("true", contained(ContainmentMode::Cgroup)).await;
        assert_eq!(swept.exit_code, 0, "{swept:?}");
    }
    let escaped = alive(daemon);
    crate::execute_support::kill(daemon);
    reap(daemon);
    assert_eq!(result.exit_code, 0);
    assert!(
        escaped,
        "the process group alone cannot hold a setsid daemon"
    );
    assert!(elapsed >= PIPE_GRACE, "{elapsed:?}");
}

/// This process as the child subreaper while it lives: orphans below it are adopted by it.
struct Subreaper;

impl Subreaper {
    fn become_one() -> Self {
        // SAFETY: plain system call.
        let set = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        assert_eq!(set, 0, "{}", std::io::Error::last_os_error());
        Subreaper
    }
}

impl Drop for Subreaper {
    fn drop(&mut self) {
        // SAFETY: plain system call.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) };
    }
}

/// Waits for `pid`, an adopted child, to end, so that it leaves no zombie.
fn reap(pid: i32) {
    let mut status = 0;
    // SAFETY: plain system call on a child of this process.
    unsafe { libc::waitpid(pid, &mut status, 0) };
}

#[tokio::test]
async fn dropping_the_run_kills_setsid_daemons_and_background_jobs() {
    let _serial = SERIAL.lock().await;
    for mode in containing_modes() {
        let env = Env::new();
        let mut pipe = PidPipe::new(env.root(), "pids");
        // A daemon, a background job and the foreground job, like `sleep 30 & sleep 30`.
        let script = format!(
            "( setsid record-and-sleep {0} & ); record-and-sleep {0} & record-and-sleep {0}",
            pipe.arg()
        );
        let pids = {
            let running = env.sh(&script, contained(mode));
            tokio::select! {
                result = running => panic!("{mode:?}: the command finished: {result:?}"),
                pids = pipe.pids(3) => pids,
            }
        };
        for pid in pids {
            assert!(wait_gone(pid, BOUND), "{mode:?}: {pid} survived the drop");
        }
    }
}

#[tokio::test]
async fn background_jobs_are_gone_when_the_run_returns() {
    let _serial = SERIAL.lock().await;
    for mode in containing_modes() {
        let env = Env::new();
        let mut pipe = PidPipe::new(env.root(), "pids");
        // Start two jobs, wait until both are up (a marker each), and exit.
        let script = format!(
            "record-and-sleep {0} {1}.a & record-and-sleep {0} {1}.b & \
             while [ ! -e {1}.a ] || [ ! -e {1}.b ]; do sleep 0.01; done",
            pipe.arg(),
            env.path("up").display()
        );
        let result = env.sh(&script, contained(mode)).await;
        assert_eq!(result.exit_code, 0, "{mode:?}: {result:?}");
        for pid in pipe.pids(2).await {
            assert!(!alive(pid), "{mode:?}: {pid} survived");
        }
    }
}

#[tokio::test]
async fn pid_namespaces_keep_exit_statuses_output_and_spawn_errors() {
    let _serial = SERIAL.lock().await;
    let modes = containing_modes()
        .into_iter()
        .filter(|mode| matches!(mode, ContainmentMode::PidNamespace { .. }));
    for mode in modes {
        let env = Env::new();
        let sh = |script: &'static str| env.sh(script, contained(mode));
        assert_eq!(sh("exit 3").await.exit_code, 3, "{mode:?}");
        assert_eq!(sh("kill -9 $$").await.exit_code, -9, "{mode:?}");
        assert_eq!(sh("kill -15 $$").await.exit_code, -15, "{mode:?}");
        let both = sh("echo out; echo err >&2").await;
        assert_eq!(
            (both.stdout.as_str(), both.stderr.as_str()),
            ("out\n", "err\n")
        );
        // The command is the namespace's second process: its init is wsp's own.
        assert_eq!(sh("echo $$").await.stdout, "2\n", "{mode:?}");

        // execve itself fails (no such interpreter), after the namespace was entered.
        let broken = env.path("broken");
        crate::execute_support::write_executable(&broken, "#!/nonexistent-wsp-interpreter\n");
        match env.run(&[broken.to_str().unwrap()], contained(mode)).await {
            Err(BackendError::Failed { reason, detail, .. }) => {
                assert_eq!(reason, "spawn-failed", "{detail}");
                assert!(detail.contains("broken"), "{detail}");
            }
            other => panic!("{mode:?}: {other:?}"),
        }
    }
}
