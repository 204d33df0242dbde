//! A failure with a real cause, through the real `wsp serve` binary: the `-31004` says why in
//! its detail, and the server's log line for it carries the cause's message under `caused_by`.

use std::path::PathBuf;

use crate::support::{error_code, Server};
use serde_json::{json, Value};

/// The `caused_by` field of the log line that says `what` failed, as the log spells it.
fn caused_by<'a>(log: &'a str, what: &str) -> &'a str {
    let line = log
        .lines()
        .find(|line| line.contains(what) && line.contains("caused_by="))
        .unwrap_or_else(|| panic!("no line with `{what}` and a caused_by field in:\n{log}"));
    let start = line.find("caused_by=").expect("found above");
    &line[start..]
}

fn os_error(code: i32) -> String {
    std::io::Error::from_raw_os_error(code).to_string()
}

fn reason(response: &Value) -> &str {
    response["error"]["data"]["reason"].as_str().unwrap_or("")
}

#[tokio::test]
async fn a_store_failure_logs_the_io_error_that_caused_it() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    // With `environments/` a plain file, the store cannot make the new environment's root in
    // it: creating the directory fails with ENOTDIR.
    let environments = server.state_dir.join("environments");
    std::fs::remove_dir(&environments).expect("the store made an empty environments/");
    std::fs::write(&environments, "not a directory").unwrap();

    let refused = server
        .call(
            1,
            "environment/create",
            json!({"name": "nowhere", "python_version": "3.12"}),
        )
        .await;
    assert_eq!(error_code(&refused), -31004, "{refused}");
    assert_eq!(reason(&refused), "state-store", "{refused}");
    let not_a_directory = os_error(20);
    let detail = refused["error"]["data"]["detail"].as_str().unwrap_or("");
    assert!(detail.contains(&not_a_directory), "{refused}");

    let (_, log) = server.finish().await;
    let chain = caused_by(&log, "the state store failed");
    assert_eq!(chain, format!("caused_by=[{not_a_directory:?}]"), "{log}");
}

#[tokio::test]
async fn a_spawn_failure_logs_the_io_error_that_caused_it() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let created = server
        .call(
            1,
            "environment/create",
            json!({"name": "broken-program", "python_version": "3.12"}),
        )
        .await;
    let id = created["result"]["id"].clone();
    let root = PathBuf::from(
        created["result"]["extra"]["path"]
            .as_str()
            .unwrap_or_else(|| panic!("created: {created}")),
    );
    // An executable whose interpreter does not exist: exec fails with ENOENT.
    let program = root.join("bin").join("broken");
    crate::support::write_executable(&program, "#!/nonexistent/interpreter\n");

    let failed = server
        .call(
            2,
            "environment/execute",
            json!({"id": id, "argv": ["broken"], "sandbox": false}),
        )
        .await;
    assert_eq!(error_code(&failed), -31004, "{failed}");
    assert_eq!(reason(&failed), "spawn-failed", "{failed}");
    let no_such_file = os_error(2);
    let detail = failed["error"]["data"]["detail"].as_str().unwrap_or("");
    assert!(detail.contains(&no_such_file), "{failed}");
    assert!(detail.contains("broken"), "{failed}");

    let (_, log) = server.finish().await;
    let chain = caused_by(&log, "the backend failed");
    assert_eq!(chain, format!("caused_by=[{no_such_file:?}]"), "{log}");
}
