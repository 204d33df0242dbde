//! Params of the WSP methods, each validated with every violated rule listed.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::message::{Request, WideIntegers};
pub use crate::packages::{InstallParams, PackageSource, UninstallParams};
use crate::progress::ProgressToken;
use crate::python_version::VersionRequest;
use crate::validation::{ParamReader, Params, Violation};

/// Params of a method that takes none: absent, `null`, `{}` or `[]`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoParams;

impl Params for NoParams {
    fn from_params(params: Option<&Value>) -> Result<Self, Vec<Violation>> {
        ParamReader::new(params, true).finish(|| Some(NoParams))
    }
}

/// `initialize` params.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitializeParams {
    /// The client's name, 1–255 characters.
    pub client_name: String,
    /// The protocol version the client speaks, 1–64 characters.
    pub client_protocol_version: String,
}

impl Params for InitializeParams {
    fn from_params(params: Option<&Value>) -> Result<Self, Vec<Violation>> {
        let mut reader = ParamReader::new(params, false);
        let client_name = reader.string("client_name", 1, Some(255));
        let client_protocol_version = reader.string("client_protocol_version", 1, Some(64));
        reader.finish(|| {
            Some(InitializeParams {
                client_name: client_name?,
                client_protocol_version: client_protocol_version?,
            })
        })
    }
}

/// `environment/create` params.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateParams {
    /// The new environment's name, 1–64 characters.
    pub name: String,
    /// The version as the client wrote it.
    pub python_version: String,
    /// The same, parsed.
    pub version_request: VersionRequest,
    /// Packages to install before the environment is committed (empty: none), as
    /// `environment/install` takes them.
    pub packages: Vec<String>,
    /// Where to look for them.
    pub source: PackageSource,
    /// The token `$/progress` notifications name.
    pub work_done_token: Option<ProgressToken>,
}

impl Params for CreateParams {
    fn from_params(params: Option<&Value>) -> Result<Self, Vec<Violation>> {
        CreateParams::read(params, &WideIntegers::default())
    }

    fn from_request(request: &Request) -> Result<Self, Vec<Violation>> {
        CreateParams::read(request.params.as_ref(), &request.wide_integers)
    }
}

impl CreateParams {
    fn read(params: Option<&Value>, wide: &WideIntegers) -> Result<Self, Vec<Violation>> {
        let mut reader = ParamReader::new(params, false);
        let name = reader.string("name", 1, Some(64));
        let python_version = reader.string("python_version", 1, None);
        reader.constrain(
            "python_version",
            json!({"pattern": "^[0-9]+\\.[0-9]+(\\.[0-9]+)?$"}),
        );
        let version_request = python_version.as_deref().and_then(|v| match v.parse() {
            Ok(request) => Some(request),
            Err(message) => {
                if !v.is_empty() {
                    reader.violate("python_version", "format", message);
                }
                None
            }
        });
        let packages = crate::packages::read_packages(&mut reader, false).unwrap_or_default();
        let source = PackageSource::read(&mut reader);
        let work_done_token = crate::packages::read_work_done_token(&mut reader, wide);
        reader.finish(|| {
            Some(CreateParams {
                name: name?,
                python_version: python_version?,
                version_request: version_request?,
                packages,
                source,
                work_done_token,
            })
        })
    }
}

/// `environment/get` params: an id of 1–[`MAX_ID_LENGTH`] characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdParams {
    /// The environment's id.
    pub id: String,
}

/// Longest id `environment/get` accepts.
pub const MAX_ID_LENGTH: usize = 128;

impl Params for IdParams {
    fn from_params(params: Option<&Value>) -> Result<Self, Vec<Violation>> {
        let mut reader = ParamReader::new(params, false);
        let id = reader.string("id", 1, Some(MAX_ID_LENGTH));
        reader.finish(|| Some(IdParams { id: id? }))
    }
}

/// `environment/delete` params: an id that is any string (the methods document gives delete no
/// length rule), so an id that names nothing, whatever its length, is `-31001`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeleteParams {
    /// The environment's id.
    pub id: String,
}

impl Params for DeleteParams {
    fn from_params(params: Option<&Value>) -> Result<Self, Vec<Violation>> {
        let mut reader = ParamReader::new(params, false);
        let id = reader.string("id", 0, None);
        reader.finish(|| Some(DeleteParams { id: id? }))
    }
}

/// Longest `timeout_ms` an `environment/execute` accepts: 24 hours.
pub const MAX_TIMEOUT_MS: u64 = 86_400_000;

/// `environment/execute` params.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecuteParams {
    /// The environment's id.
    pub id: String,
    /// The command and its arguments; never empty.
    pub argv: Vec<String>,
    /// The working directory; `None` means the environment's root.
    pub cwd: Option<String>,
    /// Variables set on top of the environment's activation.
    pub env: BTreeMap<String, String>,
    /// Written to the child's stdin, which is then closed; `None`: stdin is the null device.
    pub stdin: Option<String>,
    /// Milliseconds, 1–[`MAX_TIMEOUT_MS`], after which the command is killed.
    pub timeout_ms: Option<u64>,
    /// The most bytes each stream takes in the result, encoded as a JSON string (at least 1);
    /// `None`: the server's default.
    pub max_output_bytes: Option<u64>,
    /// Whether output is also sent, as it arrives, in `environment/output` notifications.
    pub stream: bool,
    /// Resource limits for the child.
    pub limits: ExecuteLimits,
    /// Whether the command runs sandboxed; `None`: the server's default (false, or true under
    /// `wsp serve --sandbox`). An explicit `false` runs it unsandboxed under either.
    pub sandbox: Option<bool>,
}

/// `environment/execute`'s `limits`: each one, when set, is at least 1; the first, second and
/// last become the child's soft and hard rlimits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExecuteLimits {
    /// Address space, in bytes (`RLIMIT_AS`).
    pub memory_bytes: Option<u64>,
    /// CPU time, in seconds (`RLIMIT_CPU`).
    pub cpu_seconds: Option<u64>,
    /// Tasks of the command: `pids.max` of a cgroup of its own, or where there is none,
    /// `RLIMIT_NPROC` (which counts the user's processes); see `initialize`'s `process_limit`.
    pub processes: Option<u64>,
    /// Open file descriptors (`RLIMIT_NOFILE`).
    pub open_files: Option<u64>,
}

impl ExecuteLimits {
    /// The field names `limits` takes.
    pub const FIELDS: [&'static str; 4] =
        ["memory_bytes", "cpu_seconds", "processes", "open_files"];

    /// Reads `limits`; violations come in [`Self::FIELDS`] order, then unknown fields sorted
    /// by name, whatever order the object had.
    fn read(reader: &mut ParamReader<'_>) -> Self {
        let limit = json!({"type": ["integer", "null"], "minimum": 1, "maximum": u64::MAX});
        let properties: serde_json::Map<String, Value> = Self::FIELDS
            .iter()
            .map(|name| ((*name).to_owned(), limit.clone()))
            .collect();
        let object = reader.optional_object("limits");
        reader.constrain(
            "limits",
            json!({"properties": properties, "additionalProperties": false}),
        );
        let Some(object) = object else {
            return ExecuteLimits::default();
        };
        let mut read = |name: &str| {
            let value = object.get(name).filter(|value| !value.is_null())?;
            reader.check_integer(&format!("limits.{name}"), value, 1, u64::MAX)
        };
        let limits = ExecuteLimits {
            memory_bytes: read("memory_bytes"),
            cpu_seconds: read("cpu_seconds"),
            processes: read("processes"),
            open_files: read("open_files"),
        };
        let mut unknown: Vec<&String> = object
            .keys()
            .filter(|key| !Self::FIELDS.contains(&key.as_str()))
            .collect();
        unknown.sort();
        for key in unknown {
            let known = Self::FIELDS.join(", ");
            let message = format!("`limits.{key}` is not a limit wsp knows ({known})");
            reader.violate(&format!("limits.{key}"), "unknown_field", message);
        }
        limits
    }
}

impl Params for ExecuteParams {
    fn from_params(params: Option<&Value>) -> Result<Self, Vec<Violation>> {
        let mut reader = ParamReader::new(params, false);
        let id = reader.string("id", 1, None);
        let argv = reader.string_array("argv", 1);
        let cwd = reader.optional_string("cwd", 1, None);
        reader.constrain("cwd", json!({"pattern": "^/"}));
        if let Some(cwd) = &cwd {
            if !cwd.starts_with('/') {
                reader.violate(
                    "cwd",
                    "absolute",
                    format!("`cwd` must be an absolute path, got {cwd:?}"),
                );
            }
        }
        let env = reader.optional_string_map("env").unwrap_or_default();
        reader.constrain(
            "env",
            json!({
                "propertyNames": {"minLength": 1, "pattern": "^[^=\u{0}]*$"},
                "additionalProperties": {"type": "string", "pattern": "^[^\u{0}]*$"},
            }),
        );
        for (key, value) in &env {
            if let Err(message) = check_env_key(key) {
                reader.violate(&format!("env.{key}"), "env_key", message);
            }
            if let Err(message) = check_env_value(key, value) {
                reader.violate(&format!("env.{key}"), "env_value", message);
            }
        }
        let stdin = reader.optional_string("stdin", 0, None);
        let timeout_ms = reader.optional_integer("timeout_ms", 1, MAX_TIMEOUT_MS);
        let max_output_bytes = reader.optional_integer("max_output_bytes", 1, u64::MAX);
        let stream = reader.optional_bool("stream").unwrap_or(false);
        let limits = ExecuteLimits::read(&mut reader);
        let sandbox = reader.optional_bool("sandbox");
        reader.finish(|| {
            Some(ExecuteParams {
                id: id?,
                argv: argv?,
                cwd,
                env: env.into_iter().collect(),
                stdin,
                timeout_ms,
                max_output_bytes,
                stream,
                limits,
                sandbox,
            })
        })
    }
}

/// An environment variable name the child can be given: non-empty, without `=` or NUL.
pub fn check_env_key(key: &str) -> Result<(), String> {
    if key.is_empty() {
        Err("environment variable names must not be empty".to_owned())
    } else if key.contains('=') {
        Err(format!("environment variable name {key:?} contains `=`"))
    } else if key.contains('\0') {
        Err(format!("environment variable name {key:?} contains NUL"))
    } else {
        Ok(())
    }
}

/// An environment variable value the child can be given: no NUL, which no process
/// environment can hold.
pub fn check_env_value(key: &str, value: &str) -> Result<(), String> {
    if value.contains('\0') {
        Err(format!("the value of {key:?} contains NUL"))
    } else {
        Ok(())
    }
}
