//! Sending input a server may take slowly, while reading what it sends.

use std::io;

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite};

use super::{classify, Client, ClientError, Incoming, Peer, ServerNotification};
use crate::codec::Frame;

impl<R, W, P> Client<R, W, P>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send,
    P: Peer,
{
    /// Sends a notification while reading what the server sends meanwhile: responses are kept
    /// for [`Client::response_to`], notifications handed to `on_notification`. For input a
    /// server may take slowly (`environment/input`): a server that stops reading until its
    /// output is read never waits on this client.
    pub async fn notify_reading(
        &mut self,
        method: &str,
        params: Value,
        mut on_notification: impl FnMut(ServerNotification),
    ) -> Result<(), ClientError> {
        let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
        let Some(writer) = self.writer.as_mut() else {
            return Err(ClientError::Write(io::ErrorKind::BrokenPipe.into()));
        };
        let send = writer.send(message.to_string());
        tokio::pin!(send);
        loop {
            tokio::select! {
                sent = &mut send => match sent {
                    Ok(()) => return Ok(()),
                    Err(error) if error.kind() == io::ErrorKind::BrokenPipe => break,
                    Err(error) => return Err(ClientError::Write(error)),
                },
                frame = self.reader.next() => {
                    let payload = match frame {
                        Some(Ok(Frame::Payload(payload))) => payload,
                        Some(Ok(Frame::Invalid(error))) => return Err(ClientError::Undecodable(error)),
                        Some(Err(error)) => return Err(ClientError::Read(error)),
                        None => break,
                    };
                    let message = serde_json::from_str(&payload).map_err(ClientError::NotJson)?;
                    match classify(&mut self.pending, message)? {
                        Incoming::Response(id, response) => {
                            self.early.insert(id, response);
                        }
                        Incoming::Notification(notification) => on_notification(notification),
                        Incoming::Ignored => {}
                    }
                }
            }
        }
        Err(self.closed().await)
    }
}
