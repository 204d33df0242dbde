//! The README's wire transcript, piped into the real `wsp serve`, gives the responses the README
//! shows (as a set: requests run concurrently, so frames may come in another order).

use std::path::{Path, PathBuf};
use std::process::Command;

fn block_after(readme: &str, marker: &str) -> String {
    let start = readme
        .find(marker)
        .unwrap_or_else(|| panic!("README has {marker}"));
    let rest = &readme[start..];
    let open = rest.find("```").expect("a code block after the marker");
    let body_start = rest[open..].find('\n').expect("a fence line") + open + 1;
    let body_end = rest[body_start..].find("```").expect("a closing fence") + body_start;
    rest[body_start..body_end].to_owned()
}

/// The frames of an output as (declared length, payload as JSON; key order is not compared),
/// in a fixed order, and the other lines.
fn frames(output: &str) -> (Vec<(usize, serde_json::Value)>, Vec<String>) {
    let normalized = output.replace("\r\n", "\n");
    let mut frames = Vec::new();
    let mut other = Vec::new();
    for piece in normalized
        .split("Content-Length: ")
        .filter(|p| !p.trim().is_empty())
    {
        let (length, rest) = piece
            .split_once("\n\n")
            .expect("a header, a blank line, a payload");
        let length: usize = length.trim().parse().expect("a decimal length");
        let payload = &rest[..length.min(rest.len())];
        let value: serde_json::Value = serde_json::from_str(payload).expect("a JSON payload");
        frames.push((length, value));
        other.extend(
            rest[payload.len()..]
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned),
        );
    }
    frames.sort_by_key(|(length, value)| (*length, value["id"].to_string()));
    (frames, other)
}

#[test]
fn the_readme_transcript_gives_the_readme_responses() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let command = block_after(&readme, "<!-- transcript:command -->");
    let expected = block_after(&readme, "<!-- transcript:output -->");
    let _ = std::fs::remove_dir_all("/tmp/wsp-readme");
    let bin_dir = PathBuf::from(env!("CARGO_BIN_EXE_wsp"))
        .parent()
        .unwrap()
        .to_owned();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = Command::new("bash")
        .arg("-c")
        .arg(&command)
        .env("PATH", path)
        .output()
        .expect("bash runs");
    let actual = String::from_utf8(output.stdout).expect("UTF-8 output");
    let (actual_frames, actual_rest) = frames(&actual);
    let (expected_frames, expected_rest) = frames(&expected);
    assert_eq!(actual_frames, expected_frames, "\nactual output:\n{actual}");
    assert_eq!(actual_rest, expected_rest);
    assert_eq!(expected_frames.len(), 5);
}
