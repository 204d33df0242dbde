//! The other end of the wire: a WSP client over any byte stream.
//!
//! A [`Client`] writes framed requests to the server's input and reads framed messages from its
//! output; its [`Peer`] is what runs that server, and says how to wait for it to end:
//! - [`Client::connect`] starts a [`Server`](crate::Server) on this runtime, over an in-memory
//!   pipe ([`ServerTask`]);
//! - [`Client::spawn`] starts a server process and talks over its stdin and stdout
//!   ([`ServerProcess`]);
//! - [`Client::new`] takes any reader, writer and peer (`()` when there is nothing to wait for).
//!
//! [`Client::call`] sends a typed method's params and waits for its typed result
//! (notifications meanwhile go to [`Client::call_with`]'s callback); [`Client::request`] is
//! the untyped form, for raw JSON. [`Client::finish`] ends the session the documented
//! way: it closes the server's input (the EOF drain), skips what the server still writes and waits
//! for it to end, stopping it [`EXIT_GRACE`] later if it has not. No `shutdown`/`exit` is sent.
//!

mod error;
mod in_process;
mod process;

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::io;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite, DuplexStream, ReadHalf, WriteHalf};
use tokio_util::codec::{FramedRead, FramedWrite};
use wsp_protocol::method::Method;
use wsp_protocol::Response;

use crate::codec::{Frame, FrameCodec};
use messages::{classify, Incoming};

pub use error::ClientError;
pub use in_process::ServerTask;
pub use process::{describe_status, ProcessClient, ServerProcess};

/// How long [`Client::finish`] waits for the server to end after closing its input, and how long
/// a client whose server stopped talking waits to learn how it ended, unless
/// [`Client::with_exit_grace`] says otherwise.
pub const EXIT_GRACE: Duration = Duration::from_secs(10);

/// What runs the server at the other end of a [`Client`]'s transport.
pub trait Peer: Send {
    /// How the server ended.
    type Exit: Send;

    /// Waits for the server to end. May be called again once it has, and gives the same answer.
    fn wait(&mut self) -> impl Future<Output = Result<Self::Exit, ClientError>> + Send;

    /// Stops the server without waiting for it.
    fn kill(&mut self) -> Result<(), ClientError>;

    /// Asks the server to drain and end (`SIGTERM` for a process this client spawned), for a
    /// session it no longer reads; nothing for a server that lives elsewhere.
    fn terminate(&mut self) -> Result<(), ClientError> {
        Ok(())
    }

    /// `exit`, in words (`exit status 1`).
    fn describe(exit: &Self::Exit) -> String;
}

/// Nothing to wait for: the server lives elsewhere, and the session ends with the transport.
impl Peer for () {
    type Exit = ();

    async fn wait(&mut self) -> Result<(), ClientError> {
        Ok(())
    }

    fn kill(&mut self) -> Result<(), ClientError> {
        Ok(())
    }

    fn describe(_: &()) -> String {
        "the connection ended".into()
    }
}

/// A notification from the server: a message with a `method` and no `id`.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerNotification {
    /// Its method.
    pub method: String,
    /// Its params (`null` when absent).
    pub params: Value,
}

impl ServerNotification {
    /// The notification as a JSON-RPC message.
    pub fn into_value(self) -> Value {
        json!({"jsonrpc": "2.0", "method": self.method, "params": self.params})
    }
}

/// A session with the server behind a reader, a writer and a [`Peer`]. The defaults are the
/// in-process client [`Client::connect`] makes; [`ProcessClient`] is the spawned one.
pub struct Client<R = ReadHalf<DuplexStream>, W = WriteHalf<DuplexStream>, P = ServerTask> {
    writer: Option<FramedWrite<W, FrameCodec>>,
    reader: FramedRead<R, FrameCodec>,
    peer: P,
    /// Requests sent whose response has not been read.
    pending: HashSet<i64>,
    /// Responses read before they were asked for.
    early: HashMap<i64, Value>,
    /// Notifications kept for [`Client::take_notifications`].
    notifications: Vec<Value>,
    next_id: i64,
    exit_grace: Duration,
}

impl<R, W, P> Client<R, W, P>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
    P: Peer,
{
    /// Asks the server to drain and end (see [`Peer::terminate`]).
    pub fn terminate(&mut self) -> Result<(), ClientError> {
        self.peer.terminate()
    }

    /// A client reading the server's output from `reader` and writing its input to `writer`.
    pub fn new(reader: R, writer: W, peer: P) -> Self {
        Client {
            writer: Some(FramedWrite::new(writer, FrameCodec::new())),
            reader: FramedRead::new(reader, FrameCodec::new()),
            peer,
            pending: HashSet::new(),
            early: HashMap::new(),
            notifications: Vec::new(),
            next_id: 1,
            exit_grace: EXIT_GRACE,
        }
    }

    /// This client, waiting `grace` instead of [`EXIT_GRACE`] for its server to end.
    pub fn with_exit_grace(mut self, grace: Duration) -> Self {
        self.exit_grace = grace;
        self
    }

    /// Sends `initialize` as `client_name` speaking this crate's protocol version and returns the
    /// server's answer.
    pub async fn initialize(&mut self, client_name: &str) -> Result<Response, ClientError> {
        let params = json!({
            "client_name": client_name,
            "client_protocol_version": wsp_protocol::PROTOCOL_VERSION,
        });
        self.request(wsp_protocol::methods::INITIALIZE, Some(params))
            .await
    }

    /// Sends the typed method `M` with `params` and waits for its typed result, skipping
    /// notifications. An error answer is [`ClientError::Rpc`].
    pub async fn call<M>(&mut self, params: &M::Params) -> Result<M::Result, ClientError>
    where
        M: Method<Params: Serialize, Result: DeserializeOwned>,
    {
        self.call_with::<M>(params, |_| {}).await
    }

    /// [`Client::call`], handing each notification the server sends meanwhile to
    /// `on_notification`, in order.
    pub async fn call_with<M>(
        &mut self,
        params: &M::Params,
        on_notification: impl FnMut(ServerNotification),
    ) -> Result<M::Result, ClientError>
    where
        M: Method<Params: Serialize, Result: DeserializeOwned>,
    {
        let shape = |part, source| ClientError::WrongShape {
            method: M::NAME,
            part,
            source,
        };
        let params = serde_json::to_value(params).map_err(|e| shape("params", e))?;
        let params = (!params.is_null()).then_some(params);
        let response = self.request_with(M::NAME, params, on_notification).await?;
        let result = response.outcome.map_err(ClientError::Rpc)?;
        serde_json::from_value(result).map_err(|e| shape("result", e))
    }

    /// Sends one request and waits for its response, skipping notifications: the untyped
    /// form of [`Client::call`], for methods without a [`Method`] type and for requests
    /// whose params are not what the method takes (a test of the server's answer to them).
    pub async fn request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Response, ClientError> {
        self.request_with(method, params, |_| {}).await
    }

    /// Sends one request and waits for its response, handing each notification the server sends
    /// meanwhile (`environment/output`, `$/progress`, …) to `on_notification`, in order.
    pub async fn request_with(
        &mut self,
        method: &str,
        params: Option<Value>,
        on_notification: impl FnMut(ServerNotification),
    ) -> Result<Response, ClientError> {
        let id = self.send_request(method, params).await?;
        let response = self.response_to(id, on_notification).await?;
        Response::from_value(response).map_err(ClientError::NotAResponse)
    }

    /// Sends a request without waiting for its response (omitting `params` when `None`); returns
    /// its id, for [`Client::response_to`].
    pub async fn send_request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Result<i64, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let (Some(params), Value::Object(map)) = (params, &mut message) {
            map.insert("params".into(), params);
        }
        self.write(message).await?;
        self.pending.insert(id);
        Ok(id)
    }

    /// Sends a notification (no id, so nothing answers it), omitting `params` when `None`.
    pub async fn notify(&mut self, method: &str, params: Option<Value>) -> Result<(), ClientError> {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if let (Some(params), Value::Object(map)) = (params, &mut message) {
            map.insert("params".into(), params);
        }
        self.write(message).await
    }

    /// Writes one message; a closed pipe is said as how the server ended.
    async fn write(&mut self, message: Value) -> Result<(), ClientError> {
        let Some(writer) = self.writer.as_mut() else {
            return Err(ClientError::Write(io::ErrorKind::BrokenPipe.into()));
        };
        match writer.send(message.to_string()).await {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == io::ErrorKind::BrokenPipe => Err(self.closed().await),
            Err(error) => Err(ClientError::Write(error)),
        }
    }

    /// Asks the server to cancel request `id` (`$/cancelRequest`). Its response still comes,
    /// for [`Client::response_to`]: `-32800` if the cancel stopped it, its result if the work
    /// was done first.
    pub async fn cancel(&mut self, id: i64) -> Result<(), ClientError> {
        let params = json!({ "id": id });
        self.notify(wsp_protocol::methods::CANCEL_REQUEST, Some(params))
            .await
    }

    /// Waits for the response to request `id`, handing notifications to `on_notification` and
    /// keeping responses to other requests of this client for later.
    pub async fn response_to(
        &mut self,
        id: i64,
        mut on_notification: impl FnMut(ServerNotification),
    ) -> Result<Value, ClientError> {
        loop {
            if let Some(response) = self.early.remove(&id) {
                return Ok(response);
            }
            if !self.pending.contains(&id) {
                return Err(ClientError::NotPending(id));
            }
            let message = self.read_message().await?;
            match classify(&mut self.pending, message)? {
                Incoming::Response(got, response) if got == id => return Ok(response),
                Incoming::Response(got, response) => {
                    self.early.insert(got, response);
                }
                Incoming::Notification(notification) => on_notification(notification),
                Incoming::Ignored => {}
            }
        }
    }

    /// [`Client::response_to`], keeping the notifications that come meanwhile for
    /// [`Client::take_notifications`].
    pub async fn response_keeping(&mut self, id: i64) -> Result<Value, ClientError> {
        let mut notifications = std::mem::take(&mut self.notifications);
        let response = self
            .response_to(id, |n| notifications.push(n.into_value()))
            .await;
        self.notifications = notifications;
        response
    }

    /// The notifications kept by [`Client::response_keeping`], in order, since the last call.
    pub fn take_notifications(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.notifications)
    }

    /// The next message the server sends, whatever it is.
    pub async fn next_message(&mut self) -> Result<Value, ClientError> {
        let message = self.read_message().await?;
        if let Some(id) = message.get("id").and_then(Value::as_i64) {
            self.pending.remove(&id);
        }
        Ok(message)
    }

    /// Closes the server's input, skips anything it still writes, and waits for it to end
    /// (stopping it if it has not ended within the exit grace, [`EXIT_GRACE`] unless set).
    pub async fn finish(mut self) -> Result<P::Exit, ClientError> {
        let writer = self.writer.take();
        let reader = &mut self.reader;
        let peer = &mut self.peer;
        let drain_and_wait = async move {
            if let Some(mut writer) = writer {
                // Shutting the writer down is what an in-memory pipe's reader sees as EOF;
                // dropping it is not enough while the read half keeps the pipe open. A failure
                // means the server stopped reading already, which is the aim.
                let _ = SinkExt::<String>::close(&mut writer).await;
                // A process's stdin shuts down only when it is dropped.
                drop(writer);
            }
            while reader.next().await.is_some() {}
            peer.wait().await
        };
        match tokio::time::timeout(self.exit_grace, drain_and_wait).await {
            Ok(exit) => exit,
            Err(_) => {
                self.peer.kill()?;
                self.peer.wait().await
            }
        }
    }

    async fn read_message(&mut self) -> Result<Value, ClientError> {
        let payload = match self.reader.next().await {
            Some(Ok(Frame::Payload(payload))) => payload,
            Some(Ok(Frame::Invalid(error))) => return Err(ClientError::Undecodable(error)),
            Some(Err(error)) => return Err(ClientError::Read(error)),
            None => return Err(self.closed().await),
        };
        serde_json::from_str(&payload).map_err(ClientError::NotJson)
    }
}

impl<R, W, P> Client<R, W, P>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
    P: Peer,
{
    /// The error for a server that stopped listening or talking: closes its input and says how
    /// it ended, if it did within the exit grace.
    async fn closed(&mut self) -> ClientError {
        self.writer = None;
        let ended = match tokio::time::timeout(self.exit_grace, self.peer.wait()).await {
            Ok(Ok(exit)) => P::describe(&exit),
            Ok(Err(error)) => format!("how it ended is unknown: {error}"),
            Err(_) => "it is still running".into(),
        };
        ClientError::Closed { ended }
    }
}

mod input;
mod messages;
#[cfg(test)]
mod tests;
