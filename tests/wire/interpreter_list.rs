//! `interpreter/list` over the real binary: advertised, shaped as the schema says, the server's
//! own interpreters (not the client's), and the very list `wsp python list` prints for the same
//! configuration.

use std::process::Command;

use serde_json::{json, Value};

use crate::support::{without_managed_pythons, Server};

#[tokio::test]
async fn interpreter_list_answers_the_servers_interpreters_newest_first() {
    let temp = tempfile::tempdir().expect("a temp dir");
    let empty = temp.path().join("empty");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let pyenv = wsp_testing::conda::pyenv_root().expect("pyenv");
    let configured = pyenv.join("versions/3.12.1/bin/python3.12");
    let configured = configured.to_str().expect("a UTF-8 path");
    let env = without_managed_pythons(&empty);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let state = temp.path().join("state");
    let mut server = Server::start_with_env(&state, &["--python", configured], &env);

    let capabilities = server.initialize().await["result"].clone();
    for (fact, name) in [
        ("methods", "interpreter/list"),
        ("features", "interpreter.list"),
    ] {
        assert!(
            capabilities[fact]
                .as_array()
                .expect("an array")
                .contains(&json!(name)),
            "{fact}: {capabilities}"
        );
    }

    let answered = server.call(1, "interpreter/list", json!({})).await;
    let result = answered["result"].clone();
    let listed = result["interpreters"].as_array().expect("interpreters");
    assert_eq!(
        listed[0],
        json!({"version": "3.12.1", "source": "configured", "path": configured}),
        "the configured 3.12.1 is newer than anything the system has: {result}"
    );
    let schema = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/wsp.schema.json"),
    )
    .expect("the schema file");
    let schema: Value = serde_json::from_str(&schema).expect("JSON");
    let validator = jsonschema::validator_for(&schema["methods"]["interpreter/list"]["result"])
        .expect("the shipped schema has interpreter/list's result");
    let errors: Vec<String> = validator
        .iter_errors(&result)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}: {result}");
    let mut versions = Vec::new();
    for interpreter in listed {
        let mut fields: Vec<&String> = interpreter.as_object().expect("an object").keys().collect();
        fields.sort();
        assert_eq!(fields, ["path", "source", "version"], "{interpreter}");
        assert!(
            ["configured", "system", "PATH"].contains(&interpreter["source"].as_str().unwrap()),
            "no pyenv interpreter is the server's: {result}"
        );
        let path = interpreter["path"].as_str().expect("a path");
        assert!(path.starts_with('/'), "{path}");
        let version: Vec<u64> = interpreter["version"]
            .as_str()
            .expect("a version")
            .split('.')
            .map(|n| n.parse().expect("a number"))
            .collect();
        assert_eq!(version.len(), 3, "X.Y.Z: {interpreter}");
        versions.push(version);
    }
    assert!(
        versions.windows(2).all(|pair| pair[0] >= pair[1]),
        "newest first: {result}"
    );

    // Params: none, `{}` or an object of unknown fields, all the same.
    let without = server.call(2, "interpreter/list", Value::Null).await;
    let unknown = server
        .call(3, "interpreter/list", json!({"bogus": 1}))
        .await;
    assert_eq!(without["result"], result);
    assert_eq!(unknown["result"], result);
    let refused = server.call(4, "interpreter/list", json!("x")).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    server.finish().await;

    // `wsp python list` under the same configuration prints the same list, in the same order.
    let local = Command::new(env!("CARGO_BIN_EXE_wsp"))
        .args(["--state-dir", state.to_str().expect("UTF-8")])
        .args(["python", "list", "--json", "--interpreter", configured])
        .envs(env.iter().copied())
        .output()
        .expect("wsp runs");
    assert!(local.status.success(), "{local:?}");
    let local: Value = serde_json::from_slice(&local.stdout).expect("JSON");
    assert_eq!(&local, &result["interpreters"]);
}
