//! Results of the WSP methods.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An installed distribution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Package {
    /// The name as the distribution's metadata spells it.
    pub name: String,
    /// The version as the distribution's metadata spells it.
    pub version: String,
}

/// The result of `environment/execute`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ExecuteResult {
    /// The exit status; `-N` for a child killed by signal `N` (`-9` after a timeout).
    pub exit_code: i64,
    /// Captured stdout, decoded as UTF-8 with replacement characters.
    pub stdout: String,
    /// Captured stderr, decoded as UTF-8 with replacement characters.
    pub stderr: String,
    /// Wall-clock milliseconds from the spawn until the command's output was collected.
    #[serde(default)]
    pub duration_ms: u64,
    /// Whether `timeout_ms` expired and the command was killed.
    #[serde(default)]
    pub timed_out: bool,
    /// Whether stdout went past `max_output_bytes` (the rest was read and discarded).
    #[serde(default)]
    pub stdout_truncated: bool,
    /// Whether stderr went past `max_output_bytes` (the rest was read and discarded).
    #[serde(default)]
    pub stderr_truncated: bool,
}

/// One of a command's output streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OutputStream {
    /// The command's standard output.
    Stdout,
    /// The command's standard error.
    Stderr,
}

/// Params of the `environment/output` notification: output of a running
/// `environment/execute` that asked for `stream: true`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OutputParams {
    /// The id of the `environment/execute` request the output belongs to.
    pub request_id: crate::Id,
    /// Which stream it came from.
    pub stream: OutputStream,
    /// The output, decoded as UTF-8 with replacement; never ends inside a UTF-8 sequence.
    pub data: String,
}

/// What changed about an environment, in `environment/changed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EnvironmentChange {
    /// It was created.
    Created,
    /// It was deleted.
    Deleted,
    /// Its installed packages changed (an install or an uninstall).
    Packages,
}

/// Params of the `environment/changed` notification: an environment changed, through this
/// server or another one on the same state directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ChangedParams {
    /// The environment's id.
    pub id: String,
    /// What changed.
    pub change: EnvironmentChange,
}

/// Who the server is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ServerInfo {
    /// The server's name.
    pub name: String,
    /// The server's version.
    pub version: String,
}

/// Which params schema the server speaks, and a stable hash of its methods and their params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SchemaInfo {
    /// The protocol version the schema belongs to.
    pub version: String,
    /// A stable hash of the bound methods and their param schemas (hex SHA-256).
    pub fingerprint: String,
}

/// The `initialize` result.
///
/// `methods` and `protocol_version` are the ones the methods document requires; the rest are
/// additive connect-time facts a client may use and must tolerate missing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Capabilities {
    /// Every request method bound on the server, sorted ascending, each once.
    pub methods: Vec<String>,
    /// `"0.1.0"`.
    pub protocol_version: String,
    /// The server's name and version.
    pub server_info: ServerInfo,
    /// `unix` or `windows`.
    pub platform_family: String,
    /// `linux`, `macos`, `windows`, …
    pub platform_os: String,
    /// The state directory (absolute).
    pub wsp_home: String,
    /// `durable` when environments outlive the server process, else `ephemeral`.
    pub session_durability: String,
    /// Whether the server can sandbox commands: `available` or `unavailable`.
    pub sandbox_availability: String,
    /// Why sandboxing is unavailable; sent only when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_unavailable_reason: Option<String>,
    /// How `environment/execute`'s `limits.processes` is enforced: `cgroup` (`pids.max` of a
    /// cgroup of the command's own: it binds root, and counts the command's tasks only),
    /// `rlimit` (`RLIMIT_NPROC`: it counts every process of the server's user, and does not
    /// bind root) or `unavailable` (a request that sets it is refused, `-31004` with reason
    /// `limit-unavailable`). Absent from a server that runs no commands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_limit: Option<String>,
    /// Schema version and fingerprint.
    pub schema: SchemaInfo,
    /// The backend new environments get unless their create names one (`venv`, `uv`,
    /// `conda`, …).
    pub backend: String,
    /// Every backend this server can serve environments with, the default among them, sorted
    /// (an extension beyond WSP 0.1.0: `environment/create` takes one as `backend`, feature
    /// `create.backend`). Each environment is served by the backend that made it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backends: Option<Vec<String>>,
    /// Directories besides an environment's root where an unsandboxed `environment/execute`
    /// may run (`cwd` inside one of them; `wsp serve --allow-cwd`); empty by default.
    #[serde(default)]
    pub allowed_cwd_roots: Vec<String>,
    /// The extensions beyond WSP 0.1.0 this server supports, sorted ascending, each once:
    /// among `environment/install`, `execute.stream`, `execute.stdin`, `execute.timeout`,
    /// `execute.limits`, `execute.sandbox`, `progress`, `environment.changed`,
    /// `create.backend`, `environment.lock` and `interpreter.list`.
    #[serde(default)]
    pub features: Vec<String>,
    /// How this client is connected: `stdio`, `unix` or `websocket` (an extension beyond WSP
    /// 0.1.0; absent on a connection of another kind, an in-memory one say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<TransportName>,
}

/// How a client is connected, in `initialize`'s `transport`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TransportName {
    /// This process's stdin and stdout.
    Stdio,
    /// A Unix domain socket.
    Unix,
    /// A WebSocket.
    Websocket,
}

/// An environment as `environment/list` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EnvironmentSummary {
    /// `env-` and 12 lowercase hex digits.
    pub id: String,
    /// The name given at creation.
    pub name: String,
    /// The version as the client asked for it.
    pub python_version: String,
}

/// An environment in full, as `environment/create` and `environment/get` return it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EnvironmentDetails {
    /// `env-` and 12 lowercase hex digits.
    pub id: String,
    /// The name given at creation.
    pub name: String,
    /// The version as the client asked for it.
    pub python_version: String,
    /// The environment's own interpreter: absolute, inside the environment.
    pub interpreter_path: String,
    /// Installed distributions, sorted by normalized name.
    pub installed_packages: Vec<Package>,
    /// At least `backend`, `path` and `python_full_version`.
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// The `environment/gc` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GcResult {
    /// The environments deleted, in the order they were deleted (least recently used first).
    pub deleted: Vec<String>,
    /// What the store's environments hold afterwards, in bytes (each `extra.disk_bytes`,
    /// summed).
    pub disk_bytes: u64,
}

/// The `interpreter/list` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Interpreters {
    /// The interpreters the server's machine has, newest first; among equal versions the one
    /// `environment/create` prefers first.
    pub interpreters: Vec<Interpreter>,
}

/// A Python interpreter on the server's machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Interpreter {
    /// `X.Y.Z`.
    pub version: String,
    /// Where it was found: `pyenv`, `uv`, `mise`, `asdf`, `configured`, `system`, `PATH`, or
    /// a custom locator's name.
    pub source: String,
    /// The executable as found (it may be a symlink).
    pub path: String,
}

/// The `environment/delete` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DeleteAck {
    /// The deleted environment's id.
    pub id: String,
}
