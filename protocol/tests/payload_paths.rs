//! `parse_payload` reads well-formed messages without a `Value` in between; whatever the
//! input, it must classify exactly as the `Value` path does.

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use wsp_protocol::message::parse_payload_via_value;
use wsp_protocol::parse_payload;

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        Just(json!("2.0")),
        Just(json!("1.0")),
        "[a-z/$]{0,12}".prop_map(Value::from),
        "\\PC{0,6}".prop_map(Value::from),
    ]
}

fn member_value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
            prop::collection::btree_map("[a-z]{1,4}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn message() -> impl Strategy<Value = Value> {
    let member = prop_oneof![
        Just("jsonrpc".to_owned()),
        Just("id".to_owned()),
        Just("method".to_owned()),
        Just("params".to_owned()),
        "[a-z]{1,5}",
    ];
    prop_oneof![
        4 => prop::collection::vec((member, member_value()), 0..6).prop_map(|members| {
            Value::Object(members.into_iter().collect::<Map<String, Value>>())
        }),
        1 => member_value(),
    ]
}

fn payload() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => message().prop_map(|m| m.to_string()),
        2 => prop::collection::vec(message(), 0..4).prop_map(|ms| Value::from(ms).to_string()),
        // A member written twice, which a `Value` keeps the last of.
        1 => (member_value(), member_value()).prop_map(|(a, b)| {
            format!(r#"{{"jsonrpc":"2.0","id":{a},"method":"m","id":{b}}}"#)
        }),
        1 => "\\PC{0,24}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn both_paths_classify_alike(text in payload()) {
        prop_assert_eq!(parse_payload(&text), parse_payload_via_value(&text));
    }
}

#[test]
fn well_formed_messages_of_every_kind_agree() {
    for text in [
        r#"{"jsonrpc":"2.0","id":1,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"m","params":null}"#,
        r#"{"jsonrpc":"2.0","method":"n","params":{"a":[1,2]}}"#,
        r#"{"jsonrpc":"2.0","id":"x","method":null}"#,
        r#"{"jsonrpc":"2\u002e0","id":-3,"method":"m\n"}"#,
        r#"[{"jsonrpc":"2.0","id":1,"method":"m"},5,{"jsonrpc":"2.0","method":"n"}]"#,
        r#"  [ ]  "#,
        r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":{},"method":"m"}"#,
    ] {
        assert_eq!(parse_payload(text), parse_payload_via_value(text), "{text}");
    }
}
