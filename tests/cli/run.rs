//! Running the `wsp` binary as a user does, and reading what it printed.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::install_support::{path_without_uv, With};

/// The binary under test.
pub const WSP: &str = env!("CARGO_BIN_EXE_wsp");

/// `wsp --state-dir STATE ARGS...` with stdin from the null device and no `WSP_HOME`.
pub fn wsp(state: &Path, args: &[&str]) -> Output {
    run(&mut command(state), args)
}

/// `wsp --state-dir STATE ARGS...` run in `cwd`.
pub fn wsp_in(cwd: &Path, state: &Path, args: &[&str]) -> Output {
    run(command(state).current_dir(cwd), args)
}

/// `wsp --state-dir STATE ARGS...` run in `cwd` (if any), installing with `with`: for
/// [`With::Pip`] uv is taken off `PATH`.
pub fn wsp_installing(cwd: Option<&Path>, state: &Path, with: With, args: &[&str]) -> Output {
    let mut command = command(state);
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    if with == With::Pip {
        crate::install_support::share_seed_cache(state);
        command.env("PATH", path_without_uv());
    }
    run(&mut command, args)
}

/// The command [`wsp`] runs, before its arguments: for tests that set more.
pub fn command(state: &Path) -> Command {
    let mut command = Command::new(WSP);
    command
        .arg("--state-dir")
        .arg(state)
        .env_remove("WSP_HOME")
        .stdin(Stdio::null());
    command
}

fn run(command: &mut Command, args: &[&str]) -> Output {
    command.args(args).output().expect("run the wsp binary")
}

/// Bytes a stream printed, as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Asserts the exit status, showing both streams when it is wrong; returns stdout.
#[track_caller]
pub fn expect_status(output: &Output, status: i32, what: &str) -> String {
    assert_eq!(
        output.status.code(),
        Some(status),
        "{what}\nstdout: {}\nstderr: {}",
        text(&output.stdout),
        text(&output.stderr)
    );
    text(&output.stdout)
}

/// Asserts success, showing both streams when not; returns stdout.
#[track_caller]
pub fn assert_ok(output: &Output, what: &str) -> String {
    expect_status(output, 0, what)
}

/// `wsp ARGS...` without a state directory, for what never reaches one.
pub fn wsp_bare(args: &[&str]) -> Output {
    let mut command = Command::new(WSP);
    command.env_remove("WSP_HOME").stdin(Stdio::null());
    run(&mut command, args)
}

/// What the command printed on stdout.
pub fn stdout(output: &Output) -> String {
    text(&output.stdout)
}

/// What the command printed on stderr.
pub fn stderr(output: &Output) -> String {
    text(&output.stderr)
}

/// Runs `wsp ARGS...` on a pseudo-terminal (Python's pty module) that is fed `typed`; returns
/// the exit status and everything the terminal showed.
pub fn on_a_terminal(args: &[&str], typed: &str) -> (Option<i32>, String) {
    let script = "import os, pty, sys\n\
                  out = []\n\
                  def read(fd):\n    data = os.read(fd, 65536)\n    out.append(data)\n    return data\n\
                  status = pty.spawn(sys.argv[1:], read)\n\
                  sys.stdout.buffer.write(b''.join(out))\n\
                  sys.exit(os.waitstatus_to_exitcode(status))\n";
    let python = wsp_testing::conda::pyenv_root()
        .expect("pyenv")
        .join("versions/3.12.1/bin/python3.12");
    let mut child = Command::new(python)
        .args(["-c", script, WSP])
        .args(args)
        .env_remove("WSP_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python runs");
    // The terminal holds the line until wsp reads its answer.
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(typed.as_bytes()).expect("typed");
    drop(stdin);
    let output = child.wait_with_output().expect("python ends");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}
