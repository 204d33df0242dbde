//! What the server sends, told apart: a response, a notification, or something to ignore.

use std::collections::HashSet;

use serde_json::Value;
use wsp_protocol::Response;

use super::{ClientError, ServerNotification};

/// What one message from the server is.
pub(super) enum Incoming {
    Response(i64, Value),
    Notification(ServerNotification),
    Ignored,
}

/// What `message` is; a response to a pending request is no longer pending.
pub(super) fn classify(
    pending: &mut HashSet<i64>,
    message: Value,
) -> Result<Incoming, ClientError> {
    {
        let Value::Object(object) = &message else {
            return Err(ClientError::NotAResponse(
                "a message must be a JSON object".into(),
            ));
        };
        let Some(id) = object.get("id") else {
            return match object.get("method").and_then(Value::as_str) {
                Some(method) => Ok(Incoming::Notification(ServerNotification {
                    method: method.to_owned(),
                    params: object.get("params").cloned().unwrap_or(Value::Null),
                })),
                None => Err(ClientError::NotAResponse(
                    "a message with no `id` needs a `method`".into(),
                )),
            };
        };
        if let Some(id) = id.as_i64().filter(|id| pending.remove(id)) {
            return Ok(Incoming::Response(id, message));
        }
        if id.is_null() {
            let response = Response::from_value(message).map_err(ClientError::NotAResponse)?;
            if let Err(error) = response.outcome {
                return Err(ClientError::Rejected {
                    code: error.code(),
                    message: error.message().to_owned(),
                });
            }
            return Ok(Incoming::Ignored);
        }
        tracing::warn!(%id, "ignoring a response to a request this client is not waiting for");
        Ok(Incoming::Ignored)
    }
}
