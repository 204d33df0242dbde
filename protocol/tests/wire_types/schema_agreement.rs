//! Each params type's JSON Schema is recorded from its validator; a JSON Schema validator
//! and `from_params` must agree on every input: valid for one exactly when valid for the other.

use crate::agreement::agree;
use proptest::prelude::*;
use serde_json::{json, Map, Value};
use wsp_protocol::validation::Params;
use wsp_protocol::{CreateParams, ExecuteParams, IdParams, InitializeParams, NoParams};

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        prop_oneof![
            Just(0i64),
            Just(1),
            Just(-1),
            Just(500),
            Just(86_400_001),
            any::<i64>()
        ]
        .prop_map(Value::from),
        prop_oneof![Just(2.0f64), Just(1.5), Just(1e20), Just(-0.5)].prop_map(Value::from),
        prop_oneof![
            Just(String::new()),
            Just("/abs/dir".to_owned()),
            Just("relative".to_owned()),
            Just("3.12".to_owned()),
            Just("3.12.1".to_owned()),
            Just("3".to_owned()),
            Just("three".to_owned()),
            Just("3.12.1.4".to_owned()),
            Just("a=b".to_owned()),
            Just("nul\0inside".to_owned()),
            Just("é".repeat(64)),
            Just("é".repeat(65)),
            Just("x".repeat(128)),
            Just("x".repeat(129)),
            Just("x".repeat(256)),
            "\\PC{0,8}",
        ]
        .prop_map(Value::from),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("PATH".to_owned()),
        Just(String::new()),
        Just("A=B".to_owned()),
        Just("N\0UL".to_owned()),
        Just("memory_bytes".to_owned()),
        Just("open_files".to_owned()),
        Just("bogus".to_owned()),
    ];
    prop_oneof![
        4 => leaf(),
        1 => prop::collection::vec(leaf(), 0..3).prop_map(Value::from),
        2 => prop::collection::btree_map(key, leaf(), 0..3)
            .prop_map(|m| Value::Object(m.into_iter().collect())),
    ]
}

fn params(fields: &'static [&'static str]) -> impl Strategy<Value = Value> {
    let field = prop_oneof![
        6 => prop::sample::select(fields).prop_map(str::to_owned),
        1 => Just("unknown".to_owned()),
    ];
    prop_oneof![
        8 => prop::collection::vec((field, value()), 0..8)
            .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
        1 => value(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn initialize(input in params(&["client_name", "client_protocol_version"])) {
        agree::<InitializeParams>(&input)?;
    }

    #[test]
    fn create(input in params(&["name", "python_version"])) {
        agree::<CreateParams>(&input)?;
    }

    #[test]
    fn get(input in params(&["id"])) {
        agree::<IdParams>(&input)?;
    }

    #[test]
    fn no_params(input in params(&["anything"])) {
        agree::<NoParams>(&input)?;
    }

    #[test]
    fn execute(input in params(&[
        "id", "argv", "cwd", "env", "stdin", "timeout_ms", "max_output_bytes", "stream", "limits",
    ])) {
        agree::<ExecuteParams>(&input)?;
    }
}

#[test]
fn a_valid_execute_request_is_valid_for_both() {
    let input = json!({
        "id": "env-0123456789ab",
        "argv": ["python", "-c", "print(1)"],
        "cwd": "/tmp",
        "env": {"A": "b"},
        "stdin": "",
        "timeout_ms": 500,
        "max_output_bytes": 1,
        "stream": true,
        "limits": {"memory_bytes": 1_000_000, "open_files": null},
    });
    assert!(ExecuteParams::from_params(Some(&input)).is_ok());
    let schema = ExecuteParams::schema();
    assert!(jsonschema::validator_for(&schema)
        .expect("compiles")
        .is_valid(&input));
}
