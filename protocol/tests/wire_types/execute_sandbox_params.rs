//! `environment/execute`'s `sandbox` param: absent or null leaves the server's default, a
//! boolean decides, anything else is a violation listed with the others.

use serde_json::{json, Value};
use wsp_protocol::{ExecuteParams, Params};

fn parse(params: Value) -> Result<ExecuteParams, Vec<(String, String)>> {
    ExecuteParams::from_params(Some(&params))
        .map_err(|violations| violations.into_iter().map(|v| (v.field, v.rule)).collect())
}

#[test]
fn absent_or_null_leaves_the_default() {
    let absent = parse(json!({"id": "e", "argv": ["true"]})).unwrap();
    assert_eq!(absent.sandbox, None);
    let null = parse(json!({"id": "e", "argv": ["true"], "sandbox": null})).unwrap();
    assert_eq!(null.sandbox, None);
}

#[test]
fn a_boolean_decides() {
    for value in [true, false] {
        let params = parse(json!({"id": "e", "argv": ["true"], "sandbox": value})).unwrap();
        assert_eq!(params.sandbox, Some(value));
    }
}

#[test]
fn anything_else_is_a_type_violation_among_the_others() {
    for value in [json!("true"), json!(1), json!([]), json!({})] {
        let violations =
            parse(json!({"id": "e", "argv": [], "sandbox": value, "stream": 0})).unwrap_err();
        assert!(
            violations.contains(&("sandbox".to_owned(), "type".to_owned())),
            "{value}: {violations:?}"
        );
        assert!(
            violations.iter().any(|(field, _)| field == "argv"),
            "{violations:?}"
        );
        assert!(
            violations.iter().any(|(field, _)| field == "stream"),
            "{violations:?}"
        );
    }
}
