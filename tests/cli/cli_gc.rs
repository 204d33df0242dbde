//! `wsp create --reuse` and `wsp gc --keep-bytes` over the real binary.

use crate::run::{assert_ok, expect_status, text, wsp};

#[test]
fn create_reuse_answers_with_the_same_environment_and_gc_deletes_down_to_the_bound() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    let json = |args: &[&str]| -> serde_json::Value {
        let mut with_json = vec!["--json"];
        with_json.extend_from_slice(args);
        serde_json::from_str(&assert_ok(&wsp(&state, &with_json), "a JSON answer")).unwrap()
    };
    let first = json(&["create", "one", "--python", "3.12", "--reuse"]);
    let again = json(&["create", "two", "--python", "3.12", "--reuse"]);
    assert_eq!(again["id"], first["id"], "{again}");
    assert_eq!(again["extra"]["reused"], true);
    let other = json(&["create", "other", "--python", "3.11"]);

    let kept = assert_ok(&wsp(&state, &["gc", "--keep-bytes", "1T"]), "gc");
    assert!(
        kept.ends_with(" bytes left\n") && !kept.contains("deleted"),
        "{kept}"
    );
    let collected = assert_ok(&wsp(&state, &["gc", "--keep-bytes", "0"]), "gc");
    let deleted: Vec<&str> = collected
        .lines()
        .filter(|l| l.starts_with("deleted "))
        .collect();
    assert_eq!(
        deleted,
        [
            format!("deleted {}", first["id"].as_str().unwrap()),
            format!("deleted {}", other["id"].as_str().unwrap()),
        ],
        "least recently used first: {collected}"
    );
    assert!(collected.ends_with("\n0 bytes left\n"), "{collected}");

    let refused = wsp(&state, &["gc", "--keep-bytes", "lots"]);
    expect_status(&refused, 2, "a usage error");
    let said = text(&refused.stderr);
    assert!(said.contains("--keep-bytes"), "{said}");
}
