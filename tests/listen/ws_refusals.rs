//! Each refusal of `wsp serve --listen ws://` over the real binary, decided before the upgrade:
//! no token, a wrong token, a token only in the query (401), an `Origin` not allowed (403), a
//! `Host` that is not this server's (403) or none (400), a connection past
//! `--max-connections` (503), and `ws://` off loopback (the server does not start); then the
//! frames that close a connection (binary 1003, not UTF-8 1007, over `--max-frame-bytes` 1009)
//! while the server goes on. The token never appears in the server's log.

use std::path::Path;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::process::Child;

use crate::listen_websocket::{start_at, start_logging, terminate, token_file};

const TOKEN: &str = "refusal-token-5f1c9a";

/// A server with [`TOKEN`], and what it logs once it listens.
struct Guarded {
    child: Child,
    port: u16,
    log: Arc<Mutex<String>>,
    _dir: tempfile::TempDir,
}

impl Guarded {
    async fn start(extra: &[&str]) -> Guarded {
        let dir = tempfile::tempdir().expect("a temp dir");
        let token = token_file(dir.path(), "token", TOKEN);
        let mut args = vec!["--token-file", &token];
        args.extend_from_slice(extra);
        let log = Arc::default();
        let (child, port, _) =
            start_logging("ws", &dir.path().join("state"), &args, Arc::clone(&log))
                .await
                .expect("the server listens");
        Guarded {
            child,
            port,
            log,
            _dir: dir,
        }
    }

    /// The status line's code the server answers `GET TARGET` with `headers` (each `Name:
    /// value`; `{host}` stands for `127.0.0.1:PORT`).
    async fn status(&self, target: &str, headers: &[&str]) -> u16 {
        upgrade_status(self.port, target, headers).await
    }

    /// Stops the server (SIGTERM, exit 0) and checks that its log never held the token.
    async fn finish(self) {
        terminate(self.child).await;
        let log = self.log.lock().expect("the log").clone();
        assert!(!log.contains(TOKEN), "the token is in the log: {log}");
    }
}

async fn upgrade_status(port: u16, target: &str, headers: &[&str]) -> u16 {
    let host = format!("127.0.0.1:{port}");
    let mut request = format!(
        "GET {target} HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
    );
    for header in headers {
        request.push_str(&header.replace("{host}", &host));
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    let mut stream = TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect");
    stream.write_all(request.as_bytes()).await.expect("send");
    let mut answer = Vec::new();
    let mut buffer = [0u8; 1024];
    while !answer.windows(2).any(|w| w == b"\r\n") {
        let read = stream.read(&mut buffer).await.expect("read");
        assert!(read > 0, "closed without a status line: {answer:?}");
        answer.extend_from_slice(&buffer[..read]);
    }
    let line = String::from_utf8_lossy(&answer);
    line.split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("a status line: {line}"))
}

const HOST: &str = "Host: {host}";
const BEARER: &str = "Authorization: Bearer refusal-token-5f1c9a";

#[tokio::test]
async fn the_right_token_is_upgraded() {
    let server = Guarded::start(&[]).await;
    assert_eq!(server.status("/", &[HOST, BEARER]).await, 101);
    let offered = "Sec-WebSocket-Protocol: wsp, bearer.refusal-token-5f1c9a";
    assert_eq!(server.status("/", &[HOST, offered]).await, 101);
    server.finish().await;
}

#[tokio::test]
async fn no_token_is_401() {
    let server = Guarded::start(&[]).await;
    assert_eq!(server.status("/", &[HOST]).await, 401);
    server.finish().await;
}

#[tokio::test]
async fn a_wrong_token_is_401() {
    let server = Guarded::start(&[]).await;
    let wrong = "Authorization: Bearer refusal-token-5f1c9b";
    assert_eq!(server.status("/", &[HOST, wrong]).await, 401);
    let prefix = "Authorization: Bearer refusal-token";
    assert_eq!(server.status("/", &[HOST, prefix]).await, 401);
    let offered = "Sec-WebSocket-Protocol: wsp, bearer.wrong";
    assert_eq!(server.status("/", &[HOST, offered]).await, 401);
    server.finish().await;
}

#[tokio::test]
async fn a_token_only_in_the_query_is_401() {
    let server = Guarded::start(&[]).await;
    for query in [
        "/?token=refusal-token-5f1c9a",
        "/?access_token=refusal-token-5f1c9a",
    ] {
        assert_eq!(server.status(query, &[HOST]).await, 401, "{query}");
    }
    server.finish().await;
}

#[tokio::test]
async fn an_origin_not_allowed_is_403_even_with_the_token() {
    let allowed = "http://127.0.0.1:8000";
    let server = Guarded::start(&["--allow-origin", allowed]).await;
    let foreign = "Origin: http://evil.example";
    assert_eq!(server.status("/", &[HOST, BEARER, foreign]).await, 403);
    let near = "Origin: http://127.0.0.1:8001";
    assert_eq!(server.status("/", &[HOST, BEARER, near]).await, 403);
    let origin = format!("Origin: {allowed}");
    assert_eq!(server.status("/", &[HOST, BEARER, &origin]).await, 101);
    server.finish().await;
}

#[tokio::test]
async fn a_host_that_is_not_this_server_is_403_and_no_host_is_400() {
    let server = Guarded::start(&[]).await;
    let rebinding = "Host: evil.example:80";
    assert_eq!(server.status("/", &[rebinding, BEARER]).await, 403);
    assert_eq!(server.status("/", &[BEARER]).await, 400);
    let localhost = format!("Host: localhost:{}", server.port);
    assert_eq!(server.status("/", &[&localhost, BEARER]).await, 101);
    server.finish().await;
}

#[tokio::test]
async fn past_max_connections_an_upgrade_is_503() {
    let server = Guarded::start(&["--max-connections", "1"]).await;
    let (first, _) = tokio_tungstenite::client_async(
        websocket_request(server.port),
        TcpStream::connect(("127.0.0.1", server.port))
            .await
            .expect("tcp"),
    )
    .await
    .expect("the first connection is served");
    assert_eq!(server.status("/", &[HOST, BEARER]).await, 503);
    drop(first);
    server.finish().await;
}

fn websocket_request(port: u16) -> tokio_tungstenite::tungstenite::handshake::client::Request {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let mut request = format!("ws://127.0.0.1:{port}/")
        .into_client_request()
        .expect("request");
    let bearer = format!("Bearer {TOKEN}").parse().expect("header");
    request.headers_mut().insert("authorization", bearer);
    request
}

#[tokio::test]
async fn plain_websocket_off_loopback_does_not_start() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let token = token_file(dir.path(), "token", TOKEN);
    let state: &Path = &dir.path().join("state");
    let started = crate::listen_websocket::start_on_address(
        "ws://0.0.0.0:0",
        state,
        &["--token-file", &token],
    )
    .await;
    let log = started.map(|_| ()).expect_err("refused at start");
    assert!(log.contains("loopback"), "{log}");
    assert!(!log.contains(TOKEN), "{log}");
}

/// A connection upgraded by hand, so that any frame can be sent as raw bytes.
async fn upgraded(port: u16) -> TcpStream {
    let request = format!(
        "GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n{BEARER}\r\n\r\n"
    );
    let mut stream = TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect");
    stream.write_all(request.as_bytes()).await.expect("send");
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let byte = stream.read_u8().await.expect("the upgrade's answer");
        head.push(byte);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 101"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    stream
}

/// One final frame from a client: masked (with the zero key, so the payload goes as is).
fn client_frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mut frame = vec![0x80 | opcode];
    match payload.len() {
        n if n < 126 => frame.push(0x80 | n as u8),
        n => {
            frame.push(0x80 | 126);
            frame.extend_from_slice(&(n as u16).to_be_bytes());
        }
    }
    frame.extend_from_slice(&[0, 0, 0, 0]);
    frame.extend_from_slice(payload);
    frame
}

/// The status code of the close frame the server sends next.
async fn close_code(stream: &mut TcpStream) -> u16 {
    loop {
        let first = stream.read_u8().await.expect("a frame");
        let length = match stream.read_u8().await.expect("its length") & 0x7f {
            126 => stream.read_u16().await.expect("its length") as usize,
            127 => panic!("no frame of the server's is this long here"),
            n => n as usize,
        };
        let mut payload = vec![0; length];
        stream.read_exact(&mut payload).await.expect("its payload");
        if first & 0x0f == 0x8 {
            return u16::from_be_bytes([payload[0], payload[1]]);
        }
    }
}

#[tokio::test]
async fn binary_invalid_and_oversized_frames_close_their_connection_only() {
    let server = Guarded::start(&["--max-frame-bytes", "1024"]).await;
    let oversized = vec![b' '; 2000];
    for (opcode, payload, code) in [
        (0x2, &b"{}"[..], 1003),
        (0x1, &[0xff, 0xfe, 0xfd][..], 1007),
        (0x1, &oversized[..], 1009),
    ] {
        let mut stream = upgraded(server.port).await;
        stream
            .write_all(&client_frame(opcode, payload))
            .await
            .expect("send");
        assert_eq!(close_code(&mut stream).await, code, "opcode {opcode}");
    }
    assert_eq!(
        server.status("/", &[HOST, BEARER]).await,
        101,
        "still serving"
    );
    server.finish().await;
}

#[tokio::test]
async fn the_token_may_come_from_wsp_token_and_then_no_token_file_is_made() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let state = dir.path().join("state");
    let log = Arc::default();
    let env = [("WSP_TOKEN", TOKEN)];
    let (child, port, _) = start_at("ws://127.0.0.1:0", &state, &[], &env, Arc::clone(&log))
        .await
        .expect("the server listens");
    let server = Guarded {
        child,
        port,
        log,
        _dir: dir,
    };
    assert_eq!(server.status("/", &[HOST, BEARER]).await, 101);
    assert_eq!(server.status("/", &[HOST]).await, 401);
    assert!(!state.join("server.token").exists(), "no token is made");
    server.finish().await;
}
