//! Memory stays bounded however much a command writes: a 200 MB stream of NULs under a 1 MiB
//! limit, captured and streamed, raises this process's peak RSS by a few MiB only. The limit
//! bounds the output's JSON encoding, six bytes (`\u0000`) for each NUL.
//!
//! Alone in its test binary, so that the peak is this test's own.

use crate::execute_support::Env;
use tokio::sync::mpsc;
use wsp_exec::RunOptions;

const STREAM: &str = "head -c 200000000 /dev/zero";
const LIMIT: u64 = 1 << 20;
/// The NULs whose encoding fits in the limit.
const KEPT: usize = (LIMIT / 6) as usize;

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|line| line.starts_with(field)).unwrap();
    line[field.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .unwrap()
}

/// Resets the peak RSS to the current RSS; returns the current RSS in KiB.
fn reset_peak() -> u64 {
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    status_kib("VmRSS:")
}

#[tokio::test]
async fn a_200_mb_stream_under_a_1_mib_limit_keeps_memory_low() {
    let env = Env::new();
    let capped = || RunOptions {
        max_output_bytes: Some(LIMIT),
        ..RunOptions::default()
    };
    // One-time allocations (containment detection, the runtime's buffers) happen here.
    env.sh("true", capped()).await;

    let before = reset_peak();
    let result = env.sh(STREAM, capped()).await;
    let captured_growth = status_kib("VmHWM:").saturating_sub(before);
    assert_eq!(result.stdout.len(), KEPT);
    assert_eq!(
        serde_json::to_string(&result.stdout).unwrap().len(),
        KEPT * 6 + 2
    );
    assert!(result.stdout_truncated);

    let before = reset_peak();
    let (sender, mut receiver) = mpsc::channel(8);
    let options = RunOptions {
        output: Some(sender),
        ..capped()
    };
    let count = async {
        let mut bytes = 0;
        while let Some(chunk) = receiver.recv().await {
            bytes += chunk.data.len();
        }
        bytes
    };
    let (streamed_result, streamed) = tokio::join!(env.sh(STREAM, options), count);
    let streamed_growth = status_kib("VmHWM:").saturating_sub(before);
    assert_eq!(streamed, KEPT);
    assert!(streamed_result.stdout_truncated);

    println!("peak RSS growth: captured {captured_growth} KiB, streamed {streamed_growth} KiB");
    for growth in [captured_growth, streamed_growth] {
        assert!(growth < 16 * 1024, "peak RSS grew by {growth} KiB");
    }
}
