//! Payload text through `parse_payload`: a payload is JSON exactly when serde_json says so, a batch
//! keeps its elements in order, each element is classified as JSON-RPC 2.0 says, and every response
//! the server could send about it serialises to JSON that a client reads back unchanged.

use serde_json::{json, Value};
use wsp_protocol::error::method_not_found;
use wsp_protocol::message::{invalid_request_response, parse_error_response};
use wsp_protocol::{parse_payload, Id, Incoming, Payload, Response};

/// One input: payload text (input that is not UTF-8 never reaches `parse_payload`).
pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = serde_json::from_str::<Value>(text);
    match (parse_payload(text), parsed) {
        (Payload::NotJson(detail), Err(_)) => {
            check_responses(&[parse_error_response(&detail)], &[Id::Null]);
        }
        (Payload::EmptyBatch, Ok(Value::Array(values))) if values.is_empty() => {
            let reply = invalid_request_response(Id::Null, "empty batch");
            check_responses(&[reply], &[Id::Null]);
        }
        (Payload::Batch(messages), Ok(Value::Array(values))) => {
            assert_eq!(messages.len(), values.len(), "batch length");
            let (replies, ids): (Vec<Response>, Vec<Id>) = messages
                .iter()
                .zip(&values)
                .map(|(message, value)| check_message(message, value))
                .unzip();
            check_responses(&replies, &ids);
        }
        (Payload::Single(message), Ok(value)) if !value.is_array() => {
            let (reply, id) = check_message(&message, &value);
            check_responses(&[reply], &[id]);
        }
        // JSON a `Value` can't hold (a number past f64 like 1e400, a lone surrogate escape) is
        // still JSON: never -32700; the message is classified from its raw members (an id keeps
        // its text, params no `Value` holds are -32600), which a `Value` can't check here.
        (payload, Err(_)) if serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() => {
            assert!(
                !matches!(payload, Payload::NotJson(_)),
                "valid JSON answered -32700"
            );
        }
        (payload, parsed) => panic!("{payload:?} from {parsed:?}"),
    }
}

/// Checks one element's classification; returns a response the server could send for it, and its id.
fn check_message(message: &Incoming, value: &Value) -> (Response, Id) {
    let object = value.as_object();
    let member = |name: &str| object.and_then(|object| object.get(name));
    let id_member = member("id");
    let id_readable = id_member.is_none_or(|id| Id::from_value(id).is_some());
    let well_formed = object.is_some()
        && id_readable
        && member("jsonrpc") == Some(&json!("2.0"))
        && member("method").is_some_and(Value::is_string);
    match message {
        Incoming::Request(request) => {
            assert!(well_formed, "{value} is not a request");
            let id = id_member.expect("a request has an id");
            assert_eq!(&to_value(&request.id), id, "request id");
            assert_eq!(Some(&json!(request.method)), member("method"));
            assert_eq!(request.params.as_ref(), member("params"));
            let result = request.params.clone().unwrap_or(Value::Null);
            let reply = if request.method.len() % 2 == 0 {
                Response::ok(request.id.clone(), result)
            } else {
                Response::error(request.id.clone(), method_not_found(&request.method))
            };
            (reply, request.id.clone())
        }
        Incoming::Notification(notification) => {
            assert!(
                well_formed && id_member.is_none(),
                "{value} is not a notification"
            );
            assert_eq!(Some(&json!(notification.method)), member("method"));
            assert_eq!(notification.params.as_ref(), member("params"));
            (Response::ok(Id::Null, Value::Null), Id::Null)
        }
        Incoming::Invalid { id, reason } => {
            assert!(!well_formed, "{value} is well formed");
            assert!(!reason.is_empty(), "no reason for {value}");
            let expected = id_member.and_then(Id::from_value).unwrap_or(Id::Null);
            assert_eq!(id, &expected, "the id an invalid message is answered with");
            (invalid_request_response(id.clone(), reason), id.clone())
        }
    }
}

/// Each response, and the batch of them, serialises; a client reads each back unchanged.
fn check_responses(responses: &[Response], ids: &[Id]) {
    let batch = serde_json::to_string(responses).expect("a batch reply serialises");
    let Ok(Value::Array(values)) = serde_json::from_str::<Value>(&batch) else {
        panic!("a batch reply is not a JSON array: {batch}");
    };
    for ((response, id), value) in responses.iter().zip(ids).zip(values) {
        assert_eq!(value["jsonrpc"], "2.0");
        assert_ne!(value.get("result").is_some(), value.get("error").is_some());
        let back = Response::from_value(value.clone()).expect("a client reads the response");
        assert_eq!(
            to_value(&back),
            value,
            "the response changed on its way back"
        );
        // The id as a `Value` reads it (the exact text is checked in protocol/tests).
        assert_eq!(value["id"], to_value(id), "response id");
        assert_eq!(&back.id, &response.id);
    }
}

fn to_value<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("wire types serialise")
}
