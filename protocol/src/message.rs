//! JSON-RPC 2.0 messages: classifying what arrives, and the responses that go out.
//!
//! [`parse_payload`] turns one frame's payload into a [`Payload`]: a single message, a batch, or a
//! parse error. Each message is a [`Request`] (it has an `id` member), a [`Notification`], or
//! [`Incoming::Invalid`], which is answered with `-32600` and the id when one could be read.

use jsonrpsee_types::ErrorObjectOwned;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::error;
use crate::id::Id;

mod members;
mod wide;
use members::RawMembers;
pub use wide::WideIntegers;

/// A request: it has an id and gets exactly one response.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The id the response echoes.
    pub id: Id,
    /// The method name.
    pub method: String,
    /// The `params` member as sent; `None` when absent.
    pub params: Option<Value>,
    /// The text of `params`' top-level integers that `params` holds only as doubles (beyond
    /// 64 bits, or `-0`).
    pub wide_integers: WideIntegers,
    /// An instant no earlier than the transport's read of the request's last byte, when the
    /// runtime that read it knows one (`None` for a request made in code). Whatever had
    /// finished before the client sent the request had finished before this instant.
    pub received: Option<std::time::Instant>,
}

impl Request {
    /// A request whose params hold every top-level integer exactly.
    pub fn new(id: Id, method: impl Into<String>, params: Option<Value>) -> Self {
        Request {
            id,
            method: method.into(),
            params,
            wide_integers: WideIntegers::default(),
            received: None,
        }
    }
}

/// A notification: no id, never answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The `params` member as sent; `None` when absent.
    pub params: Option<Value>,
}

/// One message of a payload.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A well-formed request.
    Request(Request),
    /// A well-formed notification.
    Notification(Notification),
    /// Not a valid JSON-RPC 2.0 message: answered with `-32600`.
    Invalid {
        /// The id when one could be read, else `null`.
        id: Id,
        /// What is wrong, for the error message.
        reason: String,
    },
}

/// What one frame's payload holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// A single message.
    Single(Incoming),
    /// A batch: its messages in order. An empty batch is [`Payload::EmptyBatch`].
    Batch(Vec<Incoming>),
    /// `[]`: answered with one `-32600`.
    EmptyBatch,
    /// Not JSON: answered with `-32700` and `"id": null`.
    NotJson(String),
}

/// Classifies one payload.
///
/// Well-formed messages are read straight into their parts; anything else (a member of the
/// wrong type, a duplicate member, an element that is not an object) is read member by member
/// by [`parse_payload_via_value`], which decides the outcome.
pub fn parse_payload(text: &str) -> Payload {
    let fast = if text.trim_start().starts_with('[') {
        serde_json::from_str::<Vec<ObjectEnvelope>>(text)
            .ok()
            .map(|envelopes| match envelopes.is_empty() {
                true => Payload::EmptyBatch,
                false => Payload::Batch(envelopes.into_iter().map(|e| e.0.classify()).collect()),
            })
    } else {
        serde_json::from_str::<ObjectEnvelope>(text)
            .ok()
            .map(|envelope| Payload::Single(envelope.0.classify()))
    };
    fast.unwrap_or_else(|| parse_payload_via_value(text))
}

/// The members of a message object that classification reads; `Some` means present (even as
/// `null`). Unknown members are ignored.
#[derive(Deserialize)]
struct Envelope {
    #[serde(default, deserialize_with = "present")]
    jsonrpc: Option<IsVersion2>,
    #[serde(default, deserialize_with = "present")]
    id: Option<PlainId>,
    #[serde(default, deserialize_with = "present")]
    method: Option<String>,
    #[serde(default, deserialize_with = "wide::narrow_params")]
    params: Option<Value>,
}

/// Whether a `jsonrpc` string member is `"2.0"`, read without copying it.
struct IsVersion2(bool);

impl<'de> Deserialize<'de> for IsVersion2 {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct VersionVisitor;

        impl serde::de::Visitor<'_> for VersionVisitor {
            type Value = IsVersion2;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }

            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<IsVersion2, E> {
                Ok(IsVersion2(s == "2.0"))
            }
        }

        deserializer.deserialize_str(VersionVisitor)
    }
}

/// An [`Envelope`] read only from a JSON object (a derived `Deserialize` would take an array
/// as well).
struct ObjectEnvelope(Envelope);

impl<'de> Deserialize<'de> for ObjectEnvelope {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjectVisitor;

        impl<'de> serde::de::Visitor<'de> for ObjectVisitor {
            type Value = ObjectEnvelope;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Self::Value, A::Error> {
                Envelope::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(ObjectEnvelope)
            }
        }

        deserializer.deserialize_map(ObjectVisitor)
    }
}

/// An id the fast path reads without keeping its text: a string, `null`, or a number that
/// serde_json reads as a 64-bit integer (so written plainly, and its text is its own rendering).
/// Any other number fails the fast path, and [`parse_payload_via_value`] keeps its text.
struct PlainId(Id);

impl<'de> Deserialize<'de> for PlainId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PlainIdVisitor;

        impl serde::de::Visitor<'_> for PlainIdVisitor {
            type Value = PlainId;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string, null or an integer written plainly")
            }

            fn visit_unit<E: serde::de::Error>(self) -> Result<PlainId, E> {
                Ok(PlainId(Id::Null))
            }

            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<PlainId, E> {
                Ok(PlainId(Id::from_number(n.into())))
            }

            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<PlainId, E> {
                Ok(PlainId(Id::from_number(n.into())))
            }

            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<PlainId, E> {
                Ok(PlainId(Id::String(s.to_owned())))
            }

            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<PlainId, E> {
                Ok(PlainId(Id::String(s)))
            }
        }

        deserializer.deserialize_any(PlainIdVisitor)
    }
}

fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

impl Envelope {
    /// The same decisions, in the same order, as [`classify_raw`].
    fn classify(self) -> Incoming {
        let id = self.id.map(|PlainId(id)| id);
        let invalid = |reason: &str| Incoming::Invalid {
            id: id.clone().unwrap_or(Id::Null),
            reason: reason.to_owned(),
        };
        if !matches!(self.jsonrpc, Some(IsVersion2(true))) {
            return invalid("`jsonrpc` must be \"2.0\"");
        }
        let Some(method) = self.method else {
            return invalid("`method` is missing");
        };
        match id {
            Some(id) => Incoming::Request(Request::new(id, method, self.params)),
            None => Incoming::Notification(Notification {
                method,
                params: self.params,
            }),
        }
    }
}

/// Why a message whose `id` member can't be an id is invalid (its answer has a null id).
const NOT_AN_ID: &str = "`id` must be a string, a number or null";

/// The id member, if present; `Err` when it can't be an id.
fn read_id(id: Option<&RawValue>) -> Result<Option<Id>, &'static str> {
    id.map(|raw| Id::from_raw(raw).ok_or(NOT_AN_ID)).transpose()
}

/// Classifies one payload member by member: the reference for [`parse_payload`], which takes
/// a shorter way for well-formed messages.
///
/// The payload must be JSON as a whole. Each message is then read as raw members (an `id`
/// keeps its text, members it does not know are skipped unread), and `jsonrpc`, `method` and
/// `params` are read into values on their own; the text of a top-level member that is an
/// integer a [`Value`] holds only as a double is kept in [`Request::wide_integers`]. Other `params` that no
/// [`Value`] can hold (a number beyond the range of a double, a lone surrogate escape, nesting
/// past serde_json's depth limit) make the message invalid, answered `-32600` with its id.
pub fn parse_payload_via_value(text: &str) -> Payload {
    let whole = match serde_json::from_str::<&RawValue>(text) {
        Ok(whole) => whole,
        Err(e) => return Payload::NotJson(e.to_string()),
    };
    if !whole.get().starts_with('[') {
        return Payload::Single(classify_raw(whole));
    }
    match serde_json::from_str::<Vec<&RawValue>>(whole.get()) {
        Ok(items) if items.is_empty() => Payload::EmptyBatch,
        Ok(items) => Payload::Batch(items.into_iter().map(classify_raw).collect()),
        Err(e) => Payload::NotJson(e.to_string()),
    }
}

/// Classifies one message, given as raw JSON, as a request, a notification or an invalid
/// message.
fn classify_raw(message: &RawValue) -> Incoming {
    let Ok(members) = serde_json::from_str::<RawMembers<'_>>(message.get()) else {
        return Incoming::Invalid {
            id: Id::Null,
            reason: "a message must be a JSON object".into(),
        };
    };
    let id = match read_id(members.id) {
        Ok(id) => id,
        Err(reason) => {
            return Incoming::Invalid {
                id: Id::Null,
                reason: reason.into(),
            }
        }
    };
    let invalid = |reason: &str| Incoming::Invalid {
        id: id.clone().unwrap_or(Id::Null),
        reason: reason.to_owned(),
    };
    let jsonrpc = members
        .jsonrpc
        .and_then(|raw| serde_json::from_str::<std::borrow::Cow<'_, str>>(raw.get()).ok());
    if jsonrpc.as_deref() != Some("2.0") {
        return invalid("`jsonrpc` must be \"2.0\"");
    }
    let method = match members.method.map(|raw| serde_json::from_str(raw.get())) {
        Some(Ok(method)) => method,
        Some(Err(_)) => return invalid("`method` must be a string"),
        None => return invalid("`method` is missing"),
    };
    let (params, wide_integers) = match members.params.map(wide::read_params) {
        Some(Ok((params, wide))) => (Some(params), wide),
        Some(Err(e)) => return invalid(&format!("`params` cannot be read: {e}")),
        None => (None, WideIntegers::default()),
    };
    match id {
        Some(id) => Incoming::Request(Request {
            id,
            method,
            params,
            wide_integers,
            received: None,
        }),
        None => Incoming::Notification(Notification { method, params }),
    }
}

/// A response: the id and either a result or an error.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The request's id.
    pub id: Id,
    /// The result, or the error.
    pub outcome: Result<Value, ErrorObjectOwned>,
}

impl Response {
    /// A success.
    pub fn ok(id: Id, result: Value) -> Self {
        Response {
            id,
            outcome: Ok(result),
        }
    }

    /// A failure.
    pub fn error(id: Id, error: ErrorObjectOwned) -> Self {
        Response {
            id,
            outcome: Err(error),
        }
    }

    /// The error code, when the outcome is an error.
    pub fn error_code(&self) -> Option<i32> {
        self.outcome.as_ref().err().map(|e| e.code())
    }

    /// Reads a response from its JSON form (for clients).
    pub fn from_value(value: Value) -> Result<Self, String> {
        let Value::Object(mut object) = value else {
            return Err("a response must be a JSON object".into());
        };
        let id = object
            .remove("id")
            .and_then(|id| Id::from_value(&id))
            .ok_or("a response needs an `id`")?;
        if let Some(error) = object.remove("error") {
            let error: ErrorObjectOwned =
                serde_json::from_value(error).map_err(|e| format!("bad `error`: {e}"))?;
            return Ok(Response::error(id, error));
        }
        match object.remove("result") {
            Some(result) => Ok(Response::ok(id, result)),
            None => Err("a response needs `result` or `error`".into()),
        }
    }
}

impl Serialize for Response {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("id", &self.id)?;
        match &self.outcome {
            Ok(result) => map.serialize_entry("result", result)?,
            Err(error) => map.serialize_entry("error", error)?,
        }
        map.end()
    }
}

/// The answer to a payload that is not JSON.
pub fn parse_error_response(detail: &str) -> Response {
    Response::error(Id::Null, error::parse_error(detail))
}

/// The answer to an invalid message.
pub fn invalid_request_response(id: Id, reason: &str) -> Response {
    Response::error(id, error::invalid_request(reason))
}
