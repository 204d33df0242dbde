//! Arbitrary JSON as the `params` of every WSP method: `from_params` never panics; an accepted value
//! keeps every rule and re-validates to itself when sent again; a refused one lists violations that
//! the `-32602` error can carry.

use std::fmt::Debug;

use serde_json::{json, Value};
use wsp_protocol::error::invalid_params;
use wsp_protocol::params::{check_env_key, check_env_value, MAX_ID_LENGTH};
use wsp_protocol::{
    CreateParams, ExecuteParams, IdParams, InitializeParams, NoParams, Params, VersionRequest,
};

/// The names WSP params use, so built values hit real fields most of the time.
const FIELDS: [&str; 10] = [
    "client_name",
    "client_protocol_version",
    "name",
    "python_version",
    "id",
    "argv",
    "cwd",
    "env",
    "PATH",
    "",
];

/// One input: JSON text used as the params value, or, when it is not JSON, a value built from
/// the bytes (so every input reaches the params code).
pub fn check(data: &[u8]) {
    let value = serde_json::from_slice::<Value>(data)
        .unwrap_or_else(|_| build_value(&mut data.iter().copied(), 0));
    // An empty input stands for absent params.
    let params = (!data.is_empty()).then_some(&value);
    check_type(params, |_: &NoParams| json!({}), |_| {});
    check_type(params, initialize_value, initialize_rules);
    check_type(params, create_value, create_rules);
    check_type(params, id_value, id_rules);
    check_type(params, execute_value, execute_rules);
}

fn check_type<P: Params + PartialEq + Debug>(
    params: Option<&Value>,
    rebuild: fn(&P) -> Value,
    rules: fn(&P),
) {
    match P::from_params(params) {
        Ok(accepted) => {
            rules(&accepted);
            let again = rebuild(&accepted);
            assert_eq!(
                P::from_params(Some(&again)),
                Ok(accepted),
                "sent again as {again}"
            );
        }
        Err(violations) => {
            assert!(!violations.is_empty(), "refused with no violation");
            for violation in &violations {
                assert!(!violation.field.is_empty() && !violation.rule.is_empty());
                assert!(!violation.message.is_empty());
            }
            serde_json::to_string(&invalid_params(&violations)).expect("-32602 serialises");
        }
    }
}

/// `text` has between `min` and `max` characters (Unicode scalar values).
fn assert_chars(text: &str, min: usize, max: usize) {
    let length = text.chars().count();
    assert!(
        (min..=max).contains(&length),
        "{text:?} has {length} characters"
    );
}

fn initialize_value(params: &InitializeParams) -> Value {
    json!({
        "client_name": params.client_name,
        "client_protocol_version": params.client_protocol_version,
    })
}

fn initialize_rules(params: &InitializeParams) {
    assert_chars(&params.client_name, 1, 255);
    assert_chars(&params.client_protocol_version, 1, 64);
}

fn create_value(params: &CreateParams) -> Value {
    json!({"name": params.name, "python_version": params.python_version})
}

fn create_rules(params: &CreateParams) {
    assert_chars(&params.name, 1, 64);
    let parsed = params.python_version.parse::<VersionRequest>();
    assert_eq!(parsed.as_ref(), Ok(&params.version_request));
}

fn id_value(params: &IdParams) -> Value {
    json!({"id": params.id})
}

fn id_rules(params: &IdParams) {
    assert_chars(&params.id, 1, MAX_ID_LENGTH);
}

fn execute_value(params: &ExecuteParams) -> Value {
    json!({"id": params.id, "argv": params.argv, "cwd": params.cwd, "env": params.env})
}

fn execute_rules(params: &ExecuteParams) {
    assert!(!params.id.is_empty());
    assert!(!params.argv.is_empty(), "empty argv accepted");
    if let Some(cwd) = &params.cwd {
        assert!(cwd.starts_with('/'), "relative cwd {cwd:?} accepted");
    }
    for (key, value) in &params.env {
        assert_eq!(check_env_key(key), Ok(()));
        assert_eq!(check_env_value(key, value), Ok(()));
    }
}

/// A JSON value read from bytes: the first picks the kind, the next ones its contents.
fn build_value(bytes: &mut impl Iterator<Item = u8>, depth: usize) -> Value {
    let Some(kind) = bytes.next() else {
        return Value::Null;
    };
    let count = |bytes: &mut dyn Iterator<Item = u8>| usize::from(bytes.next().unwrap_or(0) % 8);
    match kind % 8 {
        0 => Value::Null,
        1 => Value::Bool(kind & 0x80 != 0),
        2 => json!(i64::from(bytes.next().unwrap_or(0) as i8) * 1000),
        3 | 4 => Value::String(build_string(bytes)),
        5 if depth < 4 => {
            let items = count(bytes);
            (0..items).map(|_| build_value(bytes, depth + 1)).collect()
        }
        _ if depth < 4 => {
            let entries = count(bytes);
            let object = (0..entries).map(|_| {
                let key = match bytes.next().unwrap_or(0) {
                    pick @ 0..=199 => FIELDS[usize::from(pick) % FIELDS.len()].to_owned(),
                    _ => build_string(bytes),
                };
                (key, build_value(bytes, depth + 1))
            });
            Value::Object(object.collect())
        }
        _ => Value::String(String::new()),
    }
}

/// A string of up to 300 characters: mostly copies of one character, some read from the bytes.
fn build_string(bytes: &mut impl Iterator<Item = u8>) -> String {
    let length =
        usize::from(bytes.next().unwrap_or(0)) + usize::from(bytes.next().unwrap_or(0) % 2) * 45;
    let fill = match bytes.next().unwrap_or(0) % 6 {
        0 => '/',
        1 => '=',
        2 => '\0',
        3 => 'é',
        4 => '3',
        _ => 'a',
    };
    let mut text: String = std::iter::repeat_n(fill, length).collect();
    let extra: Vec<u8> = bytes.take(length % 5).collect();
    text.push_str(&String::from_utf8_lossy(&extra));
    text
}
