//! A process that calls `kill_all_live` and then `std::process::exit` (which runs no
//! destructors), as a server does on SIGTERM, leaves nothing of its running commands behind.

use std::io::BufRead;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::execute_support::{contained, containing_modes, wait_gone, Env, PidPipe, BOUND};
use wsp_exec::{kill_all_live, ContainmentMode};

const INNER: &str = "WSP_EXECUTE_EXIT_INNER";

fn mode_name(mode: ContainmentMode) -> String {
    format!("{mode:?}")
}

/// Runs in a copy of this test binary: starts a command with a `setsid` daemon and a
/// background job, prints their pids, kills everything live and exits without unwinding.
#[tokio::test]
async fn inner_exit_while_a_command_runs() {
    let Ok(wanted) = std::env::var(INNER) else {
        return;
    };
    let mode = containing_modes()
        .into_iter()
        .find(|mode| mode_name(*mode) == wanted)
        .expect("a known mode");
    let env = Env::new();
    let mut pipe = PidPipe::new(env.root(), "pids");
    let script = format!(
        "( setsid record-and-sleep {0} & ); record-and-sleep {0} & record-and-sleep {0}",
        pipe.arg()
    );
    let _running = tokio::spawn(async move {
        let result = env.sh(&script, contained(mode)).await;
        drop(env);
        result
    });
    let pids = pipe.pids(3).await;
    let pids: Vec<String> = pids.iter().map(i32::to_string).collect();
    println!("pids {}", pids.join(" "));
    kill_all_live();
    std::process::exit(0);
}

/// This process's cgroup v2 directory, when there is one.
fn own_cgroup_dir() -> Option<PathBuf> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let own = cgroups.lines().find_map(|line| line.strip_prefix("0::"))?;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    mounts.lines().find_map(|line| {
        let (fields, filesystem) = line.split_once(" - ")?;
        (filesystem.split(' ').next() == Some("cgroup2")).then_some(())?;
        let mut fields = fields.split(' ').skip(3);
        let root = fields.next()?;
        let mount_point = fields.next()?;
        let inside = std::path::Path::new(own).strip_prefix(root).ok()?;
        Some(std::path::Path::new(mount_point).join(inside))
    })
}

#[test]
fn exiting_after_kill_all_live_leaves_nothing_running() {
    for mode in containing_modes() {
        let mut inner = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "execute_exit::inner_exit_while_a_command_runs",
                "--nocapture",
            ])
            .env(INNER, mode_name(mode))
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let inner_pid = inner.id();
        let stdout = std::io::BufReader::new(inner.stdout.take().unwrap());
        let pids: Vec<i32> = stdout
            .lines()
            .map_while(Result::ok)
            .find_map(|line| {
                line.strip_prefix("pids ").map(|pids| {
                    pids.split_whitespace()
                        .map(|pid| pid.parse().unwrap())
                        .collect()
                })
            })
            .expect("the inner process printed the pids");
        let status = inner.wait().unwrap();
        assert!(status.success(), "{mode:?}: {status}");
        assert_eq!(pids.len(), 3);
        for pid in pids {
            assert!(wait_gone(pid, BOUND), "{mode:?}: {pid} outlived the server");
        }
        if let (ContainmentMode::Cgroup, Some(dir)) = (mode, own_cgroup_dir()) {
            // Its subtree, `wsp-<pid>`, is removed at exit with the commands' cgroups in it.
            let subtree = format!("wsp-{inner_pid}");
            let left: Vec<String> = std::fs::read_dir(&dir)
                .unwrap()
                .flatten()
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .filter(|name| name == &subtree || name.starts_with(&format!("{subtree}-")))
                .collect();
            assert!(left.is_empty(), "cgroups left behind: {left:?}");
        }
    }
}
