//! Error codes as a type: jsonrpsee's [`ErrorCode`](JsonRpcCode) for the standard JSON-RPC codes, and
//! WSP's own beside them. The `i32` constants in [`crate::error`] are the same codes.

pub use jsonrpsee_types::ErrorCode as JsonRpcCode;

use crate::error;

/// The code of an error a WSP server answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WspErrorCode {
    /// A standard JSON-RPC code (`-32700`, `-32600`, `-32601`, `-32602`, `-32603`, and the
    /// implementation-defined `-32000`..`-32099` range).
    JsonRpc(JsonRpcCode),
    /// `-32002`: a request before `initialize` succeeded (as in LSP).
    ServerNotInitialized,
    /// `-32800`: the client cancelled the request (as in LSP).
    RequestCancelled,
    /// `-31001`: no environment has that id.
    EnvironmentNotFound,
    /// `-31002`: a live environment already has that name.
    NameConflict,
    /// `-31003`: no interpreter satisfies the requested Python version.
    PythonVersionUnavailable,
    /// `-31004`: provisioning, deletion or a command failed for a non-protocol reason.
    ExecutionFailed,
    /// Any other code (a custom server's own).
    Other(i32),
}

impl WspErrorCode {
    /// The code on the wire.
    pub fn code(self) -> i32 {
        match self {
            WspErrorCode::JsonRpc(code) => code.code(),
            WspErrorCode::ServerNotInitialized => error::SERVER_NOT_INITIALIZED,
            WspErrorCode::RequestCancelled => error::REQUEST_CANCELLED,
            WspErrorCode::EnvironmentNotFound => error::ENVIRONMENT_NOT_FOUND,
            WspErrorCode::NameConflict => error::ENVIRONMENT_NAME_CONFLICT,
            WspErrorCode::PythonVersionUnavailable => error::PYTHON_VERSION_UNAVAILABLE,
            WspErrorCode::ExecutionFailed => error::EXECUTION_FAILED,
            WspErrorCode::Other(code) => code,
        }
    }

    /// The code a number names.
    pub fn from_code(code: i32) -> Self {
        match code {
            error::SERVER_NOT_INITIALIZED => WspErrorCode::ServerNotInitialized,
            error::REQUEST_CANCELLED => WspErrorCode::RequestCancelled,
            error::ENVIRONMENT_NOT_FOUND => WspErrorCode::EnvironmentNotFound,
            error::ENVIRONMENT_NAME_CONFLICT => WspErrorCode::NameConflict,
            error::PYTHON_VERSION_UNAVAILABLE => WspErrorCode::PythonVersionUnavailable,
            error::EXECUTION_FAILED => WspErrorCode::ExecutionFailed,
            -32768..=-32000 => WspErrorCode::JsonRpc(JsonRpcCode::from(code)),
            other => WspErrorCode::Other(other),
        }
    }

    /// The short message WSP answers with for this code.
    pub fn message(self) -> &'static str {
        match self {
            WspErrorCode::JsonRpc(JsonRpcCode::ParseError) => "Parse error",
            WspErrorCode::JsonRpc(JsonRpcCode::InvalidRequest) => "Invalid request",
            WspErrorCode::JsonRpc(JsonRpcCode::MethodNotFound) => "Method not found",
            WspErrorCode::JsonRpc(JsonRpcCode::InvalidParams) => "Invalid params",
            WspErrorCode::JsonRpc(JsonRpcCode::InternalError) => "Internal error",
            WspErrorCode::JsonRpc(_) => "Server error",
            WspErrorCode::ServerNotInitialized => "Server not initialized",
            WspErrorCode::RequestCancelled => "Request cancelled",
            WspErrorCode::EnvironmentNotFound => "Environment not found",
            WspErrorCode::NameConflict => "Environment name conflict",
            WspErrorCode::PythonVersionUnavailable => "Python version unavailable",
            WspErrorCode::ExecutionFailed => "Execution failed",
            WspErrorCode::Other(_) => "Error",
        }
    }

    /// Every code WSP itself answers with, in ascending order.
    pub const ALL: [WspErrorCode; 11] = [
        WspErrorCode::JsonRpc(JsonRpcCode::ParseError),
        WspErrorCode::JsonRpc(JsonRpcCode::InvalidRequest),
        WspErrorCode::JsonRpc(JsonRpcCode::MethodNotFound),
        WspErrorCode::JsonRpc(JsonRpcCode::InvalidParams),
        WspErrorCode::JsonRpc(JsonRpcCode::InternalError),
        WspErrorCode::ServerNotInitialized,
        WspErrorCode::RequestCancelled,
        WspErrorCode::EnvironmentNotFound,
        WspErrorCode::NameConflict,
        WspErrorCode::PythonVersionUnavailable,
        WspErrorCode::ExecutionFailed,
    ];
}

impl From<WspErrorCode> for i32 {
    fn from(code: WspErrorCode) -> i32 {
        code.code()
    }
}

impl From<i32> for WspErrorCode {
    fn from(code: i32) -> Self {
        WspErrorCode::from_code(code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips_through_its_number() {
        for code in WspErrorCode::ALL {
            assert_eq!(WspErrorCode::from_code(code.code()), code, "{code:?}");
        }
        for number in [-32099, -32000, -32768, 1, -1, -31000, i32::MIN] {
            assert_eq!(WspErrorCode::from_code(number).code(), number);
        }
    }

    #[test]
    fn the_codes_are_the_constants() {
        let numbers: Vec<i32> = WspErrorCode::ALL.iter().map(|c| c.code()).collect();
        assert_eq!(
            numbers,
            [
                -32700, -32600, -32601, -32602, -32603, -32002, -32800, -31001, -31002, -31003,
                -31004
            ]
        );
    }
}
