//! `wsp delete` over the real binary: a terminal is asked first (no keeps the environment and
//! exits 1, yes deletes it), `--yes` asks nothing, and without a terminal nothing is asked.

use std::path::Path;

use crate::run::{on_a_terminal, wsp};

fn names(state: &Path) -> String {
    String::from_utf8_lossy(&wsp(state, &["list"]).stdout).into_owned()
}

#[test]
fn delete_asks_a_terminal_and_nobody_else() {
    let temp = tempfile::tempdir().unwrap();
    let state = temp.path().join("state");
    for name in ["kept", "piped", "forced"] {
        let created = wsp(&state, &["create", name, "--python", "3.12"]);
        assert!(created.status.success(), "{created:?}");
    }
    let state_text = state.display().to_string();
    let delete = |name: &str, extra: &[&str]| -> Vec<String> {
        ["--state-dir", &state_text, "delete", name]
            .iter()
            .chain(extra)
            .map(|word| (*word).to_owned())
            .collect()
    };
    let on_a_terminal = |args: Vec<String>, typed: &str| {
        on_a_terminal(&args.iter().map(String::as_str).collect::<Vec<_>>(), typed)
    };

    let (status, shown) = on_a_terminal(delete("kept", &[]), "n\n");
    assert_eq!(status, Some(1), "{shown}");
    assert!(shown.contains("Delete env-"), "{shown}");
    assert!(shown.contains("(kept) and its files? [y/N]"), "{shown}");
    assert!(shown.contains("wsp: not deleted"), "{shown}");
    assert!(names(&state).contains("kept"), "a no keeps it");

    let (status, shown) = on_a_terminal(delete("kept", &[]), "y\n");
    assert_eq!(status, Some(0), "{shown}");
    assert!(shown.contains("deleted env-"), "{shown}");
    assert!(!names(&state).contains("kept"), "a yes deletes it");

    let (status, shown) = on_a_terminal(delete("forced", &["--yes"]), "");
    assert_eq!(status, Some(0), "{shown}");
    assert!(!shown.contains("[y/N]"), "--yes asks nothing: {shown}");

    let piped = wsp(&state, &["delete", "piped"]);
    assert!(piped.status.success(), "{piped:?}");
    assert!(!String::from_utf8_lossy(&piped.stderr).contains("[y/N]"));
    assert_eq!(names(&state), "no environments\n");
}
