//! `wsp exec`'s stdin over the real binary: a pipe is passed on as it arrives (the command
//! starts before it ends), `-n` gives the command none (a loop's input is left to the loop),
//! and `-i` (or a terminal on every stream) runs the command on a pseudo-terminal: a REPL.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::run::{command, text, wsp, WSP};

/// A state directory holding the environment `j1`.
fn environment() -> tempfile::TempDir {
    let state = tempfile::tempdir().unwrap();
    let made = wsp(state.path(), &["create", "j1", "--python", "3.12"]);
    assert!(made.status.success(), "{}", text(&made.stderr));
    state
}

fn exec(state: &Path) -> Command {
    let mut exec = command(state);
    exec.arg("exec");
    exec
}

#[test]
fn a_piped_stdin_reaches_the_command() {
    let state = environment();
    let mut child = exec(state.path())
        .args(["j1", "--", "python", "-c"])
        .arg("import sys; print(sys.stdin.read().upper())")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("wsp exec starts");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"a\nb\n").unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(text(&output.stdout), "A\nB\n\n");
}

#[test]
fn the_command_starts_before_stdin_ends() {
    let state = environment();
    let code = "import sys\nprint('started', flush=True)\nprint(sys.stdin.read().upper(), end='')";
    let mut child = exec(state.path())
        .args(["j1", "--", "python", "-c", code])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("wsp exec starts");
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap());
    // Nothing is written, and stdin stays open, until the command has said it runs.
    let mut first = String::new();
    lines.read_line(&mut first).expect("the first line");
    assert_eq!(first, "started\n");
    stdin.write_all("a\nb ☃\n".as_bytes()).unwrap();
    drop(stdin);
    let mut rest = String::new();
    lines.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "A\nB ☃\n");
    assert!(child.wait().unwrap().success());
}

#[test]
fn no_stdin_leaves_a_loops_input_to_the_loop() {
    let state = environment();
    let list = state.path().join("envs.txt");
    std::fs::write(&list, "j1\nj1\nj1\n").unwrap();
    let script = format!(
        "while read e; do {WSP:?} --state-dir {:?} exec -n \"$e\" -- python -c \
         'import sys; print(\"ran\", repr(sys.stdin.read()))'; done < {list:?}",
        state.path()
    );
    let output = Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "ran ''\n".repeat(3));
}

/// Runs `wsp ARGS...` on a pseudo-terminal (Python's `pty` module: a terminal on stdin,
/// stdout and stderr), types `1+1` once the prompt shows, waits for `2`, then `exit()`.
fn repl_on_a_terminal(args: &[&str]) -> Output {
    let driver = r#"
import os, pty, select, sys
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
seen = b""
def until(wanted):
    global seen
    while wanted not in seen:
        ready, _, _ = select.select([fd], [], [], 60)
        if not ready:
            sys.exit("timed out waiting for %r in %r" % (wanted, seen))
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b""
        if not data:
            sys.exit("the terminal closed before %r came: %r" % (wanted, seen))
        seen += data
until(b">>> ")
os.write(fd, b"1+1\r")
until(b"\n2\r\n>>> ")
os.write(fd, b"exit()\r")
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(seen)
sys.exit(os.waitstatus_to_exitcode(status))
"#;
    let python = wsp_testing::conda::pyenv_root()
        .expect("pyenv")
        .join("versions/3.12.1/bin/python3.12");
    Command::new(python)
        .args(["-c", driver, WSP])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("python runs")
}

#[test]
fn interactive_runs_a_repl_on_a_terminal() {
    let state = environment();
    let state_dir = state.path().display().to_string();
    for flags in [&["-i"][..], &[][..]] {
        let args = [
            &["--state-dir", &state_dir, "exec"],
            flags,
            &["j1", "--", "python"],
        ]
        .concat();
        let output = repl_on_a_terminal(&args);
        let shown = text(&output.stdout);
        assert!(
            output.status.success(),
            "{flags:?}: {shown:?} {}",
            text(&output.stderr)
        );
        assert!(shown.contains(">>> 1+1\r\n2\r\n"), "{flags:?}: {shown:?}");
    }
}

#[test]
fn interactive_and_json_do_not_go_together() {
    let state = environment();
    let output = wsp(
        state.path(),
        &["--json", "exec", "-i", "j1", "--", "python"],
    );
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(text(&output.stderr).contains("-i"), "{output:?}");
}
