//! The `wsp` binary as a user runs it: client commands against a real spawned `wsp serve`, with a
//! state directory of the test's own.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::run::{expect_status, stderr, stdout, wsp, wsp_bare, WSP};

use serde_json::Value;

fn json_out(output: &Output) -> Value {
    expect_status(output, 0, "");
    serde_json::from_str(&stdout(output)).expect("stdout is one JSON value")
}

/// The value of a `key: value` line of human output.
fn field(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k == key).then(|| v.trim().to_owned())
    })
}

fn state() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp state dir")
}

#[test]
fn create_list_get_exec_delete_by_name() {
    let state = state();
    let dir = state.path();

    let created = wsp(dir, &["create", "demo", "--python", "3.12"]);
    expect_status(&created, 0, "");
    let text = stdout(&created);
    assert_eq!(field(&text, "name").as_deref(), Some("demo"), "{text}");
    assert_eq!(field(&text, "backend").as_deref(), Some("venv"), "{text}");
    assert_eq!(
        field(&text, "packages").as_deref(),
        Some("(none)"),
        "{text}"
    );
    let python = field(&text, "python").unwrap_or_default();
    assert!(python.starts_with("3.12 (3.12."), "{text}");
    let interpreter = field(&text, "interpreter").unwrap_or_default();
    assert!(Path::new(&interpreter).is_absolute(), "{text}");

    let list = wsp(dir, &["list"]);
    expect_status(&list, 0, "");
    let lines: Vec<String> = stdout(&list).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(header, ["ID", "NAME", "PYTHON"]);
    let row: Vec<&str> = lines[1].split_whitespace().collect();
    assert!(row[0].starts_with("env-") && row[0].len() == 16, "{row:?}");
    assert_eq!(row[1..], ["demo", "3.12"]);
    let id = row[0].to_owned();

    let details = json_out(&wsp(dir, &["get", "demo", "--json"]));
    assert_eq!(details["id"], id.as_str());
    assert_eq!(details["name"], "demo");
    let root = PathBuf::from(details["extra"]["path"].as_str().expect("extra.path"));

    let by_id = wsp(dir, &["get", &id]);
    expect_status(&by_id, 0, "");
    assert_eq!(
        field(&stdout(&by_id), "path"),
        Some(root.display().to_string())
    );

    let prefix = wsp(
        dir,
        &[
            "exec",
            "demo",
            "--",
            "python",
            "-c",
            "import sys; print(sys.prefix)",
        ],
    );
    expect_status(&prefix, 0, "");
    let printed = PathBuf::from(stdout(&prefix).trim_end_matches('\n'));
    assert_eq!(
        printed.canonicalize().expect("sys.prefix exists"),
        root.canonicalize().expect("env root exists")
    );

    let seven = wsp(
        dir,
        &[
            "exec",
            "demo",
            "--",
            "python",
            "-c",
            "import sys; sys.stderr.write('err'); sys.exit(7)",
        ],
    );
    expect_status(&seven, 7, "");
    assert_eq!(stderr(&seven), "err");

    let deleted = wsp(dir, &["delete", "demo"]);
    expect_status(&deleted, 0, "");
    assert_eq!(stdout(&deleted), format!("deleted {id} (demo)\n"));

    let gone = wsp(dir, &["get", "demo"]);
    expect_status(&gone, 1, "");
    assert!(
        stderr(&gone).contains("error -31001: "),
        "{}",
        stderr(&gone)
    );
    assert_eq!(stdout(&gone), "");
    assert_eq!(
        json_out(&wsp(dir, &["--json", "list"])),
        Value::Array(vec![])
    );
}

#[test]
fn exec_passes_env_cwd_and_signals_through() {
    let state = state();
    let dir = state.path();
    let created = json_out(&wsp(dir, &["--json", "create", "sig", "--python", "3.12"]));
    let root = created["extra"]["path"]
        .as_str()
        .expect("extra.path")
        .to_owned();
    let env_and_cwd = wsp(
        dir,
        &[
            "exec",
            "sig",
            "--env",
            "GREETING=a=b",
            "--cwd",
            &format!("{root}/bin"),
            "--",
            "python",
            "-c",
            "import os; print(os.environ['GREETING'], os.path.basename(os.getcwd()))",
        ],
    );
    expect_status(&env_and_cwd, 0, "");
    assert_eq!(stdout(&env_and_cwd), "a=b bin\n");

    let killed = wsp(
        dir,
        &[
            "exec",
            "sig",
            "--",
            "python",
            "-c",
            "import os, signal; os.kill(os.getpid(), signal.SIGTERM)",
        ],
    );
    expect_status(&killed, 128 + 15, "killed by SIGTERM");
}

#[test]
fn json_output_parses_and_json_errors_are_objects() {
    let state = state();
    let dir = state.path();
    let list = json_out(&wsp(dir, &["list", "--json"]));
    assert_eq!(list, Value::Array(vec![]));

    let missing = wsp(dir, &["--json", "get", "env-000000000000"]);
    expect_status(&missing, 1, "");
    let error: Value = serde_json::from_str(stderr(&missing).lines().last().unwrap_or(""))
        .expect("the last stderr line is the error object");
    assert_eq!(error["code"], -31001);
    assert_eq!(error["data"]["id"], "env-000000000000");
}

#[test]
fn raw_calls_print_results_and_errors_plainly() {
    let state = state();
    let dir = state.path();
    let list = wsp(dir, &["call", "environment/list"]);
    expect_status(&list, 0, "");
    assert_eq!(
        serde_json::from_str::<Value>(&stdout(&list)).ok(),
        Some(Value::Array(vec![]))
    );

    let again = wsp(
        dir,
        &[
            "call",
            "initialize",
            r#"{"client_name":"x","client_protocol_version":"0.1.0"}"#,
        ],
    );
    expect_status(&again, 1, "");
    assert!(
        stderr(&again).contains("error -32600: "),
        "{}",
        stderr(&again)
    );
    assert_eq!(stdout(&again), "");

    let unavailable = wsp(
        dir,
        &[
            "call",
            "environment/create",
            r#"{"name": "x", "python_version": "3.99"}"#,
        ],
    );
    expect_status(&unavailable, 1, "");
    let text = stderr(&unavailable);
    assert!(
        text.contains("wsp: error -31003: Python 3.99 is not available\n  available: ")
            && text.contains(" 3.12."),
        "{text}"
    );

    let unknown = wsp(dir, &["call", "no/such/method"]);
    expect_status(&unknown, 1, "");
    assert!(
        stderr(&unknown).contains("error -32601: "),
        "{}",
        stderr(&unknown)
    );
}

#[test]
fn usage_errors_exit_2_without_a_server() {
    let state = state();
    let dir = state.path();
    let bad_json = wsp(dir, &["call", "environment/list", "{not json"]);
    expect_status(&bad_json, 2, "");
    assert!(
        stderr(&bad_json).contains("not JSON"),
        "{}",
        stderr(&bad_json)
    );

    let no_argv = wsp(dir, &["exec", "demo"]);
    expect_status(&no_argv, 2, "");

    let serve_json = wsp_bare(&["--json", "serve"]);
    expect_status(&serve_json, 2, "");
}

#[test]
fn transport_failures_exit_2_with_a_message() {
    let state = state();
    let dir = state.path();
    let missing = wsp(
        dir,
        &["--server-cmd", "/nonexistent/wsp-server serve", "list"],
    );
    expect_status(&missing, 2, "");
    assert!(
        stderr(&missing).contains("cannot start the server `/nonexistent/wsp-server`"),
        "{}",
        stderr(&missing)
    );

    let quits = wsp_bare(&["--server-cmd", "false", "list"]);
    expect_status(&quits, 2, "");
    assert!(
        stderr(&quits).contains("closed its output before answering (exit status 1)"),
        "{}",
        stderr(&quits)
    );

    let garbage = wsp_bare(&[
        "--server-cmd",
        r#"sh -c 'printf "Bogus: header\r\n\r\n"; cat >/dev/null'"#,
        "list",
    ]);
    expect_status(&garbage, 2, "");
    assert!(
        stderr(&garbage).contains("undecodable frame"),
        "{}",
        stderr(&garbage)
    );
}

#[test]
fn server_cmd_runs_this_binary_with_extra_flags() {
    let state = state();
    let dir = state.path();
    let server_cmd = format!(
        "'{WSP}' serve --state-dir '{}' --drain-timeout 1s --log-format json",
        dir.display()
    );
    let created = wsp_bare(&[
        "--server-cmd",
        &server_cmd,
        "create",
        "via-cmd",
        "--python",
        "3.12",
        "--json",
    ]);
    let created = json_out(&created);
    assert_eq!(created["name"], "via-cmd");

    // The default server, pointed at the same state directory, sees what the custom one made.
    let list = json_out(&wsp(dir, &["list", "--json"]));
    assert_eq!(list[0]["name"], "via-cmd");
    assert_eq!(list[0]["id"], created["id"]);
}

/// The server a command spawns for itself serves that one command: it makes no spare
/// environment (none would be taken, and its exit would wait for it). A server given with
/// `--server-cmd` keeps its own default, which makes one.
#[test]
fn a_commands_own_server_makes_no_spare_environment() {
    let state = state();
    let spare_made = |server_cmd: Option<String>, name: &str| {
        let mut command = crate::run::command(state.path());
        command.env("WSP_LOG", "debug").arg("-v");
        if let Some(server_cmd) = server_cmd {
            command.args(["--server-cmd", &server_cmd]);
        }
        let output = command
            .args(["create", name, "--python", "3.12"])
            .output()
            .expect("run the wsp binary");
        let log = crate::run::text(&output.stderr);
        assert!(output.status.success(), "{log}");
        assert!(
            log.contains("DEBUG"),
            "the server's debug log is shown: {log}"
        );
        log.contains("a spare environment is ready")
    };
    assert!(!spare_made(None, "own-server"));
    assert!(spare_made(Some(format!("'{WSP}' serve")), "given-server"));
}
