//! `environment/install`, `environment/uninstall` and create's package fields: every violation
//! listed, and the recorded schema agreeing with the reader.

use crate::agreement::agree;
use proptest::prelude::*;
use serde_json::{json, Value};
use wsp_protocol::packages::{MAX_LOCATION_LENGTH, MAX_PACKAGES, MAX_PACKAGE_LENGTH};
use wsp_protocol::{
    CreateParams, InstallParams, Params, ProgressParams, ProgressToken, UninstallParams,
    WorkDoneProgress,
};

fn violations<P: Params + std::fmt::Debug>(params: Value) -> Vec<(String, String)> {
    P::from_params(Some(&params))
        .expect_err("params are refused")
        .into_iter()
        .map(|v| (v.field, v.rule))
        .collect()
}

fn pair(field: &str, rule: &str) -> (String, String) {
    (field.to_owned(), rule.to_owned())
}

#[test]
fn install_reads_every_field() {
    let params = InstallParams::from_params(Some(&json!({
        "id": "env-0123456789ab",
        "packages": ["demo==1.0", "other >= 2; python_version > '3'"],
        "find_links": ["/wheels", "file:///more", "https://example.org/links"],
        "index_url": "http://127.0.0.1:9/simple",
        "no_index": true,
        "upgrade": true,
        "work_done_token": "t-1",
    })))
    .unwrap();
    assert_eq!(params.packages.len(), 2);
    assert_eq!(params.source.find_links.len(), 3);
    assert_eq!(
        params.source.index_url.as_deref(),
        Some("http://127.0.0.1:9/simple")
    );
    assert_eq!(params.source.no_index, Some(true));
    assert!(params.upgrade);
    assert_eq!(
        params.work_done_token,
        Some(ProgressToken::String("t-1".into()))
    );
    let minimal = InstallParams::from_params(Some(&json!({"id": "e", "packages": ["x"]}))).unwrap();
    assert!(!minimal.upgrade && minimal.source.no_index.is_none());
    assert!(minimal.work_done_token.is_none() && minimal.source.find_links.is_empty());
}

#[test]
fn install_lists_every_violation() {
    let found = violations::<InstallParams>(json!({
        "packages": ["", "-r evil.txt", "ok", 7, "x".repeat(MAX_PACKAGE_LENGTH + 1), "a\nb"],
        "find_links": ["relative/dir", "/fine", "x".repeat(MAX_LOCATION_LENGTH + 1)],
        "index_url": "not a url",
        "no_index": "yes",
        "upgrade": 1,
        "work_done_token": 1.5,
    }));
    assert_eq!(
        found,
        vec![
            pair("id", "required"),
            pair("packages[0]", "non_empty"),
            pair("packages[1]", "format"),
            pair("packages[3]", "type"),
            pair("packages[4]", "max_length"),
            pair("packages[5]", "format"),
            pair("find_links[0]", "format"),
            pair("find_links[2]", "max_length"),
            pair("index_url", "format"),
            pair("no_index", "type"),
            pair("upgrade", "type"),
            pair("work_done_token", "type"),
        ]
    );
}

#[test]
fn package_counts_are_bounded() {
    assert_eq!(
        violations::<InstallParams>(json!({"id": "e", "packages": []})),
        vec![pair("packages", "non_empty")]
    );
    let many: Vec<String> = (0..=MAX_PACKAGES).map(|i| format!("p{i}")).collect();
    assert_eq!(
        violations::<UninstallParams>(json!({"id": "e", "packages": many})),
        vec![pair("packages", "max_items")]
    );
    let most: Vec<String> = (0..MAX_PACKAGES).map(|i| format!("p{i}")).collect();
    assert!(UninstallParams::from_params(Some(&json!({"id": "e", "packages": most}))).is_ok());
    assert_eq!(
        violations::<UninstallParams>(json!({"id": "", "packages": "x"})),
        vec![pair("id", "non_empty"), pair("packages", "type")]
    );
}

#[test]
fn create_takes_packages_optionally() {
    let plain =
        CreateParams::from_params(Some(&json!({"name": "a", "python_version": "3.12"}))).unwrap();
    assert!(plain.packages.is_empty() && plain.work_done_token.is_none());
    let with = CreateParams::from_params(Some(&json!({
        "name": "a", "python_version": "3.12", "packages": ["demo"], "find_links": ["/w"],
        "no_index": true, "work_done_token": 7,
    })))
    .unwrap();
    assert_eq!(with.packages, ["demo"]);
    assert_eq!(with.source.find_links, ["/w"]);
    assert_eq!(with.work_done_token, Some(ProgressToken::Number(7.into())));
    let null = CreateParams::from_params(Some(
        &json!({"name": "a", "python_version": "3.12", "packages": null}),
    ))
    .unwrap();
    assert!(null.packages.is_empty());
    assert_eq!(
        violations::<CreateParams>(json!({"name": "a", "python_version": "3.12", "packages": []})),
        vec![pair("packages", "non_empty")]
    );
    assert_eq!(
        violations::<CreateParams>(json!({
            "name": "", "python_version": "3.12", "packages": ["-e ."], "index_url": "/not/url",
        })),
        vec![
            pair("name", "non_empty"),
            pair("packages[0]", "format"),
            pair("index_url", "format"),
        ]
    );
}

#[test]
fn progress_values_serialize_as_lsp_does() {
    let begin = ProgressParams {
        token: ProgressToken::Number(3.into()),
        value: WorkDoneProgress::Begin {
            title: "Installing".into(),
            message: None,
            percentage: Some(0),
        },
    };
    assert_eq!(
        serde_json::to_value(&begin).unwrap(),
        json!({"token": 3, "value": {"kind": "begin", "title": "Installing", "percentage": 0}})
    );
    let end = WorkDoneProgress::End { message: None };
    assert_eq!(serde_json::to_value(&end).unwrap(), json!({"kind": "end"}));
    let report: WorkDoneProgress =
        serde_json::from_value(json!({"kind": "report", "message": "Resolved"})).unwrap();
    assert_eq!(
        report,
        WorkDoneProgress::Report {
            message: Some("Resolved".into()),
            percentage: None
        }
    );
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        prop_oneof![Just(0i64), Just(7), Just(-1)].prop_map(Value::from),
        Just(Value::from(1.5)),
        prop_oneof![
            Just(String::new()),
            Just("/abs/wheels".to_owned()),
            Just("relative".to_owned()),
            Just("file:///w".to_owned()),
            Just("http://127.0.0.1:1/simple".to_owned()),
            Just("://nothing".to_owned()),
            Just("-r x".to_owned()),
            Just("demo==1.0".to_owned()),
            Just("a\u{85}b".to_owned()),
            Just("x".repeat(MAX_PACKAGE_LENGTH + 1)),
            "\\PC{0,8}",
        ]
        .prop_map(Value::from),
    ]
}

fn params(fields: &'static [&'static str]) -> impl Strategy<Value = Value> {
    let value = prop_oneof![
        3 => leaf(),
        2 => prop::collection::vec(leaf(), 0..4).prop_map(Value::from),
    ];
    let field = prop_oneof![
        6 => prop::sample::select(fields).prop_map(str::to_owned),
        1 => Just("unknown".to_owned()),
    ];
    prop::collection::vec((field, value), 0..8)
        .prop_map(|members| Value::Object(members.into_iter().collect()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn install_schema_agrees(input in params(&[
        "id", "packages", "find_links", "index_url", "no_index", "upgrade", "work_done_token",
    ])) {
        agree::<InstallParams>(&input)?;
    }

    #[test]
    fn uninstall_schema_agrees(input in params(&["id", "packages"])) {
        agree::<UninstallParams>(&input)?;
    }
}
