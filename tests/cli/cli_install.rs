//! The CLI's install commands and `wsp exec`'s live output, stdin and timeout, over the real
//! binary and offline: `wsp create NAME --python 3.12 -p <local wheel> --find-links DIR`, then
//! `wsp exec NAME -- python -c "import ..."`, on venv (with uv and with pip) and on uv;
//! `wsp install` and `wsp uninstall`; progress as plain lines or, on a terminal, a bar.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::install_support::{wheels, With};
use crate::run::{assert_ok, on_a_terminal, text, wsp_installing, WSP};

/// The must-show: a local wheel installed at create, imported in the environment.
fn create_with_a_local_wheel_then_import(backend: &[&str], with: With) {
    let temp = tempfile::tempdir().unwrap();
    let links = temp.path().join("wheels");
    let built = wheels(&links);
    let wheel = built[0].display().to_string();
    let links_text = links.display().to_string();
    let state = temp.path().join("state");
    let mut args = backend.to_vec();
    args.extend(["create", "demo", "--python", "3.12", "-p", &wheel]);
    args.extend(["-p", "wsp-beta", "--find-links", &links_text, "--no-index"]);
    let created = wsp_installing(None, &state, with, &args);
    assert_ok(&created, "create");
    let shown = text(&created.stdout);
    assert!(
        shown.contains("wsp-alpha") && shown.contains("wsp-beta"),
        "{shown}"
    );
    let mut args = backend.to_vec();
    let code = "import wsp_alpha, wsp_beta; print(wsp_alpha.VERSION)";
    args.extend(["exec", "demo", "--", "python", "-c", code]);
    let ran = wsp_installing(None, &state, with, &args);
    assert_ok(&ran, "exec");
    assert_eq!(
        text(&ran.stdout),
        "1.0\n",
        "the wheel given by path: {with:?}"
    );
}

#[test]
fn create_with_a_local_wheel_on_venv_with_uv() {
    create_with_a_local_wheel_then_import(&[], With::Uv);
}

#[test]
fn create_with_a_local_wheel_on_venv_with_pip() {
    create_with_a_local_wheel_then_import(&[], With::Pip);
}

#[test]
fn create_with_a_local_wheel_on_uv() {
    create_with_a_local_wheel_then_import(&["--backend", "uv"], With::Uv);
}

#[test]
fn install_and_uninstall_with_plain_progress_lines() {
    let temp = tempfile::tempdir().unwrap();
    let links = temp.path().join("wheels");
    wheels(&links);
    let links = links.display().to_string();
    let state = temp.path().join("state");
    assert_ok(
        &wsp_installing(
            None,
            &state,
            With::Uv,
            &["create", "box", "--python", "3.12"],
        ),
        "create",
    );
    let args = [
        "install",
        "box",
        "wsp-alpha==1.0",
        "--find-links",
        &links,
        "--no-index",
    ];
    let installed = wsp_installing(None, &state, With::Uv, &args);
    assert_ok(&installed, "install");
    assert!(
        text(&installed.stdout).contains("wsp-alpha  1.0"),
        "{}",
        text(&installed.stdout)
    );
    let progress = text(&installed.stderr);
    assert!(
        progress.starts_with("Installing 1 package into box\n"),
        "{progress}"
    );
    assert!(
        progress.contains("] Resolved 1 package"),
        "uv's step as a line: {progress}"
    );
    let args = [
        "install",
        "box",
        "wsp-alpha",
        "-U",
        "--find-links",
        &links,
        "--no-index",
    ];
    let upgraded = wsp_installing(None, &state, With::Uv, &args);
    assert_ok(&upgraded, "install --upgrade");
    assert!(text(&upgraded.stdout).contains("wsp-alpha  2.0"));
    let removed = wsp_installing(
        None,
        &state,
        With::Uv,
        &["uninstall", "box", "wsp-alpha", "not-there"],
    );
    assert_ok(&removed, "uninstall");
    assert!(!text(&removed.stdout).contains("wsp-alpha"));
    let failed = wsp_installing(
        None,
        &state,
        With::Uv,
        &["install", "box", "wsp-nowhere", "--no-index"],
    );
    assert_eq!(failed.status.code(), Some(1), "a JSON-RPC error");
    // Said once, in the CLI's words: no server warning, no code and data repeating it.
    let error = text(&failed.stderr);
    assert_eq!(error.matches("wsp: install failed:").count(), 1, "{error}");
    for repeated in [
        "WARN",
        "-31004",
        "Execution failed",
        "\"detail\"",
        "install-failed",
    ] {
        assert!(!error.contains(repeated), "{repeated} in {error}");
    }
    let with_json = wsp_installing(
        None,
        &state,
        With::Uv,
        &["install", "box", "wsp-nowhere", "--no-index", "--json"],
    );
    let object = text(&with_json.stderr);
    let object: serde_json::Value =
        serde_json::from_str(object.lines().last().unwrap_or("")).expect("the error object");
    assert_eq!(object["code"], -31004);
    assert_eq!(object["data"]["reason"], "install-failed");
}

#[test]
fn progress_is_a_bar_on_a_terminal() {
    let temp = tempfile::tempdir().unwrap();
    let links = temp.path().join("wheels");
    wheels(&links);
    let state = temp.path().join("state");
    let links = links.display().to_string();
    let state_text = state.display().to_string();
    let (status, shown) = on_a_terminal(
        &[
            "--state-dir",
            &state_text,
            "create",
            "tty",
            "--python",
            "3.12",
            "-p",
            "wsp-alpha",
            "--find-links",
            &links,
            "--no-index",
        ],
        "",
    );
    assert_eq!(status, Some(0), "create on a terminal: {shown}");
    assert!(
        shown.contains("\u{1b}["),
        "a bar is drawn and cleared: {shown:?}"
    );
    assert!(
        !shown.contains("  [ 20%] Provisioned"),
        "no plain lines: {shown:?}"
    );
    assert!(shown.contains("Created env-"), "{shown:?}");
}

/// `wsp exec` in a fresh environment named `run`; returns the state directory's holder.
fn environment() -> (tempfile::TempDir, std::path::PathBuf) {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    assert_ok(
        &wsp_installing(
            None,
            &state,
            With::Uv,
            &["create", "run", "--python", "3.12"],
        ),
        "create",
    );
    (temp, state)
}

#[test]
fn exec_shows_each_line_as_it_is_printed() {
    let (temp, state) = environment();
    let release = temp.path().join("release");
    crate::install_support::mkfifo(&release);
    // The command prints a line, then waits for the test, which releases it only once that
    // line came out of `wsp exec`: the line was shown while the command ran.
    let code = format!(
        "import sys\nfor i in range(3):\n    print(i, flush=True)\n    open({:?}).read()\n",
        release.display().to_string()
    );
    let mut child = Command::new(WSP)
        .arg("--state-dir")
        .arg(&state)
        .args(["exec", "run", "--", "python", "-c", &code])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("wsp exec starts");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for i in 0..3 {
        let line = lines.next().expect("a line").expect("readable");
        assert_eq!(line, i.to_string());
        std::fs::write(&release, "go\n").expect("released");
    }
    assert!(lines.next().is_none(), "nothing printed twice");
    assert!(child.wait().unwrap().success());
}

#[test]
fn exec_passes_a_piped_stdin_on() {
    let (_temp, state) = environment();
    let mut child = Command::new(WSP)
        .arg("--state-dir")
        .arg(&state)
        .args(["exec", "run", "--", "python"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("wsp exec starts");
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"import sys\nprint(6 * 7, sys.prefix.endswith('run') or 'env')\n")
        .unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(
        text(&output.stdout).starts_with("42 "),
        "{}",
        text(&output.stdout)
    );
    let ignored = Command::new(WSP)
        .arg("--state-dir")
        .arg(&state)
        .args(["exec", "run", "--no-stdin", "--", "python", "-c"])
        .arg("import sys; print(repr(sys.stdin.read()))")
        .stdin(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(text(&ignored.stdout), "''\n");
}

#[test]
fn exec_timeout_kills_everything_and_exits_124() {
    let (_temp, state) = environment();
    let marker = format!("31.{}", std::process::id());
    let started = Instant::now();
    let output = Command::new(WSP)
        .arg("--state-dir")
        .arg(&state)
        .args(["exec", "run", "--timeout", "500ms", "--", "sh", "-c"])
        .arg(format!("sleep {marker} & sleep {marker}"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(output.status.code(), Some(124), "{output:?}");
    assert!(text(&output.stderr).contains("timed out after 500ms"));
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| std::fs::read(entry.path().join("cmdline")).ok())
        .map(|cmdline| text(&cmdline).replace('\0', " "))
        .filter(|cmdline| cmdline.contains(&format!("sleep {marker}")))
        .collect();
    assert!(left.is_empty(), "left over: {left:?}");
}

#[test]
fn create_with_a_conda_package_from_the_local_channel() {
    use wsp_testing::conda::{build_local_channel_with, CondaPackage, PythonBuild};
    let temp = tempfile::tempdir().unwrap();
    let python = PythonBuild::from_pyenv("3.12.1").expect("pyenv has 3.12.1");
    let packages = [
        CondaPackage::new("wsp-alpha", "1.0"),
        CondaPackage::new("wsp-beta", "1.0").depends("wsp-alpha"),
    ];
    let channel =
        build_local_channel_with(&temp.path().join("channel"), &[python], &packages).unwrap();
    let channel = channel.to_string();
    let state = temp.path().join("state");
    let conda = ["--backend", "conda", "--channel", channel.as_str()];
    let mut args = conda.to_vec();
    args.extend(["create", "demo", "--python", "3.12", "-p", "wsp-beta"]);
    let created = wsp_installing(None, &state, With::Uv, &args);
    assert_ok(&created, "create on conda");
    assert!(
        text(&created.stderr).contains("Linked wsp-beta-1.0"),
        "{}",
        text(&created.stderr)
    );
    let mut args = conda.to_vec();
    let code = "import wsp_alpha, wsp_beta; print(wsp_alpha.VERSION)";
    args.extend(["exec", "demo", "--", "python", "-c", code]);
    let ran = wsp_installing(None, &state, With::Uv, &args);
    assert_ok(&ran, "exec on conda");
    assert_eq!(text(&ran.stdout), "1.0\n");
}
