//! What `get` keeps between requests: a repeated `get` of an unchanged environment reads no
//! metadata file, and any execute, install or uninstall, through any server on the state
//! directory, makes the next `get` read the files again.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use wsp_testing::Distribution;

use crate::support::Server;

fn version_of(details: &Value, name: &str) -> String {
    details["installed_packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {details}"))["version"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn metadata_file(root: &Path) -> PathBuf {
    let lib = root.join("lib");
    let python = std::fs::read_dir(&lib)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    python.join("site-packages/wsp_viewed-1.0.dist-info/METADATA")
}

#[tokio::test]
async fn a_repeated_get_reads_no_metadata_until_a_request_changes_the_environment() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    let wheels = temp.path().join("wheels");
    std::fs::create_dir_all(&wheels).unwrap();
    Distribution::new("wsp-viewed", "1.0")
        .write_wheel(&wheels)
        .unwrap();
    let mut server = Server::start_in(&state, &[]);
    let mut other = Server::start_in(&state, &[]);
    server.initialize().await;
    other.initialize().await;
    let created = server
        .call(
            1,
            "environment/create",
            json!({"name": "viewed", "python_version": "3.12", "packages": ["wsp-viewed"],
                   "find_links": [wheels], "no_index": true}),
        )
        .await;
    let id = created["result"]["id"].clone();
    let root = PathBuf::from(created["result"]["extra"]["path"].as_str().unwrap());
    let first = server.call(2, "environment/get", json!({"id": id})).await;
    assert_eq!(version_of(&first["result"], "wsp-viewed"), "1.0");

    // Changed behind the server's back, deep inside: the kept view answers.
    let metadata = metadata_file(&root);
    let text = std::fs::read_to_string(&metadata).unwrap();
    std::fs::write(&metadata, text.replace("Version: 1.0", "Version: 9.9")).unwrap();
    let kept = server.call(3, "environment/get", json!({"id": id})).await;
    assert_eq!(
        version_of(&kept["result"], "wsp-viewed"),
        "1.0",
        "no metadata read"
    );
    assert_eq!(
        kept["result"]["extra"]["disk_bytes"],
        first["result"]["extra"]["disk_bytes"]
    );

    // An execute through the other server (it could have changed anything) ends the view.
    let ran = other
        .call(
            1,
            "environment/execute",
            json!({"id": id, "argv": ["python", "-c", "open('grown', 'w').write('x' * 5000)"]}),
        )
        .await;
    assert_eq!(ran["result"]["exit_code"], 0, "{ran}");
    let fresh = server.call(4, "environment/get", json!({"id": id})).await;
    assert_eq!(version_of(&fresh["result"], "wsp-viewed"), "9.9", "{fresh}");
    let grown = fresh["result"]["extra"]["disk_bytes"].as_u64().unwrap();
    let before = first["result"]["extra"]["disk_bytes"].as_u64().unwrap();
    assert_eq!(grown, before + 5000, "{fresh}");
}
