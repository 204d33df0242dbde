//! The WebSocket transport over real sockets, with tokio-tungstenite as the client: what gets
//! through (a token in `Authorization` or as a subprotocol), what is refused and how (401,
//! 403, 400, 503, close codes 1003 and 1009), and one server value serving clients at once.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::Request;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::WebSocketStream;
use wsp_server::transport::websocket::{Token, WebSocketConfig, WebSocketListener};
use wsp_server::transport::ConnectionSlots;
use wsp_server::{handler_fn, Context, ErrorObjectOwned, ServerBuilder};

const TOKEN: &str = "0123456789abcdef";

wsp_server::method! {
    Echo = "test/echo", EchoParams { text: String = string(0, None) } => Echoed { text: String }
}

async fn echo(params: EchoParams, _: Context) -> Result<Echoed, ErrorObjectOwned> {
    Ok(Echoed { text: params.text })
}

/// A listening server; returns its port.
async fn serve(edit: impl FnOnce(&mut WebSocketConfig)) -> u16 {
    let mut config = WebSocketConfig::new("127.0.0.1", 0, Token::new(TOKEN).expect("token"));
    config.max_frame_bytes = 4096;
    edit(&mut config);
    let listener = WebSocketListener::bind(config).await.expect("bind");
    let port = listener.local_addr().port();
    let server = ServerBuilder::new()
        .method::<Echo, _>(handler_fn(echo))
        .build();
    tokio::spawn(server.serve_listener(listener));
    port
}

fn request(port: u16) -> Request<()> {
    format!("ws://127.0.0.1:{port}/")
        .into_client_request()
        .expect("request")
}

fn with_bearer(port: u16, token: &str) -> Request<()> {
    let mut request = request(port);
    let value = format!("Bearer {token}").parse().expect("header");
    request.headers_mut().insert("authorization", value);
    request
}

type Socket = WebSocketStream<TcpStream>;

async fn connect(request: Request<()>) -> Result<Socket, WsError> {
    let port = request.uri().port_u16().expect("port");
    let stream = TcpStream::connect(("127.0.0.1", port)).await.expect("tcp");
    tokio_tungstenite::client_async(request, stream)
        .await
        .map(|(socket, _)| socket)
}

fn status_of(result: Result<Socket, WsError>) -> u16 {
    match result {
        Err(WsError::Http(response)) => response.status().as_u16(),
        Err(other) => panic!("expected an HTTP refusal, got {other}"),
        Ok(_) => panic!("expected a refusal, got a connection"),
    }
}

async fn call(socket: &mut Socket, message: Value) -> Value {
    socket
        .send(Message::text(message.to_string()))
        .await
        .expect("send");
    loop {
        match socket.next().await.expect("a message").expect("readable") {
            Message::Text(text) => return serde_json::from_str(&text).expect("JSON"),
            Message::Ping(_) | Message::Pong(_) => continue,
            other => panic!("unexpected {other:?}"),
        }
    }
}

async fn initialize(socket: &mut Socket) -> Value {
    let params = json!({"client_name": "t", "client_protocol_version": "0.1.0"});
    call(
        socket,
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}),
    )
    .await
}

async fn closed_with(socket: &mut Socket) -> CloseCode {
    while let Some(message) = socket.next().await {
        if let Ok(Message::Close(Some(frame))) = message {
            return frame.code;
        }
    }
    panic!("the connection ended without a close frame")
}

#[tokio::test]
async fn a_bearer_token_gets_a_session_that_answers_in_text_frames() {
    let port = serve(|_| {}).await;
    let mut socket = connect(with_bearer(port, TOKEN)).await.expect("connects");
    let answer = initialize(&mut socket).await;
    assert_eq!(
        answer["result"]["transport"],
        json!("websocket"),
        "{answer}"
    );
    let echoed = call(
        &mut socket,
        json!({"jsonrpc": "2.0", "id": 1, "method": "test/echo", "params": {"text": "hi"}}),
    )
    .await;
    assert_eq!(echoed["result"], json!({"text": "hi"}));
}

#[tokio::test]
async fn a_token_as_a_subprotocol_selects_wsp() {
    let port = serve(|_| {}).await;
    let mut request = request(port);
    let offered = format!("wsp, bearer.{TOKEN}").parse().expect("header");
    request
        .headers_mut()
        .insert("sec-websocket-protocol", offered);
    let stream = TcpStream::connect(("127.0.0.1", port)).await.expect("tcp");
    let (mut socket, response) = tokio_tungstenite::client_async(request, stream)
        .await
        .expect("connects");
    let selected = response.headers().get("sec-websocket-protocol").cloned();
    assert_eq!(selected.as_ref().and_then(|v| v.to_str().ok()), Some("wsp"));
    initialize(&mut socket).await;
}

#[tokio::test]
async fn a_missing_wrong_or_query_token_is_401() {
    let port = serve(|_| {}).await;
    assert_eq!(status_of(connect(request(port)).await), 401);
    assert_eq!(status_of(connect(with_bearer(port, "wrong")).await), 401);
    let query = format!("ws://127.0.0.1:{port}/?token={TOKEN}")
        .into_client_request()
        .expect("request");
    assert_eq!(status_of(connect(query).await), 401);
}

#[tokio::test]
async fn origins_must_be_allowed_exactly() {
    let port = serve(|c| c.allowed_origins = vec!["https://app.example".into()]).await;
    let mut foreign = with_bearer(port, TOKEN);
    let origin = "https://evil.example".parse().expect("header");
    foreign.headers_mut().insert("origin", origin);
    assert_eq!(status_of(connect(foreign).await), 403);
    let mut allowed = with_bearer(port, TOKEN);
    let origin = "https://app.example".parse().expect("header");
    allowed.headers_mut().insert("origin", origin);
    let mut socket = connect(allowed).await.expect("an allowed origin connects");
    initialize(&mut socket).await;
}

/// The status line of a hand-written upgrade request.
async fn raw_status(port: u16, host_line: &str) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.expect("tcp");
    let request = format!(
        "GET / HTTP/1.1\r\n{host_line}Connection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
         Authorization: Bearer {TOKEN}\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut answer = vec![0; 64];
    let read = stream.read(&mut answer).await.expect("read");
    String::from_utf8_lossy(&answer[..read])
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_foreign_host_is_403_and_no_host_400() {
    let port = serve(|_| {}).await;
    let foreign = raw_status(port, "Host: attacker.example\r\n").await;
    assert!(foreign.contains("403"), "{foreign}");
    let missing = raw_status(port, "").await;
    assert!(missing.contains("400"), "{missing}");
    let loopback = raw_status(port, &format!("Host: localhost:{port}\r\n")).await;
    assert!(loopback.contains("101"), "{loopback}");
}

#[tokio::test]
async fn binary_and_oversized_messages_close_with_1003_and_1009_and_others_go_on() {
    let port = serve(|_| {}).await;
    let mut other = connect(with_bearer(port, TOKEN)).await.expect("connects");
    initialize(&mut other).await;

    let mut binary = connect(with_bearer(port, TOKEN)).await.expect("connects");
    binary
        .send(Message::binary(vec![1, 2, 3]))
        .await
        .expect("send");
    assert_eq!(closed_with(&mut binary).await, CloseCode::Unsupported);

    let mut large = connect(with_bearer(port, TOKEN)).await.expect("connects");
    let text = "x".repeat(10_000);
    let _ = large.send(Message::text(text)).await;
    assert_eq!(closed_with(&mut large).await, CloseCode::Size);

    let echoed = call(
        &mut other,
        json!({"jsonrpc": "2.0", "id": 1, "method": "test/echo", "params": {"text": "still"}}),
    )
    .await;
    assert_eq!(echoed["result"]["text"], json!("still"));
}

#[tokio::test]
async fn past_the_connection_slots_an_upgrade_is_503() {
    let slots = ConnectionSlots::new(1);
    let port = serve(|c| c.slots = slots.clone()).await;
    let mut first = connect(with_bearer(port, TOKEN)).await.expect("connects");
    initialize(&mut first).await;
    assert_eq!(status_of(connect(with_bearer(port, TOKEN)).await), 503);
}

#[tokio::test]
async fn plain_websocket_off_loopback_is_refused() {
    let config = WebSocketConfig::new("0.0.0.0", 0, Token::new(TOKEN).expect("token"));
    let refused = WebSocketListener::bind(config).await.expect_err("refused");
    assert!(refused.to_string().contains("loopback"), "{refused}");
}

#[tokio::test]
async fn a_peer_that_answers_no_ping_is_closed() {
    let port = serve(|c| {
        c.ping_interval = Duration::from_millis(50);
        c.pong_timeout = Duration::from_millis(50);
    })
    .await;
    let mut raw = TcpStream::connect(("127.0.0.1", port)).await.expect("tcp");
    let upgrade = format!(
        "GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
         Authorization: Bearer {TOKEN}\r\n\r\n"
    );
    raw.write_all(upgrade.as_bytes()).await.expect("write");
    // A client that reads frames but never answers a ping: the server's close comes, with
    // 1001, after its ping and the pong timeout.
    let mut seen = Vec::new();
    let mut chunk = [0u8; 256];
    loop {
        let read = raw.read(&mut chunk).await.expect("read");
        if read == 0 {
            break;
        }
        seen.extend_from_slice(&chunk[..read]);
        // A close frame from the server: opcode 0x8, then the code 1001 (0x03e9).
        if seen
            .windows(4)
            .any(|w| w[0] == 0x88 && w[2] == 0x03 && w[3] == 0xe9)
        {
            return;
        }
    }
    panic!("no close frame with 1001: {seen:?}");
}
