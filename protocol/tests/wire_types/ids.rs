//! Request ids: echoed exactly as their JSON text arrived, matched as the numbers a `Value`
//! reads them as.

use std::collections::HashMap;

use serde_json::{json, Value};
use wsp_protocol::id::NumberId;
use wsp_protocol::message::parse_payload_via_value;
use wsp_protocol::{parse_payload, Id, Incoming, Payload, Request, Response};

/// Number texts a `serde_json::Number` would change or refuse, and some it keeps.
const NUMBER_TEXTS: &[&str] = &[
    "18446744073709551616",
    "123456789012345678901234567890",
    "1E2",
    "-0",
    "1e400",
    "-1e400",
    "1e-400",
    "0.1",
    "12345678901234567890.5",
    "-9223372036854775809",
    "1.0",
    "100.0",
    "0",
    "7",
    "-7",
    "18446744073709551615",
    "-9223372036854775808",
];

fn request(text: &str) -> Request {
    match parse_payload(text) {
        Payload::Single(Incoming::Request(request)) => request,
        other => panic!("{text}: expected a request, got {other:?}"),
    }
}

fn id_of(number: &str) -> Id {
    request(&format!(
        r#"{{"jsonrpc":"2.0","id":{number},"method":"m"}}"#
    ))
    .id
}

#[test]
fn a_number_id_is_answered_with_its_own_text() {
    for &number in NUMBER_TEXTS {
        let id = id_of(number);
        let answer = serde_json::to_string(&Response::ok(id.clone(), Value::Null)).unwrap();
        assert_eq!(
            answer,
            format!(r#"{{"jsonrpc":"2.0","id":{number},"result":null}}"#)
        );
        assert_eq!(id.to_string(), number);
        assert_eq!(serde_json::to_string(&id).unwrap(), number);
    }
}

#[test]
fn string_and_null_ids_are_echoed_as_sent() {
    for (sent, expected) in [
        (r#""a\u0062c""#, r#""abc""#),
        (r#""é\n""#, r#""é\n""#),
        ("null", "null"),
    ] {
        let id = id_of(sent);
        assert_eq!(serde_json::to_string(&id).unwrap(), expected);
    }
    assert_eq!(id_of(r#""x""#), Id::from("x"));
    assert_eq!(id_of("null"), Id::Null);
}

#[test]
fn an_id_beyond_the_range_of_a_double_is_a_request_not_a_parse_error() {
    for text in [
        r#"{"jsonrpc":"2.0","id":1e400,"method":"m"}"#,
        r#"[{"jsonrpc":"2.0","id":1e400,"method":"m"}]"#,
        r#"{"jsonrpc":"2.0","id":1e400,"method":"m","id":-1e400}"#,
    ] {
        let requests = match parse_payload(text) {
            Payload::Single(message) => vec![message],
            Payload::Batch(messages) => messages,
            other => panic!("{text}: {other:?}"),
        };
        assert!(matches!(requests[..], [Incoming::Request(_)]), "{text}");
    }
    let last = request(r#"{"jsonrpc":"2.0","id":1e400,"method":"m","id":-1e400}"#);
    assert_eq!(
        last.id.to_string(),
        "-1e400",
        "the last of a repeated id counts"
    );
}

#[test]
fn number_ids_are_one_id_when_a_value_reads_them_as_one_number() {
    let same = [
        ("1E2", "100.0"),
        ("1E2", "1e2"),
        ("1e400", "1e400"),
        ("-0", "0.0"),
        ("18446744073709551616", "18446744073709551617"),
        ("7", "7"),
    ];
    for (a, b) in same {
        assert_eq!(id_of(a), id_of(b), "{a} and {b}");
        let mut map = HashMap::new();
        map.insert(id_of(a), ());
        assert!(map.contains_key(&id_of(b)), "{a} and {b} hash alike");
    }
    let different = [
        ("1", "1.0"),
        ("0", "-0"),
        ("1e400", "1E400"),
        ("1e400", "-1e400"),
        ("100", "1E2"),
    ];
    for (a, b) in different {
        assert_ne!(id_of(a), id_of(b), "{a} and {b}");
    }
    assert_ne!(id_of("1"), Id::from("1"), "a number and a string differ");
    assert_eq!(id_of("7"), Id::from(7));
    assert_eq!(id_of("-7"), Id::from(-7));
}

/// A `$/cancelRequest` names its request in params that arrive as a `Value`, which keeps no
/// number's text: the id read from it must still find the request.
#[test]
fn an_id_read_from_a_value_finds_the_request_it_names() {
    for &number in NUMBER_TEXTS {
        let Ok(value) = serde_json::from_str::<Value>(number) else {
            assert_eq!(number.trim_start_matches('-'), "1e400");
            continue;
        };
        let from_value = Id::from_value(&value).unwrap();
        let mut running = HashMap::new();
        running.insert(id_of(number), number);
        assert_eq!(running.get(&from_value), Some(&number), "{number}");
    }
}

#[test]
fn ids_deserialize_from_text_and_from_values() {
    for &number in NUMBER_TEXTS {
        let id: Id = serde_json::from_str(number).unwrap();
        assert_eq!(serde_json::to_string(&id).unwrap(), number);
        assert_eq!(id, id_of(number));
    }
    assert_eq!(serde_json::from_value::<Id>(json!(5)).unwrap(), Id::from(5));
    assert_eq!(
        serde_json::from_value::<Id>(json!("s")).unwrap(),
        Id::from("s")
    );
    assert_eq!(serde_json::from_value::<Id>(Value::Null).unwrap(), Id::Null);
    for bad in ["true", "[1]", "{}", r#""\uD800""#] {
        assert!(serde_json::from_str::<Id>(bad).is_err(), "{bad}");
    }
}

#[test]
fn number_texts_are_checked() {
    assert_eq!(NumberId::from_text("1E2").unwrap().to_string(), "1E2");
    assert!(NumberId::from_text("1e400").unwrap().as_number().is_none());
    for bad in [" 1", "1 ", "01", "1.", "+1", "true", r#""1""#, "", "1 2"] {
        assert!(NumberId::from_text(bad).is_none(), "{bad:?}");
    }
}

#[test]
fn ids_that_cannot_be_ids_make_the_message_invalid_with_a_null_id() {
    for id in ["true", "[1]", "{}", r#""\uD800""#] {
        let text = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"m"}}"#);
        for payload in [parse_payload(&text), parse_payload_via_value(&text)] {
            let Payload::Single(Incoming::Invalid { id, reason }) = payload else {
                panic!("{text}: {payload:?}");
            };
            assert_eq!(id, Id::Null);
            assert!(reason.contains("`id`"), "{reason}");
        }
    }
}

/// `params` that no `Value` can hold make the request invalid, answered with its id; the same
/// numbers in a member nobody reads change nothing.
#[test]
fn params_no_value_can_hold_are_invalid_with_the_request_id() {
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    for params in ["[1e400]", r#"{"a":-1e400}"#, r#"["\uDC00"]"#, &deep] {
        let text = format!(
            r#"{{"jsonrpc":"2.0","id":18446744073709551616,"method":"m","params":{params}}}"#
        );
        let Payload::Single(Incoming::Invalid { id, reason }) = parse_payload(&text) else {
            panic!("{params}: {:?}", parse_payload(&text));
        };
        assert_eq!(id.to_string(), "18446744073709551616");
        assert!(reason.starts_with("`params` cannot be read"), "{reason}");
    }
    for extra in ["1e400", r#""\uDC00""#, &deep] {
        let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","extra":{extra},"\uD800":0}}"#);
        assert_eq!(parse_payload(&text), parse_payload_via_value(&text));
        let Payload::Single(Incoming::Request(request)) = parse_payload(&text) else {
            panic!("{extra}: {:?}", parse_payload(&text));
        };
        assert_eq!(request.params, None);
    }
}

#[test]
fn a_payload_that_is_a_huge_number_is_one_invalid_message() {
    assert_eq!(
        parse_payload("1e400"),
        Payload::Single(Incoming::Invalid {
            id: Id::Null,
            reason: "a message must be a JSON object".into()
        })
    );
    assert!(matches!(parse_payload("1e400 x"), Payload::NotJson(_)));
}
