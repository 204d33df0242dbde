//! Error codes and the error objects WSP answers with.
//!
//! Error objects are jsonrpsee's [`ErrorObjectOwned`], so they serialize exactly as JSON-RPC 2.0
//! requires (`code`, `message`, optional `data`).

pub use jsonrpsee_types::ErrorObjectOwned;
use serde_json::{json, Value};

use crate::failure::FailureReason;
use crate::validation::Violation;

/// Invalid JSON was received.
pub const PARSE_ERROR: i32 = -32700;
/// The JSON sent is not a valid request object.
pub const INVALID_REQUEST: i32 = -32600;
/// The method does not exist on this server.
pub const METHOD_NOT_FOUND: i32 = -32601;
/// Invalid method parameters.
pub const INVALID_PARAMS: i32 = -32602;
/// The handler failed unexpectedly.
pub const INTERNAL_ERROR: i32 = -32603;
/// The client cancelled the request (`$/cancelRequest`, as in LSP).
pub const REQUEST_CANCELLED: i32 = -32800;
/// A request other than `initialize` arrived before `initialize` succeeded.
pub const SERVER_NOT_INITIALIZED: i32 = -32002;
/// No environment has that id.
pub const ENVIRONMENT_NOT_FOUND: i32 = -31001;
/// A live environment already has that name.
pub const ENVIRONMENT_NAME_CONFLICT: i32 = -31002;
/// No interpreter satisfies the requested Python version.
pub const PYTHON_VERSION_UNAVAILABLE: i32 = -31003;
/// Provisioning, deletion or a command failed for a non-protocol reason.
pub const EXECUTION_FAILED: i32 = -31004;

/// An error object with optional data.
pub fn error(code: i32, message: impl Into<String>, data: Option<Value>) -> ErrorObjectOwned {
    ErrorObjectOwned::owned(code, message.into(), data)
}

/// `-32700`: the payload is not JSON.
pub fn parse_error(detail: impl std::fmt::Display) -> ErrorObjectOwned {
    error(PARSE_ERROR, format!("Parse error: {detail}"), None)
}

/// `-32600` with a reason.
pub fn invalid_request(reason: impl std::fmt::Display) -> ErrorObjectOwned {
    error(INVALID_REQUEST, format!("Invalid request: {reason}"), None)
}

/// `-32601` naming the method.
pub fn method_not_found(method: &str) -> ErrorObjectOwned {
    /// `data`, serialized straight from the name (no `Value` in between).
    #[derive(serde::Serialize)]
    struct Data<'a> {
        method: &'a str,
    }
    ErrorObjectOwned::owned(
        METHOD_NOT_FOUND,
        format!("Method not found: {method}"),
        Some(Data { method }),
    )
}

/// `-32602` listing every violated rule.
pub fn invalid_params(violations: &[Violation]) -> ErrorObjectOwned {
    error(
        INVALID_PARAMS,
        "Invalid params",
        Some(json!({ "violations": violations })),
    )
}

/// `-32603`.
pub fn internal_error(detail: impl std::fmt::Display) -> ErrorObjectOwned {
    error(INTERNAL_ERROR, format!("Internal error: {detail}"), None)
}

/// `-32002`.
pub fn server_not_initialized() -> ErrorObjectOwned {
    error(SERVER_NOT_INITIALIZED, "Server not initialized", None)
}

/// `-31001` with `data: {"id": id}`.
pub fn environment_not_found(id: &str) -> ErrorObjectOwned {
    error(
        ENVIRONMENT_NOT_FOUND,
        format!("Environment not found: {id}"),
        Some(json!({ "id": id })),
    )
}

/// `-31002` listing the violated rules (the name's uniqueness among them).
pub fn name_conflict(violations: &[Violation]) -> ErrorObjectOwned {
    error(
        ENVIRONMENT_NAME_CONFLICT,
        "Environment name conflict",
        Some(json!({ "violations": violations })),
    )
}

/// `-31003` with the requested and available versions.
pub fn python_version_unavailable(requested: &str, available: &[String]) -> ErrorObjectOwned {
    error(
        PYTHON_VERSION_UNAVAILABLE,
        format!("Python {requested} is not available"),
        Some(json!({ "python_version": requested, "available": available })),
    )
}

/// `-31004` with `data: {"reason", "detail"}` plus any extra fields.
pub fn execution_failed(
    reason: &FailureReason,
    detail: &str,
    extra: Option<Value>,
) -> ErrorObjectOwned {
    let mut data = json!({ "reason": reason, "detail": detail });
    if let (Some(Value::Object(extra)), Value::Object(map)) = (extra, &mut data) {
        map.extend(extra);
    }
    error(
        EXECUTION_FAILED,
        format!("Execution failed: {reason}: {detail}"),
        Some(data),
    )
}
