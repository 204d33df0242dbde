//! `wsp --backend conda create demo --python 3.12 --channel file://…` works offline, and
//! `wsp exec demo -- python -c "import sys; print(sys.prefix)"` prints the prefix.

use std::process::Command;

use wsp_testing::conda::{build_local_channel, PythonBuild};

#[test]
fn conda_create_and_exec_through_the_cli_offline() {
    let temp = tempfile::tempdir().unwrap();
    let builds = [PythonBuild::from_pyenv("3.12.1").expect("pyenv has Python 3.12.1")];
    let url =
        build_local_channel(&temp.path().join("channel"), &builds).expect("the channel builds");
    let state = temp.path().join("state");
    let wsp = env!("CARGO_BIN_EXE_wsp");
    let base = |args: &[&str]| {
        let mut command = Command::new(wsp);
        command
            .arg("--state-dir")
            .arg(&state)
            .args(["--backend", "conda"])
            .args(args);
        command
    };
    let created = base(&[
        "--json",
        "create",
        "demo",
        "--python",
        "3.12",
        "--channel",
        url.as_str(),
    ])
    .output()
    .unwrap();
    assert!(
        created.status.success(),
        "{}",
        String::from_utf8_lossy(&created.stderr)
    );
    let details: serde_json::Value = serde_json::from_slice(&created.stdout).expect("JSON details");
    assert_eq!(details["extra"]["backend"], "conda");
    assert_eq!(details["extra"]["python_full_version"], "3.12.1");
    let prefix = details["extra"]["path"].as_str().unwrap().to_owned();
    assert!(details["installed_packages"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["name"] == "python"));

    let ran = base(&[
        "exec",
        "demo",
        "--",
        "python",
        "-c",
        "import sys; print(sys.prefix)",
    ])
    .output()
    .unwrap();
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&ran.stdout).trim(), prefix);
}

#[test]
fn an_unreachable_channel_is_said_once() {
    let temp = tempfile::tempdir().unwrap();
    let absent = format!("file://{}", temp.path().join("no-channel").display());
    let failed = Command::new(env!("CARGO_BIN_EXE_wsp"))
        .arg("--state-dir")
        .arg(temp.path().join("state"))
        .args(["--backend", "conda", "create", "demo", "--python", "3.12"])
        .args(["--channel", &absent])
        .env_remove("WSP_LOG")
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert_eq!(failed.status.code(), Some(1));
    let error = String::from_utf8_lossy(&failed.stderr);
    let said = "wsp: create failed (channel-unavailable): ";
    assert_eq!(error.matches(said).count(), 1, "{error}");
    assert_eq!(error.matches("no-channel/noarch").count(), 1, "{error}");
    for repeated in ["WARN", "-31004", "\"detail\""] {
        assert!(!error.contains(repeated), "{repeated} in {error}");
    }
}
