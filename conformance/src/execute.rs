//! Checks of `environment/execute`: activation, argv lookup, cwd rules, exit statuses, stdin,
//! spawn failures, the stack variables and output decoding.

use std::path::PathBuf;
use wsp_testing::ClientExt;

use serde_json::{json, Value};

use super::contract::{check, create};
use super::{CheckFn, Client, Fixture};
use wsp_testing::code;

pub(super) fn checks() -> Vec<(&'static str, CheckFn)> {
    vec![
        check!(commands_run_activated_inside_the_environment),
        check!(exit_codes_and_signals_are_reported),
        check!(stdin_is_the_null_device_and_output_is_captured),
        check!(the_request_env_goes_on_top),
        check!(cwd_defaults_to_the_root_and_must_stay_inside),
        check!(a_program_that_cannot_start_is_31004_spawn_failed),
        check!(output_is_decoded_lossily),
    ]
}

async fn environment(f: &Fixture, name: &str) -> (Client, Value, PathBuf) {
    let mut client = f.client().await;
    let created = create(&mut client, f, name).await;
    let root = PathBuf::from(created["extra"]["path"].as_str().expect("extra.path"));
    (client, created["id"].clone(), root)
}

async fn python(client: &mut Client, id: &Value, code: &str) -> Value {
    client
        .ok(
            "environment/execute",
            json!({"id": id, "argv": ["python", "-c", code]}),
        )
        .await
}

async fn commands_run_activated_inside_the_environment(f: Fixture) {
    let (mut client, id, root) = environment(&f, "activated").await;
    let variable = f.backend.activation_variable.clone();
    let code = format!(
        "import os, sys, json; print(json.dumps([sys.prefix, sys.executable, os.environ.get('{variable}'), \
         os.environ['PATH'].split(os.pathsep)[0], os.environ.get('WSP_ENVIRONMENT_ID'), \
         os.environ.get('WSP_ENVIRONMENT_STACK')]))"
    );
    let ran = python(&mut client, &id, &code).await;
    assert_eq!(ran["exit_code"], 0, "{ran}");
    let facts: Vec<Value> =
        serde_json::from_str(ran["stdout"].as_str().unwrap()).expect("JSON from the child");
    let root_text = root.display().to_string();
    assert_eq!(
        facts[0],
        root_text.as_str(),
        "sys.prefix is the environment"
    );
    assert!(
        facts[1].as_str().unwrap().starts_with(&root_text),
        "argv[0] `python` is the environment's: {facts:?}"
    );
    assert_eq!(facts[2], root_text.as_str(), "{variable}");
    assert_eq!(
        facts[3],
        root.join("bin").display().to_string().as_str(),
        "bin dir first on PATH"
    );
    assert_eq!(facts[4], id);
    let stack = facts[5].as_str().expect("WSP_ENVIRONMENT_STACK");
    assert_eq!(
        stack.rsplit(':').next(),
        id.as_str(),
        "the stack ends with this environment"
    );
}

async fn exit_codes_and_signals_are_reported(f: Fixture) {
    let (mut client, id, _) = environment(&f, "codes").await;
    let ran = python(&mut client, &id, "import sys; sys.exit(7)").await;
    assert_eq!(ran["exit_code"], 7);
    let ran = python(
        &mut client,
        &id,
        "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
    )
    .await;
    assert_eq!(ran["exit_code"], -9);
    let ran = client
        .ok(
            "environment/execute",
            json!({"id": id, "argv": ["sh", "-c", "kill -TERM $$"]}),
        )
        .await;
    assert_eq!(ran["exit_code"], -15);
}

async fn stdin_is_the_null_device_and_output_is_captured(f: Fixture) {
    let (mut client, id, _) = environment(&f, "stdin").await;
    let ran = python(
        &mut client,
        &id,
        "import sys; data = sys.stdin.read(); print(repr(data)); sys.stderr.write('to stderr\\n')",
    )
    .await;
    assert_eq!(ran["stdout"], "''\n");
    assert_eq!(ran["stderr"], "to stderr\n");
}

async fn the_request_env_goes_on_top(f: Fixture) {
    let (mut client, id, _) = environment(&f, "env").await;
    let ran = client
        .ok(
            "environment/execute",
            json!({"id": id, "argv": ["sh", "-c", "printf '%s|%s' \"$WSP_TEST_VALUE\" \"$HOME\""],
                   "env": {"WSP_TEST_VALUE": "a b=c", "HOME": "/overridden"}}),
        )
        .await;
    assert_eq!(ran["stdout"], "a b=c|/overridden");
    let error = client
        .err(
            "environment/execute",
            json!({"id": id, "argv": ["true"], "env": {"": "x", "A=B": "y"}}),
        )
        .await;
    assert_eq!(code(&error), -32602);
    assert_eq!(error["data"]["violations"].as_array().unwrap().len(), 2);
}

async fn cwd_defaults_to_the_root_and_must_stay_inside(f: Fixture) {
    let (mut client, id, root) = environment(&f, "cwd").await;
    let real_root = std::fs::canonicalize(&root).unwrap();
    let ran = python(&mut client, &id, "import os; print(os.getcwd())").await;
    assert_eq!(
        ran["stdout"].as_str().unwrap().trim(),
        real_root.display().to_string()
    );
    let sub = root.join("work");
    std::fs::create_dir(&sub).unwrap();
    let ran = client
        .ok(
            "environment/execute",
            json!({"id": id, "argv": ["pwd", "-P"], "cwd": sub}),
        )
        .await;
    assert_eq!(
        ran["stdout"].as_str().unwrap().trim(),
        real_root.join("work").display().to_string()
    );
    std::os::unix::fs::symlink(&f.scratch, root.join("escape")).unwrap();
    for cwd in [
        json!("relative/dir"),
        json!(f.scratch),
        json!(root.join("escape")),
        json!(root.join("..")),
        json!(root.join("missing")),
    ] {
        let error = client
            .err(
                "environment/execute",
                json!({"id": id, "argv": ["true"], "cwd": cwd}),
            )
            .await;
        assert_eq!(code(&error), -32602, "cwd {cwd}: {error}");
        assert!(error["data"]["violations"]
            .as_array()
            .is_some_and(|v| !v.is_empty()));
    }
}

async fn a_program_that_cannot_start_is_31004_spawn_failed(f: Fixture) {
    let (mut client, id, _) = environment(&f, "spawn").await;
    let error = client
        .err(
            "environment/execute",
            json!({"id": id, "argv": ["wsp-no-such-program-here"]}),
        )
        .await;
    assert_eq!(code(&error), -31004);
    assert_eq!(error["data"]["reason"], "spawn-failed");
    assert!(error["data"]["detail"]
        .as_str()
        .unwrap()
        .contains("wsp-no-such-program-here"));
    let error = client
        .err("environment/execute", json!({"id": id, "argv": []}))
        .await;
    assert_eq!(code(&error), -32602, "an empty argv");
}

async fn output_is_decoded_lossily(f: Fixture) {
    let (mut client, id, _) = environment(&f, "bytes").await;
    let ran = python(
        &mut client,
        &id,
        "import sys; sys.stdout.buffer.write(b'ok\\xff\\xfe!'); sys.stdout.flush()",
    )
    .await;
    assert_eq!(ran["stdout"], "ok\u{fffd}\u{fffd}!");
}
