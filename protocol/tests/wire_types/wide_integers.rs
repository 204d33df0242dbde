//! Integers beyond 64 bits among the top-level params members: the request keeps their text, so
//! a `work_done_token` of any size is read and serialized exactly, while `params` holds the
//! nearest double (or the largest one of its sign); everything else a `Value` can't hold is
//! still refused.

use serde_json::{json, Value};
use wsp_protocol::message::parse_payload_via_value;
use wsp_protocol::{
    parse_payload, CreateParams, Incoming, InstallParams, Params, Payload, ProgressParams,
    ProgressToken, Request, WorkDoneProgress,
};

/// The one request `text` holds, the fast path and the reference agreeing on it.
fn parsed(text: &str) -> Request {
    let parsed = parse_payload(text);
    assert_eq!(parsed, parse_payload_via_value(text), "{text}");
    match parsed {
        Payload::Single(Incoming::Request(request)) => request,
        other => panic!("{text}: {other:?}"),
    }
}

fn install_with_token(token: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"environment/install","params":{{"id":"e","packages":["p"],"work_done_token":{token}}}}}"#
    )
}

/// The token as it goes out in `$/progress`.
fn echoed(token: ProgressToken) -> String {
    let params = ProgressParams {
        token,
        value: WorkDoneProgress::End { message: None },
    };
    let text = serde_json::to_string(&params).expect("progress serializes");
    let rest = text
        .strip_prefix(r#"{"token":"#)
        .expect("the token comes first");
    rest.strip_suffix(r#","value":{"kind":"end"}}"#)
        .expect("then the value")
        .to_owned()
}

#[test]
fn integer_tokens_of_any_size_are_kept_exactly() {
    let huge = format!("9{}", "0".repeat(399));
    let tokens = [
        "7",
        "-7",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775809",
        "123456789012345678901234567890",
        "-0",
        &huge,
    ];
    for token in tokens {
        let request = parsed(&install_with_token(token));
        let params = InstallParams::from_request(&request).expect("the params are valid");
        let read = params.work_done_token.expect("a token");
        assert_eq!(echoed(read), token);
    }
}

#[test]
fn params_hold_the_nearest_double_and_the_request_the_text() {
    let request = parsed(&install_with_token("18446744073709551617"));
    assert_eq!(
        request.params.as_ref().unwrap()["work_done_token"],
        json!(18446744073709551617.0)
    );
    assert_eq!(
        request.wide_integers.get("work_done_token"),
        Some("18446744073709551617")
    );
    let beyond = format!("-1{}", "0".repeat(400));
    let request = parsed(&install_with_token(&beyond));
    assert_eq!(
        request.params.as_ref().unwrap()["work_done_token"],
        json!(f64::MIN)
    );
    assert_eq!(
        request.wide_integers.get("work_done_token"),
        Some(beyond.as_str())
    );
    let plain = parsed(&install_with_token("12"));
    assert!(plain.wide_integers.is_empty());
    assert_eq!(plain, parsed(&install_with_token("12")));
}

#[test]
fn create_reads_a_wide_token_too_and_from_params_alone_cannot() {
    let text = r#"{"jsonrpc":"2.0","id":2,"method":"environment/create","params":{"name":"n","python_version":"3.12","work_done_token":36893488147419103232}}"#;
    let request = parsed(text);
    let params = CreateParams::from_request(&request).expect("valid");
    assert_eq!(
        echoed(params.work_done_token.unwrap()),
        "36893488147419103232"
    );
    // Without the request's text the member is a double: not an integer token.
    let violations = CreateParams::from_params(request.params.as_ref()).unwrap_err();
    assert_eq!(violations[0].field, "work_done_token");
}

#[test]
fn the_last_of_repeated_members_counts() {
    let text = r#"{"jsonrpc":"2.0","id":1,"method":"environment/install","params":{"id":"e","packages":["p"],"work_done_token":18446744073709551616,"work_done_token":"s"}}"#;
    let request = parsed(text);
    assert!(request.wide_integers.is_empty());
    let params = InstallParams::from_request(&request).unwrap();
    assert_eq!(
        params.work_done_token,
        Some(ProgressToken::String("s".into()))
    );
    let text = r#"{"jsonrpc":"2.0","id":1,"method":"environment/install","params":{"id":"e","packages":["p"],"work_done_token":"s","work_done_token":18446744073709551616}}"#;
    let params = InstallParams::from_request(&parsed(text)).unwrap();
    assert_eq!(
        echoed(params.work_done_token.unwrap()),
        "18446744073709551616"
    );
}

#[test]
fn non_integers_are_still_not_tokens() {
    for token in ["1.5", "2.0", "1E2", "1e19", "18446744073709551616.0"] {
        let request = parsed(&install_with_token(token));
        let violations = InstallParams::from_request(&request).unwrap_err();
        assert_eq!(
            (violations[0].field.as_str(), violations[0].rule.as_str()),
            ("work_done_token", "type"),
            "{token}"
        );
    }
}

#[test]
fn what_no_value_can_hold_elsewhere_is_still_invalid() {
    let wide = format!("1{}", "0".repeat(400));
    for params in [
        format!(r#"{{"t":{wide},"f":1e400}}"#),
        format!(r#"{{"t":{wide},"n":[{wide}]}}"#),
        format!(r#"{{"t":{wide},"s":"\uDC00"}}"#),
        format!("[{wide}]"),
    ] {
        let text = format!(r#"{{"jsonrpc":"2.0","id":3,"method":"m","params":{params}}}"#);
        assert_eq!(parse_payload(&text), parse_payload_via_value(&text));
        let Payload::Single(Incoming::Invalid { id, reason }) = parse_payload(&text) else {
            panic!("{params}: {:?}", parse_payload(&text));
        };
        assert_eq!(id.to_string(), "3");
        assert!(reason.starts_with("`params` cannot be read"), "{reason}");
    }
}

#[test]
fn a_batch_keeps_each_requests_wide_integers() {
    let text = format!(
        "[{},{}]",
        install_with_token("7"),
        install_with_token("99999999999999999999")
    );
    assert_eq!(parse_payload(&text), parse_payload_via_value(&text));
    let Payload::Batch(messages) = parse_payload(&text) else {
        panic!("a batch");
    };
    let tokens: Vec<String> = messages
        .iter()
        .map(|message| match message {
            Incoming::Request(request) => echoed(
                InstallParams::from_request(request)
                    .unwrap()
                    .work_done_token
                    .unwrap(),
            ),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(tokens, ["7", "99999999999999999999"]);
    let value: Value = serde_json::from_str(&text).unwrap();
    assert!(value.is_array());
}
