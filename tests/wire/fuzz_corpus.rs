//! Replays the checked-in fuzz corpora (`fuzz/corpus/<target>/`) through the same checks the fuzz
//! targets run, so CI exercises every input the fuzzers kept, crashes that were fixed included.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// The checks name the codec `super::codec`: here it is the framework's.
mod codec {
    pub use wsp_server::codec::*;
}

/// The upgrade's checks name tungstenite `super::tungstenite`.
use tokio_tungstenite::tungstenite;

#[path = "../../fuzz/src/codec_checks.rs"]
mod codec_checks;
#[path = "../../fuzz/src/conda_checks.rs"]
mod conda_checks;
#[path = "../../fuzz/src/message_checks.rs"]
mod message_checks;
#[path = "../../fuzz/src/params_checks.rs"]
mod params_checks;
#[path = "../../fuzz/src/ws_upgrade_checks.rs"]
mod ws_upgrade_checks;

/// Runs `check` on every file of the target's corpus; fails naming each input that panics.
fn replay(target: &str, check: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut inputs = 0;
    let mut failed = Vec::new();
    for entry in entries {
        let path = entry.expect("a readable corpus directory").path();
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        inputs += 1;
        if catch_unwind(AssertUnwindSafe(|| check(&data))).is_err() {
            failed.push(path.display().to_string());
        }
    }
    assert!(inputs >= 10, "only {inputs} inputs in {}", dir.display());
    assert!(failed.is_empty(), "inputs that fail the check: {failed:#?}");
}

#[test]
fn codec_corpus_passes_the_codec_checks() {
    replay("codec", codec_checks::check);
}

#[test]
fn messages_corpus_passes_the_message_checks() {
    replay("messages", message_checks::check);
}

#[test]
fn params_corpus_passes_the_params_checks() {
    replay("params", params_checks::check);
}

#[test]
fn conda_paths_corpus_passes_the_paths_json_checks() {
    replay("conda_paths", conda_checks::check_paths_json_input);
}

#[test]
fn conda_meta_corpus_passes_the_record_checks() {
    replay("conda_meta", conda_checks::check_conda_meta_input);
}

#[test]
fn ws_upgrade_corpus_passes_the_upgrade_checks() {
    replay("ws_upgrade", ws_upgrade_checks::check);
}

#[test]
fn ws_upgrade_seeds_get_the_verdict_their_names_say() {
    use wsp_server::transport::websocket::Verdict;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/ws_upgrade");
    let mut seeds = 0;
    for entry in std::fs::read_dir(&dir).expect("the corpus") {
        let path = entry.expect("an entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let Some(expected) = name.strip_prefix("seed-") else {
            continue;
        };
        let verdict = ws_upgrade_checks::verdict(&std::fs::read(&path).expect("a seed"));
        let accepted = matches!(verdict, Some(Verdict::Accept { .. }));
        assert_eq!(
            accepted,
            expected.starts_with("accept-"),
            "{name}: {verdict:?}"
        );
        assert!(verdict.is_some(), "{name} is not parsed as a request");
        seeds += 1;
    }
    assert!(seeds >= 10, "only {seeds} seeds");
}
