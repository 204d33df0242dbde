//! Environment ids in params, method by method: `get` takes 1–128 characters, `delete` any
//! string.

use serde_json::json;
use wsp_protocol::params::{DeleteParams, MAX_ID_LENGTH};
use wsp_protocol::{IdParams, Params};

#[test]
fn get_takes_ids_of_1_to_128_characters() {
    let longest = "é".repeat(MAX_ID_LENGTH);
    assert!(IdParams::from_params(Some(&json!({"id": longest}))).is_ok());
    for id in [String::new(), "é".repeat(MAX_ID_LENGTH + 1)] {
        let violations = IdParams::from_params(Some(&json!({"id": id}))).unwrap_err();
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert_eq!(violations[0].field, "id");
    }
}

#[test]
fn delete_takes_any_string_as_its_id() {
    for id in [String::new(), "e".repeat(129), "x".repeat(100_000)] {
        let params = DeleteParams::from_params(Some(&json!({"id": id}))).unwrap();
        assert_eq!(params.id, id);
    }
}

#[test]
fn delete_still_needs_a_string_id() {
    for params in [
        json!({}),
        json!({"id": null}),
        json!({"id": 5}),
        json!([]),
        json!("id"),
    ] {
        let violations = DeleteParams::from_params(Some(&params)).unwrap_err();
        assert!(!violations.is_empty(), "{params}");
    }
    assert!(DeleteParams::from_params(None).is_err());
}

#[test]
fn the_schemas_say_the_same() {
    let get = IdParams::schema();
    assert_eq!(get["properties"]["id"]["maxLength"], json!(MAX_ID_LENGTH));
    let delete = DeleteParams::schema();
    assert_eq!(delete["properties"]["id"]["type"], json!("string"));
    assert!(
        delete["properties"]["id"].get("maxLength").is_none(),
        "{delete}"
    );
    assert_eq!(delete["required"], json!(["id"]));
}
