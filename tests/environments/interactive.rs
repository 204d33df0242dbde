//! Interactive `environment/execute` over the real binary: `stdin_stream: true` fed by
//! `environment/input`, a `pty` resized by `environment/resize`, bad or stray input logged
//! while the session goes on, a command that doesn't read holding the input back, and a
//! closed session killing a command that waits for input.

use crate::support::{assert_gone, error_code, request, Server};
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

/// A server with the environment `j1`; its id.
async fn server_with_environment() -> (Server, Value) {
    let mut server = Server::start(&[]);
    let init = server.initialize().await;
    let features = &init["result"]["features"];
    for feature in ["execute.stdin_stream", "execute.pty"] {
        assert!(
            features.as_array().unwrap().contains(&json!(feature)),
            "{features}"
        );
    }
    let created = server
        .call(
            1,
            "environment/create",
            json!({"name": "j1", "python_version": "3.12"}),
        )
        .await;
    let env = created["result"]["id"].clone();
    (server, env)
}

fn input(request_id: &str, data: &str, eof: bool) -> Value {
    json!({"jsonrpc": "2.0", "method": "environment/input",
           "params": {"request_id": request_id, "data": data, "eof": eof}})
}

/// Reads messages until stdout's streamed text contains `wanted`; the text so far.
/// Sends request `id`: `code` with its stdin streamed and its output streamed; returns what it
/// printed once that holds `wanted`.
async fn start_streaming(
    server: &mut Server,
    env: &Value,
    id: &str,
    code: &str,
    wanted: &str,
) -> String {
    let params =
        json!({"id": env, "argv": ["python", "-c", code], "stdin_stream": true, "stream": true});
    server
        .send(&request(id, "environment/execute", params))
        .await;
    let mut seen = String::new();
    stdout_until(server, &mut seen, wanted).await;
    seen
}

async fn stdout_until(server: &mut Server, seen: &mut String, wanted: &str) {
    while !seen.contains(wanted) {
        let message = server.recv().await;
        assert_eq!(message["method"], "environment/output", "{message}");
        seen.push_str(message["params"]["data"].as_str().unwrap());
    }
}

/// The answer to `id`, past any notifications.
async fn answer(server: &mut Server, id: &str) -> Value {
    loop {
        let message = server.recv().await;
        if message.get("id").is_some() {
            assert_eq!(message["id"], json!(id), "{message}");
            return message;
        }
    }
}

#[tokio::test]
async fn input_reaches_a_running_command_and_eof_closes_its_stdin() {
    let (mut server, env) = server_with_environment().await;
    let code = "import sys\nprint('up', flush=True)\nprint(repr(sys.stdin.read()))";
    start_streaming(&mut server, &env, "run", code, "up\n").await;
    server.send(&input("run", "ab", false)).await;
    server.send(&input("run", "c☃", true)).await;
    let answer = answer(&mut server, "run").await;
    assert_eq!(answer["result"]["stdout"], "up\n'abc☃'\n", "{answer}");
    assert_eq!(answer["result"]["exit_code"], 0);
    let (status, _) = server.finish().await;
    assert_eq!(status, 0);
}

#[tokio::test]
async fn bad_or_stray_input_is_logged_and_the_session_goes_on() {
    let (mut server, env) = server_with_environment().await;
    let code = "import sys\nprint('up', flush=True)\nprint(repr(sys.stdin.read()))";
    start_streaming(&mut server, &env, "run", code, "up\n").await;
    let too_big = "x".repeat(wsp_protocol::interactive::MAX_INPUT_DATA_BYTES + 1);
    for bad in [
        input("someone-else", "stray", false),
        input("run", &too_big, false),
        json!({"jsonrpc": "2.0", "method": "environment/input", "params": {"request_id": "run", "data": 5}}),
        json!({"jsonrpc": "2.0", "method": "environment/input", "params": {"data": "no id"}}),
        json!({"jsonrpc": "2.0", "method": "environment/input"}),
        json!({"jsonrpc": "2.0", "method": "environment/resize", "params": {"request_id": "run", "rows": 0, "cols": 5}}),
    ] {
        server.send(&bad).await;
    }
    server.send(&input("run", "kept", true)).await;
    let answer = answer(&mut server, "run").await;
    assert_eq!(answer["result"]["stdout"], "up\n'kept'\n", "{answer}");
    // Input for a finished request, then a request: still served.
    server.send(&input("run", "late", true)).await;
    let listed = server.call(2, "environment/list", json!({})).await;
    assert_eq!(
        listed["result"].as_array().map(Vec::len),
        Some(1),
        "{listed}"
    );
    let (status, log) = server.finish().await;
    assert_eq!(status, 0);
    assert!(
        log.contains("more than the 1048576 one input may carry"),
        "{log}"
    );
    assert!(log.contains("`data` must be a string, got"), "{log}");
    assert!(log.contains("`request_id` is required"), "{log}");
    assert!(
        log.contains("environment/input for no running execute"),
        "{log}"
    );
    assert!(log.contains("`rows` must be an integer"), "{log}");
}

#[tokio::test]
async fn stdin_with_a_streamed_stdin_and_a_bad_pty_are_invalid_params() {
    let (mut server, env) = server_with_environment().await;
    let argv = json!(["python", "-c", "pass"]);
    for (n, params) in [
        json!({"id": env, "argv": argv, "stdin": "x", "stdin_stream": true}),
        json!({"id": env, "argv": argv, "stdin": "x", "pty": {"rows": 2, "cols": 2}}),
        json!({"id": env, "argv": argv, "pty": {"rows": 0, "cols": 80}}),
        json!({"id": env, "argv": argv, "pty": {"rows": 24}}),
        json!({"id": env, "argv": argv, "pty": {"rows": 24, "cols": 80, "x": 1}}),
    ]
    .into_iter()
    .enumerate()
    {
        let id = i64::try_from(n).unwrap() + 10;
        let answer = server.call(id, "environment/execute", params).await;
        assert_eq!(error_code(&answer), -32602, "{answer}");
    }
}

#[tokio::test]
async fn a_pty_is_the_commands_terminal_and_follows_resizes() {
    let (mut server, env) = server_with_environment().await;
    let code =
        "import os, sys\nprint(os.isatty(0), os.isatty(1), os.isatty(2), os.get_terminal_size())\n\
                line = input('ready> ')\nprint(line.upper(), os.get_terminal_size())";
    let params =
        json!({"id": env, "argv": ["python", "-c", code], "pty": {"rows": 30, "cols": 100}});
    server
        .send(&request("tty", "environment/execute", params))
        .await;
    let mut seen = String::new();
    stdout_until(&mut server, &mut seen, "ready> ").await;
    assert!(
        seen.starts_with("True True True os.terminal_size(columns=100, lines=30)\r\n"),
        "{seen:?}"
    );
    let resize = json!({"jsonrpc": "2.0", "method": "environment/resize",
                        "params": {"request_id": "tty", "rows": 40, "cols": 120}});
    server.send(&resize).await;
    server.send(&input("tty", "go\r", false)).await;
    let answer = answer(&mut server, "tty").await;
    let stdout = answer["result"]["stdout"].as_str().unwrap();
    assert!(
        stdout.ends_with("ready> go\r\nGO os.terminal_size(columns=120, lines=40)\r\n"),
        "{stdout:?}"
    );
    assert_eq!(answer["result"]["stderr"], "");
}

#[tokio::test]
async fn a_sandboxed_command_on_a_pty_is_still_confined() {
    let (mut server, env) = server_with_environment().await;
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escaped");
    let code = format!(
        "import os\nprint(os.isatty(0))\ntry:\n    open({:?}, 'w')\n    print('wrote')\nexcept OSError as e:\n    print('refused', e.errno)",
        target.display().to_string()
    );
    let params = json!({"id": env, "argv": ["python", "-c", code], "pty": {"rows": 24, "cols": 80}, "sandbox": true});
    server
        .send(&request("boxed", "environment/execute", params))
        .await;
    let answer = answer(&mut server, "boxed").await;
    if answer["error"]["data"]["reason"] == "sandbox-unavailable" {
        return;
    }
    let stdout = answer["result"]["stdout"].as_str().unwrap_or_default();
    assert!(stdout.starts_with("True\r\nrefused "), "{answer}");
    assert!(!target.exists());
}

#[tokio::test]
async fn input_waits_while_the_command_does_not_read() {
    let (mut server, env) = server_with_environment().await;
    let scratch = tempfile::tempdir().unwrap();
    let gates = ["first", "second"].map(|name| scratch.path().join(name));
    for gate in &gates {
        assert!(std::process::Command::new("mkfifo")
            .arg(gate)
            .status()
            .unwrap()
            .success());
    }
    let code = format!(
        "import sys\nprint('up', flush=True)\nopen({:?}).read()\nprint('released', flush=True)\n\
         open({:?}).read()\nprint(len(sys.stdin.read()))",
        gates[0].display().to_string(),
        gates[1].display().to_string()
    );
    let mut seen = start_streaming(&mut server, &env, "slow", &code, "up\n").await;
    // Eight inputs of a million bytes, then a request, written by a task of their own: the
    // server takes them only as fast as the command reads.
    const CHUNKS: usize = 8;
    const CHUNK: usize = 1_000_000;
    let mut stdin = server.stdin.take().unwrap();
    let (wrote_some, written) = tokio::sync::oneshot::channel();
    let writer = tokio::spawn(async move {
        let chunk = "x".repeat(CHUNK);
        let mut wrote_some = Some(wrote_some);
        for n in 0..CHUNKS {
            let message = input("slow", &chunk, n + 1 == CHUNKS);
            let frame = crate::support::frame(&message.to_string());
            stdin.write_all(&frame).await.unwrap();
            if n == 2 {
                let _ = wrote_some.take().map(|sender| sender.send(()));
            }
        }
        let list = request("after", "environment/list", json!({}));
        stdin
            .write_all(&crate::support::frame(&list.to_string()))
            .await
            .unwrap();
        stdin
    });
    written.await.unwrap();
    let release =
        |gate: std::path::PathBuf| tokio::task::spawn_blocking(move || std::fs::write(gate, b""));
    release(gates[0].clone()).await.unwrap().unwrap();
    let mut listed = false;
    let mut result = None;
    while !listed || result.is_none() {
        let message = server.recv().await;
        match message["id"].as_str() {
            Some("after") => listed = true,
            Some("slow") => result = Some(message),
            _ => {
                seen.push_str(message["params"]["data"].as_str().unwrap());
                if seen.ends_with("released\n") {
                    assert!(
                        !listed,
                        "the request after the input was read before the command read it"
                    );
                    release(gates[1].clone()).await.unwrap().unwrap();
                }
            }
        }
    }
    let result = result.unwrap();
    assert_eq!(
        result["result"]["stdout"],
        format!("up\nreleased\n{}\n", CHUNKS * CHUNK),
        "{result}"
    );
    server.stdin = Some(writer.await.unwrap());
    let (status, _) = server.finish().await;
    assert_eq!(status, 0);
}

#[tokio::test]
async fn a_closed_session_kills_a_command_waiting_for_input() {
    let (mut server, env) = server_with_environment().await;
    let code = "import os, sys\nprint(os.getpid(), flush=True)\nsys.stdin.read()";
    let seen = start_streaming(&mut server, &env, "waits", code, "\n").await;
    let pid: i32 = seen.trim().parse().unwrap();
    // Closing the session drains it: the command, which never gets its input's end, is
    // cancelled at the drain deadline, and killed.
    server.close();
    let cancelled = answer(&mut server, "waits").await;
    assert_eq!(error_code(&cancelled), -32603, "{cancelled}");
    let (status, _) = server.finish().await;
    assert_eq!(status, 0);
    assert_gone(pid, "the command waiting for input").await;
}

/// Starts request `id`: a command that prints its pid and never reads its streamed stdin;
/// returns the pid.
async fn start_non_reader(server: &mut Server, env: &Value, id: &str) -> i32 {
    let code = "import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(300)";
    let seen = start_streaming(server, env, id, code, "\n").await;
    seen.trim().parse().unwrap()
}

/// Writes `chunks` inputs of a million bytes for `id` on a task of its own (it may wait for
/// the server as long as it likes), then `after`.
fn flood(
    server: &mut Server,
    id: &'static str,
    chunks: usize,
    after: Option<Value>,
) -> tokio::task::JoinHandle<()> {
    let mut stdin = server.stdin.take().unwrap();
    tokio::spawn(async move {
        let chunk = "x".repeat(1_000_000);
        for _ in 0..chunks {
            let frame = crate::support::frame(&input(id, &chunk, false).to_string());
            if stdin.write_all(&frame).await.is_err() {
                return;
            }
        }
        if let Some(after) = after {
            let _ = stdin
                .write_all(&crate::support::frame(&after.to_string()))
                .await;
        }
        // Held open: the server's input doesn't end here.
        std::future::pending::<()>().await;
    })
}

#[tokio::test]
async fn a_cancel_behind_held_back_input_still_cancels() {
    let (mut server, env) = server_with_environment().await;
    let pid = start_non_reader(&mut server, &env, "deaf").await;
    let cancel = json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "deaf"}});
    let writer = flood(&mut server, "deaf", 3, Some(cancel));
    let cancelled = answer(&mut server, "deaf").await;
    assert_eq!(error_code(&cancelled), -32800, "{cancelled}");
    assert_gone(pid, "the cancelled command").await;
    writer.abort();
}

#[tokio::test]
async fn sigterm_ends_a_session_held_back_by_input() {
    let (mut server, env) = server_with_environment().await;
    let pid = start_non_reader(&mut server, &env, "deaf").await;
    // Far more than the server reads ahead: its reading is held back for good.
    let writer = flood(&mut server, "deaf", 12, None);
    let server_pid = server.child.id().unwrap();
    // The server has read what it can once the writer can't write more; the signal comes
    // whenever: the drain ends the command within its deadline either way.
    let signalled = std::process::Command::new("kill")
        .args(["-TERM", &server_pid.to_string()])
        .status()
        .unwrap();
    assert!(signalled.success());
    let cancelled = answer(&mut server, "deaf").await;
    assert_eq!(error_code(&cancelled), -32603, "{cancelled}");
    writer.abort();
    let (status, _) = server.finish().await;
    assert_eq!(status, 0);
    assert_gone(pid, "the command of the held-back session").await;
}
