//! Notifications to every initialized session of a server at once: [`Broadcast`].
//!
//! A server that serves many connections (see [`crate::transport`]) tells all of its clients
//! about a change of shared state (`environment/changed` is one) through a [`Broadcast`] given
//! to [`ServerBuilder::broadcast`](crate::ServerBuilder::broadcast). Each session gets every
//! message sent while it is initialized, in the order sent; sessions that have not
//! initialized yet, or have shut down, get none. A session whose client reads slowly only
//! delays its own copies: each session has its own place in a bounded backlog
//! ([`BROADCAST_BACKLOG`] messages), and one that falls further behind than that loses the
//! oldest of its copies, which is logged.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use tokio::sync::broadcast;
use wsp_middleware::notifier::Notifier;
use wsp_middleware::{Lifecycle, LifecycleState};

/// How many messages a session may be behind before it loses the oldest.
pub const BROADCAST_BACKLOG: usize = 1024;

#[derive(Debug)]
struct Message {
    method: String,
    params: Value,
}

/// Sends notifications to every initialized session of the servers it was given to.
#[derive(Debug, Clone)]
pub struct Broadcast {
    sender: broadcast::Sender<Arc<Message>>,
}

impl Default for Broadcast {
    fn default() -> Self {
        Broadcast::new()
    }
}

impl Broadcast {
    /// A broadcast no session listens to yet.
    pub fn new() -> Self {
        Broadcast {
            sender: broadcast::channel(BROADCAST_BACKLOG).0,
        }
    }

    /// Sends `method` with `params` to every session initialized now. Never waits; with no
    /// session listening, nothing happens. Params that don't serialize are logged and dropped.
    pub fn send(&self, method: &str, params: impl Serialize) {
        let params = match serde_json::to_value(params) {
            Ok(params) => params,
            Err(error) => {
                tracing::error!(%error, method, "a broadcast could not be serialized");
                return;
            }
        };
        let message = Arc::new(Message {
            method: method.to_owned(),
            params,
        });
        // An error only says that no session listens.
        let _ = self.sender.send(message);
    }

    /// Forwards every message to one session's client while it is initialized, until the
    /// session ends.
    pub(crate) fn forward(&self, notifier: Notifier, lifecycle: Lifecycle) {
        let mut receiver = self.sender.subscribe();
        tokio::spawn(async move {
            loop {
                let received = tokio::select! {
                    received = receiver.recv() => received,
                    () = notifier.closed() => return,
                };
                match received {
                    Ok(message) if lifecycle.state() == LifecycleState::Initialized => {
                        if !notifier.notify(&message.method, &message.params).await {
                            return;
                        }
                    }
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "a slow client missed broadcast notifications");
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        });
    }
}
