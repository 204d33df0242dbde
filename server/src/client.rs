//! An in-process WSP client: a [`Server`] on one end of a pipe, frames on the other.

use std::collections::HashMap;

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{DuplexStream, ReadHalf, WriteHalf};
use tokio::task::JoinHandle;
use tokio_util::codec::{FramedRead, FramedWrite};

use crate::codec::{Frame, FrameCodec};
use crate::Server;

/// A client connected to a server running on this runtime over an in-memory pipe.
pub struct Client {
    writer: Option<FramedWrite<WriteHalf<DuplexStream>, FrameCodec>>,
    reader: FramedRead<ReadHalf<DuplexStream>, FrameCodec>,
    early: HashMap<String, Value>,
    notifications: Vec<Value>,
    server: JoinHandle<i32>,
    next_id: i64,
}

impl Client {
    /// Starts `server` and connects to it; does not initialize.
    pub fn connect(server: Server) -> Client {
        let (client_side, server_side) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_side);
        let server = tokio::spawn(server.serve(server_read, server_write));
        let (read, write) = tokio::io::split(client_side);
        Client {
            writer: Some(FramedWrite::new(write, FrameCodec::new())),
            reader: FramedRead::new(read, FrameCodec::new()),
            early: HashMap::new(),
            notifications: Vec::new(),
            server,
            next_id: 1,
        }
    }

    /// Starts `server`, connects and sends `initialize`.
    pub async fn initialized(server: Server) -> Client {
        let mut client = Client::connect(server);
        let response = client
            .call(
                "initialize",
                json!({"client_name": "wsp-conformance", "client_protocol_version": "0.1.0"}),
            )
            .await;
        assert!(
            response.get("result").is_some(),
            "initialize failed: {response}"
        );
        client
    }

    /// Sends a request without waiting; returns its id.
    pub async fn send(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let writer = self
            .writer
            .as_mut()
            .expect("the client's input is still open");
        writer
            .send(message.to_string())
            .await
            .expect("the server reads its input");
        id
    }

    /// Waits for the response to request `id` (responses to other ids are kept for later).
    pub async fn response(&mut self, id: i64) -> Value {
        let key = id.to_string();
        loop {
            if let Some(response) = self.early.remove(&key) {
                return response;
            }
            let response = self.next_response().await;
            if response.get("id").is_none() {
                self.notifications.push(response);
                continue;
            }
            let got = response["id"].to_string();
            self.early.insert(got, response);
        }
    }

    /// The notifications the server sent while [`Client::response`] waited, in order, since
    /// the last call.
    pub fn take_notifications(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.notifications)
    }

    /// The next message (a response, whichever request it answers, or a notification).
    pub async fn next_response(&mut self) -> Value {
        match self.reader.next().await {
            Some(Ok(Frame::Payload(text))) => serde_json::from_str(&text).expect("a JSON response"),
            other => panic!("expected a response frame, got {other:?}"),
        }
    }

    /// Sends a request and waits for its response.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params).await;
        self.response(id).await
    }

    /// Sends a request and returns its `result`, failing on an error.
    pub async fn ok(&mut self, method: &str, params: Value) -> Value {
        let response = self.call(method, params).await;
        match response.get("result") {
            Some(result) => result.clone(),
            None => panic!("{method} failed: {response}"),
        }
    }

    /// Sends a request and returns its `error`, failing on a result.
    pub async fn err(&mut self, method: &str, params: Value) -> Value {
        let response = self.call(method, params).await;
        match response.get("error") {
            Some(error) => error.clone(),
            None => panic!("{method} should have failed: {response}"),
        }
    }

    /// Closes the server's input (EOF) and waits for its exit status.
    pub async fn close(mut self) -> i32 {
        if let Some(mut writer) = self.writer.take() {
            // Shutting the write half down is what the server reads as EOF; dropping it is not
            // enough while the read half keeps the pipe open.
            SinkExt::<String>::close(&mut writer)
                .await
                .expect("the pipe closes");
        }
        self.server.await.expect("the server task ends")
    }
}

/// The error code of an `error` object.
pub fn code(error: &Value) -> i64 {
    error["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error object: {error}"))
}
