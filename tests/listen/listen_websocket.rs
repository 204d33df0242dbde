//! `wsp serve --listen ws://127.0.0.1:0` over the real binary: the token it makes (0600, never
//! printed), a client with it gets a session with `environment/changed`, one without gets 401,
//! and a token file others may read is refused. The CLI's `--connect ws://` and `wss://`:
//! create, list and exec with the token, and clear failures without it.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::{Arc, Mutex};

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio::process::Child;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::WebSocketStream;

use crate::serve_listening::serve_listening;
use crate::unix_peer::cli;

const PATIENCE: std::time::Duration = std::time::Duration::from_secs(60);

/// Starts `wsp serve --listen ws://127.0.0.1:0 ARGS`; its port once it listens, or its log.
pub(crate) async fn start(
    state_dir: &Path,
    extra: &[&str],
) -> Result<(Child, u16, String), String> {
    start_on("ws", state_dir, extra).await
}

/// Starts `wsp serve --listen SCHEME://127.0.0.1:0 ARGS`.
async fn start_on(
    scheme: &str,
    state_dir: &Path,
    extra: &[&str],
) -> Result<(Child, u16, String), String> {
    start_logging(scheme, state_dir, extra, Arc::default()).await
}

/// [`start_on`], appending what the server logs once it listens to `later`.
pub(crate) async fn start_logging(
    scheme: &str,
    state_dir: &Path,
    extra: &[&str],
    later: Arc<Mutex<String>>,
) -> Result<(Child, u16, String), String> {
    start_at(
        &format!("{scheme}://127.0.0.1:0"),
        state_dir,
        extra,
        &[],
        later,
    )
    .await
}

/// Starts `wsp serve --listen ADDRESS ARGS` (ADDRESS ending in port 0).
pub(crate) async fn start_on_address(
    address: &str,
    state_dir: &Path,
    extra: &[&str],
) -> Result<(Child, u16, String), String> {
    start_at(address, state_dir, extra, &[], Arc::default()).await
}

/// Starts `wsp serve --listen ADDRESS ARGS` with `env` (and no other `WSP_TOKEN`), appending
/// what it logs once it listens to `later`.
pub(crate) async fn start_at(
    address: &str,
    state_dir: &Path,
    extra: &[&str],
    env: &[(&str, &str)],
    later: Arc<Mutex<String>>,
) -> Result<(Child, u16, String), String> {
    let prefix = address.strip_suffix('0').unwrap_or(address);
    let listening = serve_listening(
        state_dir,
        address,
        prefix,
        extra,
        env,
        Some(later),
        PATIENCE,
    )
    .await?;
    let port = listening.rest.parse().expect("a port");
    Ok((listening.child, port, listening.log))
}

pub(crate) async fn connect(
    port: u16,
    token: Option<&str>,
) -> Result<WebSocketStream<TcpStream>, WsError> {
    let mut request = format!("ws://127.0.0.1:{port}/")
        .into_client_request()
        .expect("request");
    if let Some(token) = token {
        let value = format!("Bearer {token}").parse().expect("header");
        request.headers_mut().insert("authorization", value);
    }
    let stream = TcpStream::connect(("127.0.0.1", port)).await.expect("tcp");
    tokio_tungstenite::client_async(request, stream)
        .await
        .map(|(socket, _)| socket)
}

pub(crate) async fn next(socket: &mut WebSocketStream<TcpStream>) -> Value {
    loop {
        let message = tokio::time::timeout(PATIENCE, socket.next())
            .await
            .expect("a message in time")
            .expect("open")
            .expect("readable");
        if let Message::Text(text) = message {
            return serde_json::from_str(&text).expect("JSON");
        }
    }
}

pub(crate) async fn send(socket: &mut WebSocketStream<TcpStream>, message: Value) {
    socket
        .send(Message::text(message.to_string()))
        .await
        .expect("send");
}

#[tokio::test]
async fn a_websocket_client_with_the_made_token_gets_a_session_and_changes() {
    let dir = tempfile::tempdir().expect("dir");
    let state = dir.path().join("state");
    let (mut child, port, log) = start(&state, &[]).await.expect("listens");
    let token_file = state.join("server.token");
    let token = std::fs::read_to_string(&token_file).expect("the token file");
    let token = token.trim();
    assert_eq!(token.len(), 64, "32 bytes, hex");
    assert!(!log.contains(token), "the token is never logged: {log}");
    let mode = std::fs::metadata(&token_file).expect("metadata").mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");

    match connect(port, None).await {
        Err(WsError::Http(response)) => assert_eq!(response.status().as_u16(), 401),
        other => panic!("expected 401, got {:?}", other.map(|_| ())),
    }

    let mut socket = connect(port, Some(token)).await.expect("connects");
    let params = json!({"client_name": "ws", "client_protocol_version": "0.1.0"});
    send(
        &mut socket,
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}),
    )
    .await;
    let answer = next(&mut socket).await;
    assert_eq!(
        answer["result"]["transport"],
        json!("websocket"),
        "{answer}"
    );
    let create = json!({"name": "over-ws", "python_version": "3.12"});
    send(
        &mut socket,
        json!({"jsonrpc": "2.0", "id": 1, "method": "environment/create", "params": create}),
    )
    .await;
    let mut created = None;
    let mut changed = None;
    while created.is_none() || changed.is_none() {
        let message = next(&mut socket).await;
        if message["id"] == json!(1) {
            created = Some(message);
        } else if message["method"] == json!("environment/changed") {
            changed = Some(message);
        }
    }
    let (created, changed) = (created.unwrap_or_default(), changed.unwrap_or_default());
    assert_eq!(
        changed["params"]["id"], created["result"]["id"],
        "{changed}"
    );
    let pid = child.id().expect("runs") as i32;
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid).expect("pid"),
        rustix::process::Signal::TERM,
    )
    .expect("SIGTERM");
    let status = tokio::time::timeout(PATIENCE, child.wait())
        .await
        .expect("exits")
        .expect("wait");
    assert_eq!(status.code(), Some(0));
}

#[tokio::test]
async fn a_token_file_others_may_read_is_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "s3cret-s3cret\n").expect("write");
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let token_file = token_file.display().to_string();
    let started = start(&dir.path().join("state"), &["--token-file", &token_file]).await;
    let log = started.map(|_| ()).expect_err("refused");
    assert!(log.contains("group or others"), "{log}");
}

/// A file holding `token`, readable by its owner only.
pub(crate) fn token_file(dir: &Path, name: &str, token: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("{token}\n")).expect("write");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    path.display().to_string()
}

pub(crate) async fn terminate(mut child: Child) {
    let pid = rustix::process::Pid::from_raw(child.id().expect("runs") as i32).expect("pid");
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).expect("SIGTERM");
    let status = tokio::time::timeout(PATIENCE, child.wait()).await;
    assert_eq!(status.expect("exits").expect("wait").code(), Some(0));
}

#[tokio::test]
async fn the_cli_creates_lists_and_runs_over_ws_with_the_token() {
    let dir = tempfile::tempdir().expect("dir");
    let right = token_file(dir.path(), "token", "cli-token-0123456789");
    let wrong = token_file(dir.path(), "wrong", "not-the-token");
    let state = dir.path().join("state");
    let (child, port, _) = start(&state, &["--token-file", &right])
        .await
        .expect("listens");
    let address = format!("ws://127.0.0.1:{port}");

    let with_file = ["--connect", &address, "--token-file", &right];
    let create = [&with_file[..], &["create", "over-cli", "--python", "3.12"]].concat();
    let (status, out, err) = cli(&create, &[]).await;
    assert_eq!(status, 0, "{out}{err}");
    assert!(out.contains("over-cli"), "{out}");

    let env = [
        ("WSP_CONNECT", &address[..]),
        ("WSP_TOKEN", "cli-token-0123456789"),
    ];
    let (status, out, err) = cli(&["--json", "list"], &env).await;
    assert_eq!(status, 0, "{err}");
    let listed: Value = serde_json::from_str(out.trim()).expect("JSON");
    assert_eq!(listed[0]["name"], json!("over-cli"), "{listed}");

    let exec = [
        &with_file[..],
        &["exec", "over-cli", "--", "python", "-c", "print(6*7)"],
    ];
    let (status, out, err) = cli(&exec.concat(), &[]).await;
    assert_eq!((status, out.as_str()), (0, "42\n"), "{err}");

    let (status, out, err) = cli(
        &["--connect", &address, "--token-file", &wrong, "list"],
        &[],
    )
    .await;
    assert_eq!(status, 2, "{out}");
    assert!(err.contains("the server refused the token"), "{err}");
    let (status, _, err) = cli(&["--connect", &address, "list"], &[]).await;
    assert_eq!(status, 2);
    assert!(err.contains("needs a token"), "{err}");

    terminate(child).await;
    let (status, _, err) = cli(&[&with_file[..], &["list"]].concat(), &[]).await;
    assert_eq!(status, 2);
    assert!(
        err.contains(&format!("cannot connect to {address}")),
        "{err}"
    );
}

#[tokio::test]
async fn the_cli_connects_over_wss_trusting_the_given_certificate_only() {
    let dir = tempfile::tempdir().expect("dir");
    let made = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).expect("cert");
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert, made.cert.pem()).expect("cert.pem");
    std::fs::write(&key, made.signing_key.serialize_pem()).expect("key.pem");
    let (cert, key) = (cert.display().to_string(), key.display().to_string());
    let token = token_file(dir.path(), "token", "tls-token-0123456789");
    let serve = [
        "--token-file",
        &token,
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
    ];
    let state = dir.path().join("state");
    let (child, port, _) = start_on("wss", &state, &serve).await.expect("listens");
    let address = format!("wss://127.0.0.1:{port}");

    let trusting = [
        "--connect",
        &address,
        "--token-file",
        &token,
        "--ca-cert",
        &cert,
    ];
    let (status, out, err) = cli(&[&trusting[..], &["--json", "list"]].concat(), &[]).await;
    assert_eq!((status, out.trim()), (0, "[]"), "{err}");

    // The system's roots don't hold this certificate.
    let untrusting = ["--connect", &address, "--token-file", &token, "list"];
    let (status, _, err) = cli(&untrusting, &[]).await;
    assert_eq!(status, 2, "{err}");
    assert!(
        err.contains("TLS handshake") || err.contains("no system root certificates"),
        "{err}"
    );
    terminate(child).await;
}
