//! Wire types of WSP: JSON-RPC messages, WSP params and results, error codes and validation.
#![warn(missing_docs)]

pub mod results;

pub use results::{ExecuteResult, Package};
