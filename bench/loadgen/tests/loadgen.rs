//! loadgen against a real server process (tests/fixtures/server.py) over real pipes: a correct
//! run passes, and each kind of misbehaviour makes loadgen fail and say why.

use std::process::Command;

use serde_json::Value;

/// Runs loadgen against the fixture in `mode`; returns its exit code and its JSON line.
fn loadgen(mode: &str, options: &[&str]) -> (i32, Value) {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/server.py");
    let mut command = Command::new(env!("CARGO_BIN_EXE_loadgen"));
    command.args(options);
    if !options.contains(&"--timeout-s") {
        command.args(["--timeout-s", "20"]);
    }
    let output = command
        .args(["--", "python3", fixture, mode])
        .output()
        .expect("loadgen runs");
    let stdout = String::from_utf8(output.stdout).expect("UTF-8 output");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "a human line and a JSON line: {stdout}");
    let figures = serde_json::from_str(lines[1]).expect("the last line is JSON");
    (output.status.code().expect("loadgen exited"), figures)
}

fn failures(figures: &Value) -> String {
    figures["failures"].to_string()
}

const IO_LOOPS: [&str; 2] = ["single", "threads"];

#[test]
fn a_correct_server_passes_every_check() {
    for io in IO_LOOPS {
        a_correct_server_passes_with(io);
    }
}

fn a_correct_server_passes_with(io: &str) {
    let options = [
        "-n",
        "300",
        "-w",
        "8",
        "--expect",
        "error:-32601",
        "--io",
        io,
    ];
    let (code, figures) = loadgen("ok", &options);
    assert_eq!(figures["io"], io);
    assert_eq!(code, 0, "{}", failures(&figures));
    assert_eq!(figures["ok"], true);
    assert_eq!(figures["received"], 300);
    assert_eq!(figures["errors"]["-32601"], 300);
    assert_eq!(figures["exit_code"], 0);
    assert_eq!(figures["shutdown_ok"], true);
    assert!(figures["req_per_s"].as_f64().unwrap() > 0.0);
    assert!(figures["p50_us"].as_f64().unwrap() <= figures["p99_us"].as_f64().unwrap());
    assert!(figures["idle_rss_kib"].as_u64().unwrap() > 0);
}

#[test]
fn duplicate_responses_fail_the_run() {
    for io in IO_LOOPS {
        let (code, figures) = loadgen("duplicate", &["-n", "20", "-w", "4", "--io", io]);
        assert_eq!(code, 1);
        assert_eq!(figures["duplicates"], 1);
        assert!(failures(&figures).contains("duplicate"));
    }
}

#[test]
fn a_missing_response_times_out() {
    for io in IO_LOOPS {
        // Long enough for python3 to start and answer `initialize` on a busy machine.
        let options = ["-n", "20", "-w", "4", "--timeout-s", "5", "--io", io];
        let (code, figures) = loadgen("drop", &options);
        assert_eq!(code, 1);
        assert_eq!(figures["timed_out"], true);
        assert_eq!(figures["all_arrived"], false);
    }
}

#[test]
fn a_server_that_never_answers_initialize_is_killed() {
    let (code, figures) = loadgen("mute", &["-n", "10", "--timeout-s", "1"]);
    assert_eq!(code, 1);
    assert!(
        failures(&figures).contains("handshake"),
        "{}",
        failures(&figures)
    );
}

#[test]
fn responses_other_than_expected_fail_the_run() {
    let (code, figures) = loadgen("wrong-code", &["-n", "10", "--expect", "error:-32601"]);
    assert_eq!(code, 1);
    assert_eq!(figures["unexpected"], 10);
    assert_eq!(figures["errors"]["-32000"], 10);
    let (code, _) = loadgen("wrong-code", &["-n", "10", "--expect", "error"]);
    assert_eq!(code, 0);
}

#[test]
fn a_failing_exit_status_fails_the_run() {
    let (code, figures) = loadgen("exit-3", &["-n", "10"]);
    assert_eq!(code, 1);
    assert_eq!(figures["exit_code"], 3);
}

#[test]
fn server_notifications_are_counted_not_matched() {
    let (code, figures) = loadgen("notify", &["-n", "10", "-w", "2", "--lsp"]);
    assert_eq!(code, 0, "{}", failures(&figures));
    assert_eq!(figures["server_messages"], 10);
}

#[test]
fn a_server_that_stops_reading_blocks_writes_then_answers_everything() {
    // The fixture writes each response before reading on; once its stdout pipe is full it
    // stops reading, so loadgen's writes must block before all 20k requests are written.
    let options = ["--mode", "never-read", "-n", "20000", "--stall-ms", "300"];
    let (code, figures) = loadgen("ok", &[&options[..], &["--hold-ms", "100"]].concat());
    assert_eq!(code, 0, "{}", failures(&figures));
    assert_eq!(figures["writes_blocked"], true);
    assert_eq!(figures["all_arrived"], true);
    let before = figures["bytes_written_before_read"].as_u64().unwrap();
    assert!(
        before > 0 && before < 20_000 * 60,
        "{before} bytes before reading"
    );
    assert!(figures["held_rss_kib"].as_u64().unwrap() > 0);
}

#[test]
fn in_flight_mode_sends_everything_before_reading() {
    let options = ["--mode", "in-flight", "-n", "200", "--hold-ms", "100"];
    let (code, figures) = loadgen("ok", &options);
    assert_eq!(code, 0, "{}", failures(&figures));
    assert_eq!(figures["window"], 200);
    assert_eq!(figures["writes_blocked"], false);
    assert_eq!(figures["received"], 200);
}
