//! `schema/wsp.schema.json` is the reference server's schema document, current to the code;
//! `initialize`'s fingerprint is the hash of that file; real answers validate against it.
//! `WSP_UPDATE_SCHEMA=1 cargo test --test wire schema_file` rewrites the file.

use std::path::Path;

use serde_json::Value;
use wsp_middleware::router::fingerprint_of;
use wsp_server::ServerBuilder;

/// The schema document of a server with the environment methods, bound as the reference server
/// binds them (the test below checks the binary lists the same methods).
fn reference_document() -> (Value, Vec<String>) {
    let state = tempfile::tempdir().expect("state dir");
    let environments = crate::support::venv_environments(state.path());
    let server = ServerBuilder::new().group(environments).build();
    (server.schema_document(), server.methods().to_vec())
}

/// `initialize`'s answer from the real `wsp serve`.
async fn served_capabilities() -> Value {
    let mut server = crate::support::Server::start(&[]);
    let response = server.initialize().await;
    server.finish().await;
    response["result"].clone()
}

#[tokio::test]
async fn the_shipped_schema_is_current_and_is_what_the_fingerprint_hashes() {
    let (document, methods) = reference_document();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/wsp.schema.json");
    let text = serde_json::to_string_pretty(&document).expect("serializes") + "\n";
    if std::env::var_os("WSP_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &text).expect("write the schema file");
    }
    let shipped = std::fs::read_to_string(&path).expect("schema/wsp.schema.json exists");
    assert!(
        shipped == text,
        "schema/wsp.schema.json is stale: run `WSP_UPDATE_SCHEMA=1 cargo test --test wire schema_file`"
    );
    let shipped: Value = serde_json::from_str(&shipped).expect("JSON");
    let capabilities = served_capabilities().await;
    assert_eq!(
        capabilities["methods"],
        serde_json::json!(methods),
        "the document describes the methods wsp serve binds"
    );
    assert_eq!(
        capabilities["schema"]["fingerprint"],
        Value::from(fingerprint_of(&shipped)),
        "initialize's fingerprint is the shipped document's hash"
    );

    let result_schema = &shipped["methods"]["initialize"]["result"];
    let validator = jsonschema::validator_for(result_schema).expect("compiles");
    let errors: Vec<String> = validator
        .iter_errors(&capabilities)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "initialize's answer: {errors:?}");
}

#[test]
fn every_schema_in_the_document_compiles() {
    let (document, _) = reference_document();
    for (name, method) in document["methods"].as_object().expect("methods") {
        for part in ["params", "result"] {
            jsonschema::validator_for(&method[part])
                .unwrap_or_else(|e| panic!("{name} {part}: {e}"));
        }
    }
    for (name, notification) in document["notifications"]
        .as_object()
        .expect("notifications")
    {
        jsonschema::validator_for(&notification["params"])
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    for (code, error) in document["errors"].as_object().expect("errors") {
        jsonschema::validator_for(&error["data"]).unwrap_or_else(|e| panic!("{code}: {e}"));
    }
}
