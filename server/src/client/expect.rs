//! The shorter forms tests and the conformance kit use: each panics where the method it wraps
//! returns an error, and works on the response's JSON.

use wsp_protocol::error_chain::chain_message;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};

use super::{Client, Peer};

impl<R, W, P> Client<R, W, P>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
    P: Peer,
{
    /// Sends a request without waiting; returns its id.
    ///
    /// # Panics
    /// If the server does not take it.
    pub async fn send(&mut self, method: &str, params: Value) -> i64 {
        match self.send_request(method, Some(params)).await {
            Ok(id) => id,
            Err(error) => panic!("cannot send {method}: {}", chain_message(&error)),
        }
    }

    /// Waits for the response to request `id`; responses to other requests are kept for later,
    /// notifications for [`Client::take_notifications`].
    ///
    /// # Panics
    /// If the server stops talking or sends something that is not a message.
    pub async fn response(&mut self, id: i64) -> Value {
        let mut notifications = std::mem::take(&mut self.notifications);
        let response = self
            .response_to(id, |n| notifications.push(n.into_value()))
            .await;
        self.notifications = notifications;
        match response {
            Ok(response) => response,
            Err(error) => panic!("no response to request {id}: {}", chain_message(&error)),
        }
    }

    /// The notifications the server sent while [`Client::response`] waited, in order, since the
    /// last call.
    pub fn take_notifications(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.notifications)
    }

    /// The next message (a response, whichever request it answers, or a notification).
    ///
    /// # Panics
    /// If the server stops talking or sends something that is not JSON.
    pub async fn next_response(&mut self) -> Value {
        match self.next_message().await {
            Ok(message) => message,
            Err(error) => panic!("expected a message: {}", chain_message(&error)),
        }
    }

    /// Sends a request and waits for its response.
    pub async fn call_json(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params).await;
        self.response(id).await
    }

    /// Sends a request and returns its `result`.
    ///
    /// # Panics
    /// If it fails.
    pub async fn ok(&mut self, method: &str, params: Value) -> Value {
        let response = self.call_json(method, params).await;
        match response.get("result") {
            Some(result) => result.clone(),
            None => panic!("{method} failed: {response}"),
        }
    }

    /// Sends a request and returns its `error`.
    ///
    /// # Panics
    /// If it succeeds.
    pub async fn err(&mut self, method: &str, params: Value) -> Value {
        let response = self.call_json(method, params).await;
        match response.get("error") {
            Some(error) => error.clone(),
            None => panic!("{method} should have failed: {response}"),
        }
    }

    /// [`Client::finish`]: closes the server's input (EOF) and waits for it to end.
    ///
    /// # Panics
    /// If waiting fails.
    pub async fn close(self) -> P::Exit {
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
