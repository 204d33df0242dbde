//! Request ids.
//!
//! JSON-RPC allows a string, a number or `null`. A number id is echoed exactly as its JSON text
//! arrived: `18446744073709551616`, `1E2`, `-0` and `1e400` come back byte for byte, which
//! neither a `serde_json::Number` (it turns the first three into doubles and refuses the last)
//! nor jsonrpsee's own `Id` (it refuses negative numbers) does.
//!
//! Two number ids are the same id when a `serde_json::Value` reads them as the same number: an
//! integer that fits 64 bits is that integer, anything else the nearest double. So `1` and `1.0`
//! are different ids, `1E2` and `100.0` are one, and so are two integers beyond 64 bits that
//! round to the same double. This is what lets a `$/cancelRequest`, whose params arrive as a
//! `Value`, name a request by an id that a `Value` cannot hold exactly. A number beyond the
//! range of a double (`1e400`) is the same id only as the same text.

use std::fmt;
use std::hash::{Hash, Hasher};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Number, Value};

/// A JSON-RPC request id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Id {
    /// `null`.
    Null,
    /// A number, kept as written.
    Number(NumberId),
    /// A string.
    String(String),
}

/// A number id: the JSON text it was written as, and the number a `Value` makes of it.
#[derive(Debug, Clone)]
pub struct NumberId(Repr);

#[derive(Debug, Clone)]
enum Repr {
    /// An integer written plainly (or a number read from a `Value`): its text is the number's own.
    Plain(Number),
    /// Any other number text, kept as it arrived.
    Written {
        text: Box<RawValue>,
        /// `None` when the number is beyond the range of a double.
        value: Option<Number>,
    },
}

impl NumberId {
    /// A number whose text is its own rendering.
    pub(crate) fn from_number(n: Number) -> NumberId {
        NumberId(Repr::Plain(n))
    }

    /// Reads a number id from its JSON text; `None` unless `text` is exactly one JSON number
    /// (no surrounding whitespace).
    pub fn from_text(text: &str) -> Option<NumberId> {
        let raw = serde_json::from_str::<&RawValue>(text).ok()?;
        (raw.get().len() == text.len())
            .then(|| NumberId::from_raw(raw))
            .flatten()
    }

    /// Reads a number id from a raw JSON value; `None` when it is not a number.
    fn from_raw(raw: &RawValue) -> Option<NumberId> {
        let text = raw.get();
        if !text.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
            return None;
        }
        let repr = match plain_integer(text) {
            Some(n) => Repr::Plain(n),
            None => Repr::Written {
                text: raw.to_owned(),
                value: serde_json::from_str::<Number>(text).ok(),
            },
        };
        Some(NumberId(repr))
    }

    /// The number as a `serde_json::Value` holds it; `None` when it is beyond the range of a
    /// double.
    pub fn as_number(&self) -> Option<&Number> {
        match &self.0 {
            Repr::Plain(n) => Some(n),
            Repr::Written { value, .. } => value.as_ref(),
        }
    }

    /// The text as written, when it is not the number's own rendering.
    fn written(&self) -> Option<&str> {
        match &self.0 {
            Repr::Plain(_) => None,
            Repr::Written { text, .. } => Some(text.get()),
        }
    }
}

/// The integer `text` denotes when it is written the way the integer renders itself (digits,
/// an optional `-`, not `-0`) and fits 64 bits.
fn plain_integer(text: &str) -> Option<Number> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || text == "-0" {
        return None;
    }
    match text.starts_with('-') {
        true => text.parse::<i64>().ok().map(Number::from),
        false => text.parse::<u64>().ok().map(Number::from),
    }
}

impl PartialEq for NumberId {
    fn eq(&self, other: &Self) -> bool {
        match (self.as_number(), other.as_number()) {
            (Some(a), Some(b)) => a == b,
            (None, None) => self.written() == other.written(),
            _ => false,
        }
    }
}

impl Eq for NumberId {}

impl Hash for NumberId {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self.as_number() {
            Some(n) => n.hash(state),
            None => self.written().hash(state),
        }
    }
}

impl fmt::Display for NumberId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Plain(n) => write!(f, "{n}"),
            Repr::Written { text, .. } => f.write_str(text.get()),
        }
    }
}

impl Serialize for NumberId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Repr::Plain(n) => n.serialize(serializer),
            Repr::Written { text, .. } => text.serialize(serializer),
        }
    }
}

impl Id {
    /// A number id whose text is the number's own rendering.
    pub(crate) fn from_number(n: Number) -> Id {
        Id::Number(NumberId::from_number(n))
    }

    /// Reads an id from a raw JSON value, keeping a number's text; `None` when the value can't
    /// be an id (or is a string that is not valid Unicode, such as a lone surrogate escape).
    pub fn from_raw(raw: &RawValue) -> Option<Id> {
        match raw.get().as_bytes().first() {
            Some(b'n') => (raw.get() == "null").then_some(Id::Null),
            Some(b'"') => serde_json::from_str(raw.get()).ok().map(Id::String),
            _ => NumberId::from_raw(raw).map(Id::Number),
        }
    }

    /// Reads an id from a JSON value; `None` when the value can't be an id. A number keeps
    /// only what the value holds (see the module documentation for why it still matches).
    pub fn from_value(value: &Value) -> Option<Id> {
        match value {
            Value::Null => Some(Id::Null),
            Value::Number(n) => Some(Id::from_number(n.clone())),
            Value::String(s) => Some(Id::String(s.clone())),
            _ => None,
        }
    }
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Id::Null => serializer.serialize_unit(),
            Id::Number(n) => n.serialize(serializer),
            Id::String(s) => serializer.serialize_str(s),
        }
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        Id::from_raw(&raw)
            .ok_or_else(|| serde::de::Error::custom("an id must be a string, a number or null"))
    }
}

impl From<i64> for NumberId {
    fn from(n: i64) -> Self {
        NumberId::from_number(n.into())
    }
}

impl From<i64> for Id {
    fn from(n: i64) -> Self {
        Id::from_number(n.into())
    }
}

impl From<&str> for Id {
    fn from(s: &str) -> Self {
        Id::String(s.to_owned())
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Null => f.write_str("null"),
            Id::Number(n) => write!(f, "{n}"),
            Id::String(s) => write!(f, "{s:?}"),
        }
    }
}
