//! `parse_payload` reads well-formed messages without a `Value` in between; whatever the
//! input, it must classify exactly as the member-by-member path does, ids' texts included.

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use wsp_protocol::message::parse_payload_via_value;
use wsp_protocol::{parse_payload, Id, Incoming, Payload, Response};

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

/// JSON number texts, from plain integers to ones no `Value` holds exactly, or at all.
fn number_text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "-?(0|[1-9][0-9]{0,40})(\\.[0-9]{1,25})?([eE][+-]?[0-9]{1,3})?",
        1 => prop::sample::select(vec![
            "-0", "1e400", "-1e400", "1E2", "18446744073709551616", "0.1",
            "12345678901234567890.5", "123456789012345678901234567890",
        ])
        .prop_map(str::to_owned),
    ]
}

/// Member values as raw text, including what no `Value` can hold.
fn raw_member_value() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => member_value().prop_map(|v| v.to_string()),
        3 => number_text(),
        1 => number_text().prop_map(|n| format!("[{n},{{\"n\":{n}}}]")),
        1 => Just(r#""\uD800""#.to_owned()),
        1 => (125usize..135).prop_map(|depth| format!("{}{}", "[".repeat(depth), "]".repeat(depth))),
    ]
}

/// A message object written member by member (names may repeat), as raw text.
fn raw_message() -> impl Strategy<Value = String> {
    let name = prop::sample::select(vec![
        "jsonrpc", "id", "method", "params", "x", "\\uD800", "i\\u0064",
    ]);
    let member =
        (name, raw_member_value()).prop_map(|(name, value)| format!(r#""{name}":{value}"#));
    let well_formed = (number_text(), raw_member_value()).prop_map(|(id, params)| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"m","params":{params}}}"#)
    });
    prop_oneof![
        2 => prop::collection::vec(member, 0..6).prop_map(|m| format!("{{{}}}", m.join(","))),
        2 => well_formed,
    ]
}

fn raw_payload() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => raw_message(),
        1 => prop::collection::vec(raw_message(), 0..4).prop_map(|m| format!("[{}]", m.join(","))),
        1 => number_text(),
    ]
}

/// Both paths agree, down to how every id is written back.
fn assert_alike(text: &str) -> Result<(), TestCaseError> {
    let (fast, reference) = (parse_payload(text), parse_payload_via_value(text));
    prop_assert_eq!(&fast, &reference);
    prop_assert_eq!(format!("{fast:?}"), format!("{reference:?}"));
    Ok(())
}

fn ids(payload: &Payload) -> Vec<&Id> {
    let messages = match payload {
        Payload::Single(message) => std::slice::from_ref(message),
        Payload::Batch(messages) => messages,
        _ => &[],
    };
    messages
        .iter()
        .filter_map(|message| match message {
            Incoming::Request(request) => Some(&request.id),
            Incoming::Invalid { id, .. } => Some(id),
            Incoming::Notification(_) => None,
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn both_paths_classify_alike(text in payload()) {
        assert_alike(&text)?;
    }

    #[test]
    fn both_paths_classify_odd_numbers_and_members_alike(text in raw_payload()) {
        assert_alike(&text)?;
    }

    /// A number id comes back as the text it was sent as, on both paths, and an id read from
    /// a `Value` of that text (as `$/cancelRequest` reads one) is the same id.
    #[test]
    fn number_ids_are_echoed_exactly(id in number_text(), params in raw_member_value()) {
        let single = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"m","params":{params}}}"#);
        let batch = format!(r#"[{single},{{"jsonrpc":"2.0","method":"n"}}]"#);
        for text in [&single, &batch] {
            for payload in [parse_payload(text), parse_payload_via_value(text)] {
                let ids = ids(&payload);
                prop_assert_eq!(ids.len(), 1, "{:?}", payload);
                let answer = serde_json::to_string(&Response::ok(ids[0].clone(), Value::Null)).unwrap();
                prop_assert_eq!(answer, format!(r#"{{"jsonrpc":"2.0","id":{id},"result":null}}"#));
                if let Ok(value) = serde_json::from_str::<Value>(&id) {
                    prop_assert_eq!(&Id::from_value(&value).unwrap(), ids[0]);
                }
            }
        }
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
