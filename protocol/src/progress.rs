//! Work-done progress, as in LSP: a request that carries `work_done_token` gets `$/progress`
//! notifications for that token, `begin`, any number of `report`s, then `end`, all of them
//! before its response.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The notification's method.
pub const PROGRESS_METHOD: &str = "$/progress";

/// A `work_done_token`: a string or an integer, echoed exactly as the client sent it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ProgressToken {
    /// An integer token.
    Number(serde_json::Number),
    /// A string token.
    String(String),
}

impl ProgressToken {
    /// Reads a token: a string or an integer (an integral float such as `2.0` is not one).
    pub fn from_value(value: &Value) -> Option<ProgressToken> {
        match value {
            Value::String(text) => Some(ProgressToken::String(text.clone())),
            Value::Number(number) if number.is_i64() || number.is_u64() => {
                Some(ProgressToken::Number(number.clone()))
            }
            _ => None,
        }
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
