//! The shorter forms tests and the conformance kit use on the framework's client: each panics
//! where the method it wraps returns an error, and works on the response's JSON. They are
//! test-only, so they live here and not in the framework.

use wsp_protocol::error_chain::chain_message;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};

use wsp_server::client::{Client, Peer};

/// The panicking forms, for any [`Client`]: `use wsp_testing::ClientExt;`.
#[allow(
    async_fn_in_trait,
    reason = "test helpers, awaited where they are called"
)]
pub trait ClientExt {
    /// How the server ended.
    type Exit;

    /// Sends a request without waiting; returns its id.
    ///
    /// # Panics
    /// If the server does not take it.
    async fn send(&mut self, method: &str, params: Value) -> i64;

    /// Waits for the response to request `id`; notifications meanwhile are kept for
    /// [`Client::take_notifications`].
    ///
    /// # Panics
    /// If the server stops talking or sends something that is not a message.
    async fn response(&mut self, id: i64) -> Value;

    /// The next message (a response, whichever request it answers, or a notification).
    ///
    /// # Panics
    /// If the server stops talking or sends something that is not JSON.
    async fn next_response(&mut self) -> Value;

    /// Sends a request and waits for its response.
    async fn call_json(&mut self, method: &str, params: Value) -> Value;

    /// Sends a request and returns its `result`.
    ///
    /// # Panics
    /// If it fails.
    async fn ok(&mut self, method: &str, params: Value) -> Value;

    /// Sends a request and returns its `error`.
    ///
    /// # Panics
    /// If it succeeds.
    async fn err(&mut self, method: &str, params: Value) -> Value;

    /// [`Client::finish`]: closes the server's input (EOF) and waits for it to end.
    ///
    /// # Panics
    /// If waiting fails.
    async fn close(self) -> Self::Exit;
}

impl<R, W, P> ClientExt for Client<R, W, P>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
    P: Peer,
{
    type Exit = P::Exit;

    async fn send(&mut self, method: &str, params: Value) -> i64 {
        match self.send_request(method, Some(params)).await {
            Ok(id) => id,
            Err(error) => panic!("cannot send {method}: {}", chain_message(&error)),
        }
    }

    async fn response(&mut self, id: i64) -> Value {
        match self.response_keeping(id).await {
            Ok(response) => response,
            Err(error) => panic!("no response to request {id}: {}", chain_message(&error)),
        }
    }

    async fn next_response(&mut self) -> Value {
        match self.next_message().await {
            Ok(message) => message,
            Err(error) => panic!("expected a message: {}", chain_message(&error)),
        }
    }

    async fn call_json(&mut self, method: &str, params: Value) -> Value {
        let id = ClientExt::send(self, method, params).await;
        self.response(id).await
    }

    async fn ok(&mut self, method: &str, params: Value) -> Value {
        let response = self.call_json(method, params).await;
        match response.get("result") {
            Some(result) => result.clone(),
            None => panic!("{method} failed: {response}"),
        }
    }

    async fn err(&mut self, method: &str, params: Value) -> Value {
        let response = self.call_json(method, params).await;
        match response.get("error") {
            Some(error) => error.clone(),
            None => panic!("{method} should have failed: {response}"),
        }
    }

    async fn close(self) -> P::Exit {
        match self.finish().await {
            Ok(exit) => exit,
            Err(error) => panic!("the server did not end: {}", chain_message(&error)),
        }
    }
}

/// The error code of an `error` object.
///
/// # Panics
/// If `error` has no integer `code`.
pub fn code(error: &Value) -> i64 {
    error["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error object: {error}"))
}
