//! Wire types of WSP: JSON-RPC messages, WSP params and results, error codes and validation.
//!
//! This crate is the leaf of the workspace: servers, clients, layers and backends all speak in
//! its types, and it depends on nothing of theirs.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod declare;
pub mod error;
pub mod error_chain;
pub mod error_code;
pub mod failure;
pub mod fields;
pub mod id;
pub mod interactive;
pub mod lock;
pub mod message;
pub mod method;
pub mod packages;
pub mod params;
pub mod progress;
pub mod python_version;
pub mod results;
pub mod schema;
pub mod validation;

pub use error::ErrorObjectOwned;
pub use error_code::WspErrorCode;
pub use failure::FailureReason;
pub use id::Id;
pub use lock::{Lock, LockFormat};
pub use message::{
    parse_payload, Incoming, Notification, Payload, Request, Response, WideIntegers,
};
pub use params::{
    CreateParams, ExecuteParams, GcParams, IdParams, InitializeParams, InstallParams, NoParams,
    UninstallParams,
};
pub use progress::{ProgressParams, ProgressToken, WorkDoneProgress};
pub use python_version::{PythonVersion, VersionRequest};
pub use results::{
    Capabilities, DeleteAck, EnvironmentDetails, EnvironmentSummary, ExecuteResult, GcResult,
    Interpreter, Interpreters, Package, SchemaInfo, ServerInfo,
};
pub use validation::{ParamReader, Params, Violation};

/// What [`params!`] and [`method!`] expand to name, so that a crate using them needs no
/// dependency of its own.
#[doc(hidden)]
pub mod __private {
    pub use schemars;
    pub use serde;
    pub use serde_json;
    pub use serde_json::Value;
}

/// The WSP protocol version this crate describes.
pub const PROTOCOL_VERSION: &str = "0.1.0";

/// The method and notification names WSP defines: the one constant of each.
pub mod methods {
    /// `initialize`.
    pub const INITIALIZE: &str = "initialize";
    /// `shutdown`.
    pub const SHUTDOWN: &str = "shutdown";
    /// The `exit` notification.
    pub const EXIT: &str = "exit";
    /// `environment/list`.
    pub const LIST: &str = "environment/list";
    /// `environment/create`.
    pub const CREATE: &str = "environment/create";
    /// `environment/get`.
    pub const GET: &str = "environment/get";
    /// `environment/delete`.
    pub const DELETE: &str = "environment/delete";
    /// `environment/execute`.
    pub const EXECUTE: &str = "environment/execute";
    /// `environment/install` (an extension beyond WSP 0.1.0).
    pub const INSTALL: &str = "environment/install";
    /// `environment/uninstall` (an extension beyond WSP 0.1.0).
    pub const UNINSTALL: &str = "environment/uninstall";
    /// `environment/lock` (an extension beyond WSP 0.1.0, feature `environment.lock`).
    pub const LOCK: &str = "environment/lock";
    /// The `$/progress` notification (server to client).
    pub const PROGRESS: &str = "$/progress";
    /// The `environment/output` notification (server to client).
    pub const OUTPUT: &str = "environment/output";
    /// The `environment/changed` notification (server to client; servers that listen for
    /// many clients only).
    pub const CHANGED: &str = "environment/changed";
    /// The `environment/input` notification (client to server): text for the stdin of an
    /// `environment/execute` with `stdin_stream: true` or a `pty`.
    pub const INPUT: &str = "environment/input";
    /// The `environment/resize` notification (client to server): the new size of an
    /// `environment/execute`'s `pty`.
    pub const RESIZE: &str = "environment/resize";
    /// `environment/gc` (feature `environment.lock`).
    pub const GC: &str = "environment/gc";
    /// `interpreter/list` (an extension beyond WSP 0.1.0, feature `interpreter.list`).
    pub const INTERPRETER_LIST: &str = "interpreter/list";
    /// The `$/cancelRequest` notification (client to server).
    pub const CANCEL_REQUEST: &str = "$/cancelRequest";
}
