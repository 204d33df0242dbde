//! Message classification, ids and params readers.

use proptest::prelude::*;
use serde_json::{json, Value};
use wsp_protocol::{
    parse_payload, CreateParams, ExecuteParams, Id, Incoming, Params, Payload, Response,
};

#[test]
fn ids_of_every_kind_round_trip_exactly() {
    for text in [
        "-1",
        "-9223372036854775808",
        "18446744073709551615",
        "0",
        "\"x\"",
        "null",
        "1.5",
    ] {
        let payload = format!(r#"{{"jsonrpc":"2.0","id":{text},"method":"m"}}"#);
        let Payload::Single(Incoming::Request(request)) = parse_payload(&payload) else {
            panic!("{payload} is a request");
        };
        let response = serde_json::to_string(&Response::ok(request.id, Value::Null)).unwrap();
        assert!(response.contains(&format!(r#""id":{text}"#)), "{response}");
    }
}

#[test]
fn a_message_without_an_id_member_is_a_notification_and_id_null_is_a_request() {
    assert!(matches!(
        parse_payload(r#"{"jsonrpc":"2.0","method":"m"}"#),
        Payload::Single(Incoming::Notification(_))
    ));
    assert!(matches!(
        parse_payload(r#"{"jsonrpc":"2.0","method":"m","id":null}"#),
        Payload::Single(Incoming::Request(r)) if r.id == Id::Null
    ));
}

#[test]
fn create_params_list_every_violation() {
    let violations =
        CreateParams::from_params(Some(&json!({"name": 5, "python_version": "3.12.x"})))
            .unwrap_err();
    let fields: Vec<&str> = violations.iter().map(|v| v.field.as_str()).collect();
    assert_eq!(fields, ["name", "python_version"]);
    let violations = CreateParams::from_params(None).unwrap_err();
    assert_eq!(violations.len(), 2, "{violations:?}");
    let ok = CreateParams::from_params(Some(
        &json!({"name": "é".repeat(64), "python_version": "3.12", "extra": 1}),
    ))
    .unwrap();
    assert_eq!(ok.name.chars().count(), 64);
}

#[test]
fn execute_params_check_argv_cwd_and_env() {
    let violations = ExecuteParams::from_params(Some(
        &json!({"id": "x", "argv": [], "cwd": "rel", "env": {"K": "a\u{0}b"}}),
    ))
    .unwrap_err();
    let rules: Vec<&str> = violations.iter().map(|v| v.rule.as_str()).collect();
    assert_eq!(rules, ["non_empty", "absolute", "env_value"]);
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "[a-z/.]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("jsonrpc".to_owned()),
                    Just("id".to_owned()),
                    Just("method".to_owned()),
                    Just("params".to_owned()),
                    "[a-z]{1,4}"
                ],
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn classification_and_params_never_panic(value in json_value()) {
        let _ = parse_payload(&value.to_string());
        let _ = CreateParams::from_params(Some(&value));
        let _ = ExecuteParams::from_params(Some(&value));
    }
}

#[test]
fn env_keys_and_values_are_checked() {
    use wsp_protocol::params::{check_env_key, check_env_value};
    assert!(check_env_key("FOO_1").is_ok());
    assert!(check_env_key("").is_err());
    assert!(check_env_key("A=B").is_err());
    assert!(check_env_key("A\0B").is_err());
    assert!(check_env_value("K", "any = thing").is_ok());
    assert!(check_env_value("K", "a\0b").is_err());
}
