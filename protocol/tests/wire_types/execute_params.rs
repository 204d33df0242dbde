//! `environment/execute`'s extended params (stdin, timeout_ms, max_output_bytes, stream,
//! limits), its result and its `environment/output` notification.

use proptest::prelude::*;
use serde_json::{json, Value};
use wsp_protocol::params::{ExecuteLimits, MAX_TIMEOUT_MS};
use wsp_protocol::results::{OutputParams, OutputStream};
use wsp_protocol::{ExecuteParams, ExecuteResult, Id, Params};

fn parse(params: Value) -> Result<ExecuteParams, Vec<(String, String)>> {
    ExecuteParams::from_params(Some(&params))
        .map_err(|violations| violations.into_iter().map(|v| (v.field, v.rule)).collect())
}

fn pair(field: &str, rule: &str) -> (String, String) {
    (field.to_owned(), rule.to_owned())
}

#[test]
fn absent_extensions_keep_the_old_behaviour() {
    let params = parse(json!({"id": "e", "argv": ["true"]})).unwrap();
    assert_eq!(params.stdin, None);
    assert_eq!(params.timeout_ms, None);
    assert_eq!(params.max_output_bytes, None);
    assert!(!params.stream);
    assert_eq!(params.limits, ExecuteLimits::default());
    let nulls = json!({"id": "e", "argv": ["true"], "stdin": null, "timeout_ms": null,
        "max_output_bytes": null, "stream": null, "limits": null});
    assert_eq!(parse(nulls).unwrap(), params);
}

#[test]
fn every_extension_is_read() {
    let params = parse(json!({
        "id": "e", "argv": ["cat"], "stdin": "", "timeout_ms": MAX_TIMEOUT_MS,
        "max_output_bytes": 1, "stream": true,
        "limits": {"memory_bytes": 1_000_000, "cpu_seconds": 2.0, "processes": 3,
                   "open_files": 64, "cpu_seconds_typo": null}
    }));
    // An unknown limit is refused, even when null: a misspelt limit must not pass silently.
    assert_eq!(
        params.unwrap_err(),
        [pair("limits.cpu_seconds_typo", "unknown_field")]
    );
    let params = parse(json!({
        "id": "e", "argv": ["cat"], "stdin": "", "timeout_ms": 1,
        "max_output_bytes": u64::MAX, "stream": true,
        "limits": {"memory_bytes": 1_000_000, "cpu_seconds": 2.0, "processes": 3,
                   "open_files": null}
    }))
    .unwrap();
    assert_eq!(params.stdin.as_deref(), Some(""));
    assert_eq!(params.timeout_ms, Some(1));
    assert_eq!(params.max_output_bytes, Some(u64::MAX));
    assert!(params.stream);
    let expected = ExecuteLimits {
        memory_bytes: Some(1_000_000),
        cpu_seconds: Some(2),
        processes: Some(3),
        open_files: None,
    };
    assert_eq!(params.limits, expected);
}

#[test]
fn every_violation_is_listed_at_once() {
    let violations = parse(json!({
        "id": "", "argv": [], "cwd": "rel", "env": {"A=B": "x"},
        "stdin": 5, "timeout_ms": 0, "max_output_bytes": -1, "stream": "yes",
        "limits": {"memory_bytes": 0, "cpu_seconds": 1.5, "processes": "9",
                   "open_files": 1e30, "nice": 1}
    }))
    .unwrap_err();
    let expected = [
        pair("id", "non_empty"),
        pair("argv", "non_empty"),
        pair("cwd", "absolute"),
        pair("env.A=B", "env_key"),
        pair("stdin", "type"),
        pair("timeout_ms", "minimum"),
        pair("max_output_bytes", "minimum"),
        pair("stream", "type"),
        pair("limits.memory_bytes", "minimum"),
        pair("limits.cpu_seconds", "type"),
        pair("limits.processes", "type"),
        pair("limits.open_files", "maximum"),
        pair("limits.nice", "unknown_field"),
    ];
    assert_eq!(violations, expected);
}

#[test]
fn integer_bounds() {
    let timeout = |value: Value| parse(json!({"id": "e", "argv": ["x"], "timeout_ms": value}));
    assert_eq!(
        timeout(json!(MAX_TIMEOUT_MS)).unwrap().timeout_ms,
        Some(MAX_TIMEOUT_MS)
    );
    assert_eq!(timeout(json!(10.0)).unwrap().timeout_ms, Some(10));
    let rule = |value: Value| timeout(value).unwrap_err()[0].1.clone();
    assert_eq!(rule(json!(MAX_TIMEOUT_MS + 1)), "maximum");
    assert_eq!(rule(json!(-5)), "minimum");
    assert_eq!(rule(json!(-0.5)), "minimum");
    assert_eq!(rule(json!(0.5)), "type");
    assert_eq!(rule(json!("10")), "type");
    assert_eq!(rule(json!(1e300)), "maximum");
    let limits = parse(json!({"id": "e", "argv": ["x"], "limits": []})).unwrap_err();
    assert_eq!(limits, [pair("limits", "type")]);
}

#[test]
fn the_schema_names_every_field_and_rule() {
    let schema = ExecuteParams::schema();
    let properties = schema["properties"].as_object().unwrap();
    let names: Vec<&str> = properties.keys().map(String::as_str).collect();
    for field in [
        "id",
        "argv",
        "cwd",
        "env",
        "stdin",
        "timeout_ms",
        "max_output_bytes",
        "stream",
        "limits",
    ] {
        assert!(names.contains(&field), "{field} missing from {names:?}");
    }
    assert_eq!(properties["timeout_ms"]["maximum"], json!(MAX_TIMEOUT_MS));
    assert_eq!(properties["cwd"]["pattern"], json!("^/"));
    assert_eq!(properties["limits"]["additionalProperties"], json!(false));
    let limit_names: Vec<&String> = properties["limits"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(limit_names.len(), ExecuteLimits::FIELDS.len());
    assert_eq!(schema["required"], json!(["id", "argv"]));
}

#[test]
fn results_always_carry_the_new_fields() {
    let result = ExecuteResult {
        exit_code: -9,
        stdout: "so far".into(),
        stderr: String::new(),
        duration_ms: 500,
        timed_out: true,
        stdout_truncated: false,
        stderr_truncated: true,
    };
    let value = serde_json::to_value(&result).unwrap();
    assert_eq!(
        value,
        json!({"exit_code": -9, "stdout": "so far", "stderr": "", "duration_ms": 500,
               "timed_out": true, "stdout_truncated": false, "stderr_truncated": true})
    );
    // A result from a server that predates them still reads.
    let old: ExecuteResult =
        serde_json::from_value(json!({"exit_code": 0, "stdout": "", "stderr": ""})).unwrap();
    assert!(!old.timed_out && old.duration_ms == 0);
}

#[test]
fn output_notifications_have_the_documented_shape() {
    let params = OutputParams {
        request_id: Id::from(7),
        stream: OutputStream::Stderr,
        data: "é".into(),
    };
    assert_eq!(wsp_protocol::methods::OUTPUT, "environment/output");
    assert_eq!(
        serde_json::to_value(&params).unwrap(),
        json!({"request_id": 7, "stream": "stderr", "data": "é"})
    );
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        ".{0,4}".prop_map(Value::String),
        Just(json!({"memory_bytes": 1})),
        Just(json!([])),
    ]
}

proptest! {
    #[test]
    fn any_value_in_any_extension_is_an_answer_not_a_panic(
        stdin in json_leaf(), timeout in json_leaf(), cap in json_leaf(),
        stream in json_leaf(), memory in json_leaf(), limits_whole in json_leaf(),
        whole in any::<bool>(),
    ) {
        let limits = if whole { limits_whole } else { json!({"memory_bytes": memory}) };
        let _ = parse(json!({"id": "e", "argv": ["x"], "stdin": stdin, "timeout_ms": timeout,
            "max_output_bytes": cap, "stream": stream, "limits": limits}));
    }
}
