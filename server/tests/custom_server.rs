//! A server built with the framework: a custom method is listed in `initialize`, a handler that
//! panics answers -32603 and the server goes on, and the runtime works over any byte stream.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde::Serialize;
use serde_json::{json, Value};
use tokio_util::codec::{FramedRead, FramedWrite};
use wsp_protocol::validation::{from_serde, Params, Violation};
use wsp_protocol::ErrorObjectOwned;
use wsp_server::codec::{Frame, FrameCodec};
use wsp_server::ServerBuilder;

#[derive(Debug, serde::Deserialize, Serialize, schemars::JsonSchema)]
struct EchoParams {
    text: String,
}

impl Params for EchoParams {
    fn from_params(params: Option<&Value>) -> Result<Self, Vec<Violation>> {
        from_serde(params)
    }
    fn schema() -> Value {
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    }
}

fn server() -> wsp_server::Server {
    ServerBuilder::new()
        .route(
            "custom/echo",
            tower::service_fn(|p: EchoParams| async move { Ok::<_, ErrorObjectOwned>(p) }),
        )
        .route(
            "custom/panic",
            tower::service_fn(|_: wsp_protocol::NoParams| async move {
                if true {
                    panic!("a handler bug");
                }
                Ok::<Value, ErrorObjectOwned>(Value::Null)
            }),
        )
        .route(
            "custom/sleep",
            tower::service_fn(|_: wsp_protocol::NoParams| async move {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                Ok::<Value, ErrorObjectOwned>(Value::Null)
            }),
        )
        .drain_timeout(Duration::from_millis(200))
        .build()
}

struct Client {
    to_server: FramedWrite<tokio::io::WriteHalf<tokio::io::DuplexStream>, FrameCodec>,
    from_server: FramedRead<tokio::io::ReadHalf<tokio::io::DuplexStream>, FrameCodec>,
}

impl Client {
    async fn call(&mut self, id: i64, method: &str, params: Value) -> Value {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.to_server.send(message.to_string()).await.unwrap();
        match self.from_server.next().await {
            Some(Ok(Frame::Payload(text))) => serde_json::from_str(&text).unwrap(),
            other => panic!("{other:?}"),
        }
    }

    /// Sends `initialize` as request 1; returns the response.
    async fn initialize(&mut self) -> Value {
        let params = json!({"client_name": "t", "client_protocol_version": "0.1.0"});
        self.call(1, "initialize", params).await
    }
}

fn connect(server: wsp_server::Server) -> (Client, tokio::task::JoinHandle<i32>) {
    let (client_side, server_side) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_side);
    let running = tokio::spawn(server.serve(server_read, server_write));
    let (client_read, client_write) = tokio::io::split(client_side);
    let client = Client {
        to_server: FramedWrite::new(client_write, FrameCodec::new()),
        from_server: FramedRead::new(client_read, FrameCodec::new()),
    };
    (client, running)
}

#[tokio::test]
async fn a_custom_method_is_listed_and_callable() {
    let server = server();
    assert!(server.methods().contains(&"custom/echo".to_owned()));
    let (mut client, _running) = connect(server);
    let init = client.initialize().await;
    assert_eq!(
        init["result"]["methods"],
        json!([
            "custom/echo",
            "custom/panic",
            "custom/sleep",
            "initialize",
            "shutdown"
        ])
    );
    let echo = client.call(2, "custom/echo", json!({"text": "hi"})).await;
    assert_eq!(echo["result"], json!({"text": "hi"}));
    let bad = client.call(3, "custom/echo", json!({"text": 5})).await;
    assert_eq!(bad["error"]["code"], -32602);
}

#[tokio::test]
async fn a_panicking_handler_answers_32603_and_the_server_goes_on() {
    let (mut client, _running) = connect(server());
    client.initialize().await;
    let response = client.call(2, "custom/panic", json!(null)).await;
    assert_eq!(response["error"]["code"], -32603, "{response}");
    let response = client
        .call(3, "custom/echo", json!({"text": "still here"}))
        .await;
    assert_eq!(response["result"]["text"], "still here");
}

#[tokio::test]
async fn eof_drain_cancels_what_outlives_the_deadline_and_returns_0() {
    let (mut client, running) = connect(server());
    client.initialize().await;
    let message = json!({"jsonrpc": "2.0", "id": 2, "method": "custom/sleep"});
    client.to_server.send(message.to_string()).await.unwrap();
    SinkExt::<String>::close(&mut client.to_server)
        .await
        .unwrap();
    drop(client.to_server);
    let status = tokio::time::timeout(Duration::from_secs(30), running)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status, 0);
    match client.from_server.next().await {
        Some(Ok(Frame::Payload(text))) => {
            let response: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(response["id"], 2);
            assert_eq!(response["error"]["code"], -32603, "cancelled: {response}");
        }
        None => {}
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn facts_a_tool_author_sets_are_kept_over_the_framework_and_its_groups() {
    struct Group;
    impl wsp_server::MethodGroup for Group {
        fn bind(&self, router: wsp_server::Router) -> wsp_server::Router {
            router
        }
        fn facts(&self, facts: &mut wsp_server::Facts) {
            facts
                .set("backend", "group's")
                .add_features(["group.feature"]);
        }
    }
    let server = ServerBuilder::new()
        .group(Group)
        .fact("backend", "author's")
        .fact("x_tool", json!({"answer": 42}))
        .build();
    let (mut client, _running) = connect(server);
    let init = client.initialize().await;
    assert_eq!(init["result"]["backend"], "author's", "{init}");
    assert_eq!(init["result"]["x_tool"]["answer"], 42, "{init}");
    assert_eq!(
        init["result"]["features"],
        json!(["group.feature"]),
        "{init}"
    );
    assert_eq!(init["result"]["server_info"]["name"], "wsp", "{init}");
}

#[tokio::test]
async fn an_initialize_the_tool_author_binds_is_the_one_answered() {
    let server = ServerBuilder::new()
        .route(
            "initialize",
            tower::service_fn(|_: wsp_protocol::InitializeParams| async move {
                Ok::<_, ErrorObjectOwned>(json!({"mine": true}))
            }),
        )
        .build();
    let (mut client, _running) = connect(server);
    let init = client.initialize().await;
    assert_eq!(init["result"], json!({"mine": true}), "{init}");
}

/// A reader that counts how often it is asked for input.
struct CountingReader<R> {
    inner: R,
    polls: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for CountingReader<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.polls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        std::pin::Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

#[tokio::test]
async fn an_idle_session_keeps_reading_for_its_busy_poll_window_after_an_answer() {
    let server = ServerBuilder::new()
        .busy_poll(Duration::from_secs(60))
        .build();
    let (client_side, server_side) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_side);
    let polls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let reader = CountingReader {
        inner: server_read,
        polls: polls.clone(),
    };
    let _running = tokio::spawn(server.serve(reader, server_write));
    let (client_read, client_write) = tokio::io::split(client_side);
    let mut client = Client {
        to_server: FramedWrite::new(client_write, FrameCodec::new()),
        from_server: FramedRead::new(client_read, FrameCodec::new()),
    };
    client.initialize().await;
    // Nothing more is sent: the session asks its input again and again all the same (with no
    // busy polling it would sleep until input came, and this would time out).
    let answered_at = polls.load(std::sync::atomic::Ordering::Relaxed);
    let asked_again = async {
        while polls.load(std::sync::atomic::Ordering::Relaxed) < answered_at + 1000 {
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), asked_again)
        .await
        .expect("the idle session read its input 1,000 more times");
    let again = client.call(2, "shutdown", json!(null)).await;
    assert_eq!(again["id"], 2, "{again}");
}
