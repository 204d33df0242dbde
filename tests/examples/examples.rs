//! The examples run and do what their docs say (`cargo test` builds them beside the binary).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn example(name: &str) -> PathBuf {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_wsp"));
    let path = bin
        .parent()
        .expect("target dir")
        .join("examples")
        .join(name);
    assert!(
        path.is_file(),
        "{} is built by `cargo test`",
        path.display()
    );
    path
}

fn frames(messages: &[&str]) -> Vec<u8> {
    messages
        .iter()
        .flat_map(|m| format!("Content-Length: {}\r\n\r\n{m}", m.len()).into_bytes())
        .collect()
}

fn run_with_input(mut command: Command, input: Vec<u8>) -> (i32, String) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the example starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&input)
        .expect("write");
    let output = child.wait_with_output().expect("the example ends");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn the_custom_backend_example_passes_the_conformance_kit() {
    let output = Command::new(example("quota_backend"))
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("FAILED"), "{stderr}");
    assert!(stderr.matches(": ok").count() >= 17, "{stderr}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("quota-exceeded"), "{stdout}");
}

#[test]
fn the_custom_method_example_answers_its_transcript() {
    let input = frames(&[
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"client_name":"me","client_protocol_version":"0.1.0"}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"shout","params":{"text":"hello"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"shout","params":{"text":""}}"#,
    ]);
    let (status, stdout) = run_with_input(Command::new(example("custom_method")), input);
    assert_eq!(status, 0);
    assert!(
        stdout.contains(r#""methods":["initialize","shout","shutdown"]"#),
        "{stdout}"
    );
    assert!(
        stdout.contains(r#"{"jsonrpc":"2.0","id":2,"result":{"text":"HELLO!"}}"#),
        "{stdout}"
    );
    assert!(stdout.contains(r#""rule":"non_empty""#), "{stdout}");
}

#[test]
fn the_auth_layer_example_rejects_requests_without_the_token() {
    let input = frames(&[
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"client_name":"a","client_protocol_version":"0.1.0"}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"client_name":"a","client_protocol_version":"0.1.0","auth_token":"s3cret"}}"#,
    ]);
    let mut command = Command::new(example("auth_layer"));
    command.env("WSP_EXAMPLE_TOKEN", "s3cret");
    let (status, stdout) = run_with_input(command, input);
    assert_eq!(status, 0);
    assert!(
        stdout.contains(r#""id":1,"error":{"code":-32001"#),
        "{stdout}"
    );
    assert!(stdout.contains(r#""id":2,"result":{"#), "{stdout}");
}

#[test]
fn the_serve_backend_example_serves_its_backend_over_stdio() {
    let state = tempfile::tempdir().expect("a state directory");
    let input = frames(&[
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"client_name":"me","client_protocol_version":"0.1.0"}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"environment/create","params":{"name":"mine","python_version":"3.12"}}"#,
    ]);
    let mut command = Command::new(example("serve_backend"));
    command.arg(state.path());
    let (status, stdout) = run_with_input(command, input);
    assert_eq!(status, 0, "{stdout}");
    assert!(stdout.contains(r#""backend":"stdlib-venv""#), "{stdout}");
    assert!(stdout.contains(r#""environment/execute""#), "{stdout}");
    assert!(
        stdout.contains(r#""id":2,"result":{"id":"env-"#),
        "{stdout}"
    );
    assert!(stdout.contains(r#""name":"mine""#), "{stdout}");
    let listed = std::fs::read_dir(state.path().join("environments"))
        .expect("the environments directory")
        .count();
    assert_eq!(listed, 1, "one environment on disk");
}
