//! What `wsp exec` says besides the command's own output: a cut output is said on stderr (and
//! fails under `--strict-output`), `--json exec` passes the exit status through, and the spawned
//! server's log reaches the terminal only when the server failed, or live with `-v`.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::run::{text, wsp, WSP};

fn created(state: &Path) {
    let made = wsp(state, &["create", "out", "--python", "3.12"]);
    assert!(made.status.success(), "{}", text(&made.stderr));
}

#[test]
fn a_cut_output_is_said_and_fails_under_strict_output() {
    let state = tempfile::tempdir().unwrap();
    created(state.path());
    let print = ["--", "python", "-c", "print('x' * 5000)"];
    let cut = wsp(
        state.path(),
        &[&["exec", "out", "--max-output-bytes", "1000"], &print[..]].concat(),
    );
    assert_eq!(cut.status.code(), Some(0), "{}", text(&cut.stderr));
    assert_eq!(cut.stdout.len(), 1000);
    assert!(
        text(&cut.stderr).contains("stdout was cut at 1000 bytes"),
        "{}",
        text(&cut.stderr)
    );
    let strict = wsp(
        state.path(),
        &[
            &[
                "exec",
                "out",
                "--max-output-bytes",
                "1000",
                "--strict-output",
            ],
            &print[..],
        ]
        .concat(),
    );
    assert_eq!(strict.status.code(), Some(1), "{}", text(&strict.stderr));
    let whole = wsp(state.path(), &[&["exec", "out"], &print[..]].concat());
    assert_eq!(whole.stdout.len(), 5001);
    assert!(
        !text(&whole.stderr).contains("cut"),
        "{}",
        text(&whole.stderr)
    );
}

#[test]
fn json_exec_passes_the_exit_status_through() {
    let state = tempfile::tempdir().unwrap();
    created(state.path());
    let argv = ["--", "python", "-c", "import sys; print('hi'); sys.exit(3)"];
    let ran = wsp(
        state.path(),
        &[&["--json", "exec", "out"], &argv[..]].concat(),
    );
    assert_eq!(ran.status.code(), Some(3), "{}", text(&ran.stderr));
    let result: serde_json::Value = serde_json::from_slice(&ran.stdout).expect("one JSON result");
    assert_eq!(result["exit_code"], 3);
    assert_eq!(result["stdout"], "hi\n");
    let slow = ["--", "python", "-c", "import time; time.sleep(30)"];
    let timed_out = wsp(
        state.path(),
        &[&["--json", "exec", "out", "--timeout", "300ms"], &slow[..]].concat(),
    );
    assert_eq!(
        timed_out.status.code(),
        Some(124),
        "{}",
        text(&timed_out.stderr)
    );
}

/// A `--server-cmd` that writes `line` to stderr, then serves.
fn noisy_server(line: &str) -> String {
    format!("sh -c 'echo {line} >&2; exec \"$0\" serve \"$@\"' {WSP}")
}

#[test]
fn the_servers_log_shows_only_when_it_failed_or_with_verbose() {
    let state = tempfile::tempdir().unwrap();
    let quiet = wsp(
        state.path(),
        &["--server-cmd", &noisy_server("server-chatter"), "list"],
    );
    assert!(quiet.status.success(), "{}", text(&quiet.stderr));
    assert!(
        !text(&quiet.stderr).contains("server-chatter"),
        "{}",
        text(&quiet.stderr)
    );

    let verbose = wsp(
        state.path(),
        &[
            "-v",
            "--server-cmd",
            &noisy_server("server-chatter"),
            "list",
        ],
    );
    assert!(verbose.status.success());
    assert!(
        text(&verbose.stderr).contains("server-chatter"),
        "{}",
        text(&verbose.stderr)
    );

    let dying = wsp(
        state.path(),
        &[
            "--server-cmd",
            "sh -c 'echo last-words >&2; exit 3'",
            "list",
        ],
    );
    assert_eq!(dying.status.code(), Some(2));
    assert!(
        text(&dying.stderr).contains("last-words"),
        "{}",
        text(&dying.stderr)
    );
}

#[test]
fn ctrl_c_cancels_the_command_at_once_and_nothing_is_printed_after() {
    use std::io::{BufRead, BufReader, Read};
    use std::os::unix::process::CommandExt;

    let state = tempfile::tempdir().unwrap();
    created(state.path());
    let script = "import os, time; print(os.getpid(), flush=True); time.sleep(120)";
    let mut client = Command::new(WSP)
        .arg("--state-dir")
        .arg(state.path())
        .args(["exec", "out", "--", "python", "-c", script])
        .env_remove("WSP_HOME")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(client.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).expect("the command's pid");
    let pid: i32 = line.trim().parse().expect("a pid");
    let group = rustix::process::Pid::from_raw(client.id() as i32).unwrap();
    rustix::process::kill_process_group(group, rustix::process::Signal::INT).unwrap();

    let status = client.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(500);
    while Path::new(&format!("/proc/{pid}")).exists() && !is_zombie(pid) {
        assert!(
            std::time::Instant::now() < deadline,
            "the command {pid} still runs 500 ms after the client exited"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // Nothing holds the client's stderr once it exited: no server writes there afterwards.
    let mut rest = String::new();
    client
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut rest)
        .unwrap();
    stdout.read_to_string(&mut rest).unwrap();
    assert!(!rest.contains("WARN") && !rest.contains("ERROR"), "{rest}");
}

fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            stat.rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(true)
}
