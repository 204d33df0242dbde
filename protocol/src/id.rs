//! Request ids.
//!
//! JSON-RPC allows a string, a number or `null`. Numbers are kept as `serde_json::Number`, so
//! negative and large ids (anything up to `u64::MAX` and down to `i64::MIN`) are echoed exactly,
//! which jsonrpsee's own `Id` does not do for negative numbers.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A JSON-RPC request id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Id {
    /// `null`.
    Null,
    /// A number, kept as written.
    Number(serde_json::Number),
    /// A string.
    String(String),
}

impl Id {
    /// Reads an id from a JSON value; `None` when the value can't be an id.
    pub fn from_value(value: &Value) -> Option<Id> {
        match value {
            Value::Null => Some(Id::Null),
            Value::Number(n) => Some(Id::Number(n.clone())),
            Value::String(s) => Some(Id::String(s.clone())),
            _ => None,
        }
    }
}

impl From<i64> for Id {
    fn from(n: i64) -> Self {
        Id::Number(n.into())
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
