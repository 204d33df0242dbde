//! Run options against real processes: stdin, timeouts, output limits, streaming and
//! resource limits.

use std::time::{Duration, Instant};

use crate::execute_support::{
    alive, contained, containing_modes, python3, wait_gone, Env, PidPipe, BOUND,
};
use tokio::sync::mpsc;
use wsp_exec::{
    process_limit, ContainmentMode, OutputChunk, ProcessLimit, RunOptions, TIMED_OUT_EXIT_CODE,
};
use wsp_protocol::params::ExecuteLimits;
use wsp_protocol::results::OutputStream;
use wsp_testing::FORK_60;

fn with_stdin(stdin: &str) -> RunOptions {
    RunOptions {
        stdin: Some(stdin.to_owned().into()),
        ..RunOptions::default()
    }
}

fn with_limits(limits: ExecuteLimits) -> RunOptions {
    RunOptions {
        limits,
        ..RunOptions::default()
    }
}

#[tokio::test]
async fn a_timeout_kills_everything_and_still_answers_with_the_output_so_far() {
    let mut modes = containing_modes();
    modes.push(ContainmentMode::ProcessGroup);
    for mode in modes {
        let env = Env::new();
        let mut pipe = PidPipe::new(env.root(), "pids");
        // Like `sh -c 'sleep 30 & sleep 30'`, after some output.
        let script = format!(
            "echo before; echo err >&2; record-and-sleep {0} & record-and-sleep {0}",
            pipe.arg()
        );
        let options = RunOptions {
            timeout: Some(Duration::from_millis(500)),
            ..contained(mode)
        };
        let start = Instant::now();
        let result = env.sh(&script, options).await;
        let elapsed = start.elapsed();
        assert!(result.timed_out, "{mode:?}: {result:?}");
        assert_eq!(result.exit_code, TIMED_OUT_EXIT_CODE);
        assert_eq!(
            (result.stdout.as_str(), result.stderr.as_str()),
            ("before\n", "err\n")
        );
        assert!(
            elapsed < Duration::from_millis(1500),
            "{mode:?}: {elapsed:?}"
        );
        assert!(result.duration_ms >= 500, "{}", result.duration_ms);
        for pid in pipe.pids(2).await {
            assert!(
                wait_gone(pid, BOUND),
                "{mode:?}: {pid} outlived the timeout"
            );
            if mode == ContainmentMode::Cgroup {
                assert!(!alive(pid), "gone before the answer");
            }
        }
    }
}

#[tokio::test]
async fn a_command_that_ends_in_time_is_not_timed_out() {
    let env = Env::new();
    let options = RunOptions {
        timeout: Some(Duration::from_secs(60)),
        ..RunOptions::default()
    };
    let result = env.sh("exit 4", options).await;
    assert_eq!((result.exit_code, result.timed_out), (4, false));
    let plain = env.sh("true", RunOptions::default()).await;
    assert!(!plain.timed_out && !plain.stdout_truncated && !plain.stderr_truncated);
}

#[tokio::test]
async fn stdin_is_written_then_closed() {
    let env = Env::new();
    let result = env.run(&["cat"], with_stdin("hello\nworld")).await.unwrap();
    assert_eq!(result.stdout, "hello\nworld");
    let empty = env.run(&["cat"], with_stdin("")).await.unwrap();
    assert_eq!((empty.exit_code, empty.stdout.as_str()), (0, ""));
    // A command that never reads its stdin still ends.
    let big = "x".repeat(1 << 20);
    let unread = env.run(&["true"], with_stdin(&big)).await.unwrap();
    assert_eq!(unread.exit_code, 0);
}

#[tokio::test]
async fn large_stdin_while_the_child_writes_a_lot_does_not_deadlock() {
    let env = Env::new();
    // 1 MiB in, far more than a pipe holds, distinct enough to check.
    let input: String = (0..(1 << 20) / 8)
        .map(|i| format!("{:07}\n", i % 10_000_000))
        .collect();
    assert_eq!(input.len(), 1 << 20);
    // The child first writes 3 MB to stderr without reading, then echoes stdin.
    let script = "head -c 3000000 /dev/zero | tr '\\0' e >&2; cat";
    let result = env.sh(script, with_stdin(&input)).await;
    assert_eq!(result.stderr.len(), 3_000_000);
    assert!(result.stdout == input, "stdout differs from stdin");
    // And echoing both ways at once.
    let echoed = env.run(&["cat"], with_stdin(&input)).await.unwrap();
    assert!(echoed.stdout == input);
}

#[tokio::test]
async fn output_past_the_limit_is_discarded_and_flagged_per_stream() {
    let env = Env::new();
    let options = RunOptions {
        max_output_bytes: Some(10),
        ..RunOptions::default()
    };
    let result = env
        .sh("printf 0123456789abc; printf short >&2", options.clone())
        .await;
    assert_eq!(result.stdout, "0123456789");
    assert_eq!(result.stderr, "short");
    assert!(result.stdout_truncated && !result.stderr_truncated);
    // Exactly at the limit is not truncated.
    let exact = env.sh("printf 0123456789", options.clone()).await;
    assert!(!exact.stdout_truncated);
    // A character the limit cuts is dropped whole, not turned into U+FFFD.
    let cut = env.sh("printf 'aaaaaaaaa\\342\\202\\254'", options).await;
    assert_eq!(cut.stdout, "aaaaaaaaa");
    assert!(cut.stdout_truncated);
}

#[tokio::test]
async fn memory_bytes_makes_a_large_allocation_fail() {
    let env = Env::new();
    let python = python3();
    let python = python.to_str().unwrap();
    let allocate = "b = bytearray(512 * 1024 * 1024); print('allocated')";
    let free = env
        .run(&[python, "-c", allocate], RunOptions::default())
        .await
        .unwrap();
    assert_eq!(free.stdout, "allocated\n", "{}", free.stderr);
    let limits = ExecuteLimits {
        memory_bytes: Some(256 * 1024 * 1024),
        ..ExecuteLimits::default()
    };
    let limited = env
        .run(&[python, "-c", allocate], with_limits(limits))
        .await
        .unwrap();
    assert_ne!(limited.exit_code, 0);
    assert!(limited.stderr.contains("MemoryError"), "{}", limited.stderr);
}

#[tokio::test]
async fn every_limit_but_processes_becomes_an_rlimit_of_the_child() {
    let env = Env::new();
    let limits = ExecuteLimits {
        memory_bytes: Some(1 << 30),
        cpu_seconds: Some(7),
        processes: (process_limit() == ProcessLimit::Rlimit).then_some(321),
        open_files: Some(40),
    };
    let result = env
        .run(&["cat", "/proc/self/limits"], with_limits(limits))
        .await
        .unwrap();
    let row = |name: &str| {
        let line = result
            .stdout
            .lines()
            .find(|line| line.starts_with(name))
            .unwrap();
        line[name.len()..]
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(row("Max address space"), "1073741824 1073741824");
    assert_eq!(row("Max cpu time"), "7 7");
    if process_limit() == ProcessLimit::Rlimit {
        assert_eq!(row("Max processes"), "321 321");
    }
    assert_eq!(row("Max open files"), "40 40");

    let few_files = ExecuteLimits {
        open_files: Some(16),
        ..ExecuteLimits::default()
    };
    let python = python3();
    let open_many = "import os; [os.open('/dev/null', os.O_RDONLY) for _ in range(100)]";
    let argv = [python.to_str().unwrap(), "-c", open_many];
    let opened = env.run(&argv, with_limits(few_files)).await.unwrap();
    assert_ne!(opened.exit_code, 0, "{opened:?}");
    assert!(
        opened.stderr.contains("Too many open files"),
        "{}",
        opened.stderr
    );
    let unlimited = env.run(&argv, RunOptions::default()).await.unwrap();
    assert_eq!(unlimited.exit_code, 0, "{unlimited:?}");

    let one_second = ExecuteLimits {
        cpu_seconds: Some(1),
        ..ExecuteLimits::default()
    };
    let spin = env.sh("while :; do :; done", with_limits(one_second)).await;
    assert!([-24, -9].contains(&spin.exit_code), "{spin:?}");
}

#[tokio::test]
async fn the_process_limit_binds_in_every_mode_or_is_refused() {
    let env = Env::new();
    let python = python3();
    let argv = [python.to_str().unwrap(), "-c", FORK_60];
    let mut modes = containing_modes();
    modes.push(ContainmentMode::ProcessGroup);
    for mode in modes {
        let options = RunOptions {
            limits: ExecuteLimits {
                processes: Some(10),
                ..ExecuteLimits::default()
            },
            ..contained(mode)
        };
        match (process_limit(), env.run(&argv, options).await) {
            // Ten tasks: Python and nine children; RLIMIT_NPROC counts the user's others too.
            (ProcessLimit::Cgroup, Ok(result)) => assert_eq!(result.stdout, "9\n", "{mode:?}"),
            (ProcessLimit::Rlimit, Ok(result)) => {
                let forked: u32 = result.stdout.trim().parse().unwrap();
                assert!(forked <= 9, "{mode:?}: {result:?}");
            }
            (ProcessLimit::Unavailable, Err(wsp_backend::BackendError::Failed { reason, .. })) => {
                assert_eq!(reason, "limit-unavailable", "{mode:?}");
            }
            (how, other) => panic!("{mode:?}: {how:?}: {other:?}"),
        }
        if rustix::process::geteuid().is_root() {
            assert_ne!(
                process_limit(),
                ProcessLimit::Rlimit,
                "root is not bound by it"
            );
        }
    }
}

#[tokio::test]
async fn a_limit_looser_than_this_process_has_is_capped_not_refused() {
    let env = Env::new();
    let hard = rustix::process::getrlimit(rustix::process::Resource::Nofile).maximum;
    let limits = ExecuteLimits {
        open_files: Some(u64::MAX - 1),
        ..ExecuteLimits::default()
    };
    let result = env.sh("ulimit -Hn", with_limits(limits)).await;
    assert_eq!(result.exit_code, 0, "{result:?}");
    let expected = hard.map_or("unlimited".to_owned(), |hard| hard.to_string());
    assert_eq!(result.stdout.trim(), expected);
}

/// Runs `script` streaming into a channel of `capacity`; returns the result and the chunks.
async fn stream(
    env: &Env,
    script: &str,
    capacity: usize,
    max: Option<u64>,
) -> (wsp_protocol::ExecuteResult, Vec<OutputChunk>) {
    let (sender, mut receiver) = mpsc::channel(capacity);
    let options = RunOptions {
        output: Some(sender),
        max_output_bytes: max,
        ..RunOptions::default()
    };
    let collect = async {
        let mut chunks = Vec::new();
        while let Some(chunk) = receiver.recv().await {
            chunks.push(chunk);
        }
        chunks
    };
    tokio::join!(env.sh(script, options), collect)
}

fn joined(chunks: &[OutputChunk], stream: OutputStream) -> String {
    chunks
        .iter()
        .filter(|chunk| chunk.stream == stream)
        .map(|chunk| chunk.data.as_str())
        .collect()
}

#[tokio::test]
async fn streamed_chunks_come_in_order_and_match_the_result() {
    let env = Env::new();
    let script = "i=0; while [ $i -lt 2000 ]; do echo out $i; echo err $i >&2; i=$((i+1)); done";
    let (result, chunks) = stream(&env, script, 1, None).await;
    let expected = |prefix: &str| {
        (0..2000)
            .map(|i| format!("{prefix} {i}\n"))
            .collect::<String>()
    };
    assert_eq!(joined(&chunks, OutputStream::Stdout), expected("out"));
    assert_eq!(joined(&chunks, OutputStream::Stderr), expected("err"));
    assert_eq!(result.stdout, expected("out"));
    assert_eq!(result.stderr, expected("err"));
    assert!(chunks.iter().all(|chunk| !chunk.data.is_empty()));
}

#[tokio::test]
async fn a_character_written_a_byte_at_a_time_is_streamed_whole() {
    let env = Env::new();
    // Each byte of `€` and of `😀` in its own write, apart in time, so they arrive in
    // separate reads; then an invalid byte and a cut-off character at the end.
    let script = "for b in '\\342' '\\202' '\\254' '\\360' '\\237' '\\230' '\\200'; do \
        printf \"$b\"; sleep 0.05; done; printf ' \\377 \\342\\202'";
    let (result, chunks) = stream(&env, script, 4, None).await;
    let text = "€😀 \u{FFFD} \u{FFFD}";
    assert_eq!(joined(&chunks, OutputStream::Stdout), text);
    assert_eq!(result.stdout, text);
    // Had a chunk ended inside `€` or `😀`, the pieces would have decoded to U+FFFD.
    assert!(chunks.iter().all(|chunk| !chunk.data.is_empty()));
    assert!(chunks.len() >= 2, "the output came in one read: {chunks:?}");
}

#[tokio::test]
async fn streaming_stops_at_the_limit_like_the_result() {
    let env = Env::new();
    let (result, chunks) = stream(
        &env,
        "head -c 5000000 /dev/zero | tr '\\0' s",
        2,
        Some(100_000),
    )
    .await;
    assert!(result.stdout_truncated);
    assert_eq!(result.stdout.len(), 100_000);
    assert_eq!(joined(&chunks, OutputStream::Stdout), result.stdout);
}

#[tokio::test]
async fn a_dropped_receiver_stops_the_streaming_not_the_run() {
    let env = Env::new();
    let (sender, receiver) = mpsc::channel(1);
    drop(receiver);
    let options = RunOptions {
        output: Some(sender),
        ..RunOptions::default()
    };
    let result = env.sh("head -c 1000000 /dev/zero", options).await;
    assert_eq!(result.stdout.len(), 1_000_000);
}
