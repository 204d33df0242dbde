//! Notifications from the server to the client.
//!
//! A [`Notifier`] is handed out by the builder before the server runs, so handlers can keep
//! one. What it sends is queued (a bounded queue: a full one makes the sender wait, which slows
//! down whatever produces the notifications instead of filling memory) and written by the
//! runtime. Every notification a handler sent before its answer is ready is written before that
//! answer.

use bytes::Bytes;
use serde::Serialize;
use tokio::sync::mpsc;

/// How many notifications may wait for the output before senders wait.
pub const NOTIFICATION_QUEUE: usize = 64;

/// Sends notifications to the client of the session this server serves.
#[derive(Debug, Clone)]
pub struct Notifier {
    queue: mpsc::Sender<Bytes>,
}

/// The runtime's end of the notification queue.
pub type NotificationQueue = mpsc::Receiver<Bytes>;

impl Notifier {
    /// A notifier and the queue its notifications go to (the runtime drains it).
    pub fn channel() -> (Notifier, NotificationQueue) {
        let (queue, receiver) = mpsc::channel(NOTIFICATION_QUEUE);
        (Notifier { queue }, receiver)
    }

    /// Completes once the session is over: nothing sent from then on reaches the client.
    pub async fn closed(&self) {
        self.queue.closed().await;
    }

    /// Sends `method` with `params`. Returns `false` once the session is over (the
    /// notification is dropped then).
    pub async fn notify(&self, method: &str, params: &impl Serialize) -> bool {
        #[derive(Serialize)]
        struct Message<'a, P> {
            jsonrpc: &'static str,
            method: &'a str,
            params: &'a P,
        }
        let message = Message {
            jsonrpc: "2.0",
            method,
            params,
        };
        match serde_json::to_vec(&message) {
            Ok(bytes) => self.queue.send(Bytes::from(bytes)).await.is_ok(),
            Err(error) => {
                tracing::error!(%error, method, "a notification could not be serialized");
                true
            }
        }
    }
}
