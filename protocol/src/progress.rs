//! Work-done progress, as in LSP: a request that carries `work_done_token` gets `$/progress`
//! notifications for that token, `begin`, any number of `report`s, then `end`, all of them
//! before its response.

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::id::NumberId;

/// A `work_done_token`: a string or an integer of any size, echoed exactly as the client sent
/// it (an integer as its own JSON text, as a request id is).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(untagged)]
pub enum ProgressToken {
    /// An integer token.
    Number(NumberId),
    /// A string token.
    String(String),
}

impl ProgressToken {
    /// Reads a token: a string or an integer (an integral float such as `2.0` is not one). An
    /// integer beyond 64 bits is not a token here: a `Value` holds it only as a double, so its
    /// text must come with it ([`ProgressToken::from_integer_text`]).
    pub fn from_value(value: &Value) -> Option<ProgressToken> {
        match value {
            Value::String(text) => Some(ProgressToken::String(text.clone())),
            Value::Number(number) if number.is_i64() || number.is_u64() => {
                Some(ProgressToken::Number(NumberId::from_number(number.clone())))
            }
            _ => None,
        }
    }

    /// An integer token from its JSON text, of any size; `None` unless `text` is a JSON integer
    /// (an optional `-`, then digits, no leading zeros).
    pub fn from_integer_text(text: &str) -> Option<ProgressToken> {
        let digits = text.strip_prefix('-').unwrap_or(text);
        let integer = digits.bytes().all(|byte| byte.is_ascii_digit())
            && (digits == "0" || digits.starts_with(|c: char| ('1'..='9').contains(&c)));
        integer
            .then(|| NumberId::from_text(text))
            .flatten()
            .map(ProgressToken::Number)
    }
}

impl<'de> Deserialize<'de> for ProgressToken {
    /// Reads a string or an integer that fits 64 bits (a deserializer hands a wider one over
    /// as a double, and its digits are lost).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TokenVisitor;

        impl Visitor<'_> for TokenVisitor {
            type Value = ProgressToken;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an integer")
            }

            fn visit_i64<E: de::Error>(self, n: i64) -> Result<ProgressToken, E> {
                Ok(ProgressToken::Number(NumberId::from_number(n.into())))
            }

            fn visit_u64<E: de::Error>(self, n: u64) -> Result<ProgressToken, E> {
                Ok(ProgressToken::Number(NumberId::from_number(n.into())))
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<ProgressToken, E> {
                Ok(ProgressToken::String(text.to_owned()))
            }

            fn visit_string<E: de::Error>(self, text: String) -> Result<ProgressToken, E> {
                Ok(ProgressToken::String(text))
            }
        }

        deserializer.deserialize_any(TokenVisitor)
    }
}

/// One `$/progress` value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum WorkDoneProgress {
    /// The first notification of a token.
    Begin {
        /// What the work is, e.g. `Installing 3 packages into demo`.
        title: String,
        /// The first step.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        /// 0–100.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        percentage: Option<u32>,
    },
    /// A step of the work.
    Report {
        /// What is happening now.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        /// 0–100, never decreasing.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        percentage: Option<u32>,
    },
    /// The last notification of a token.
    End {
        /// How it ended.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
}

/// Params of a `$/progress` notification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgressParams {
    /// The request's `work_done_token`.
    pub token: ProgressToken,
    /// The progress.
    pub value: WorkDoneProgress,
}
