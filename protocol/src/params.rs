//! Params of the WSP methods, each validated with every violated rule listed.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::python_version::VersionRequest;
use crate::validation::{ParamReader, Params, Violation};

/// Params of a method that takes none: absent, `null`, `{}` or `[]`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoParams;

impl Params for NoParams {
    fn from_params(params: Option<&Value>) -> Result<Self, Vec<Violation>> {
        ParamReader::new(params, true).finish(|| Some(NoParams))
    }

    fn schema() -> Value {
        json!({"type": ["object", "array", "null"], "maxItems": 0})
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

    fn schema() -> Value {
        object_schema(&[
            ("client_name", string_schema(1, Some(255)), true),
            ("client_protocol_version", string_schema(1, Some(64)), true),
        ])
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
}

impl Params for CreateParams {
    fn from_params(params: Option<&Value>) -> Result<Self, Vec<Violation>> {
        let mut reader = ParamReader::new(params, false);
        let name = reader.string("name", 1, Some(64));
        let python_version = reader.string("python_version", 1, None);
        let version_request = python_version.as_deref().and_then(|v| match v.parse() {
            Ok(request) => Some(request),
            Err(message) => {
                if !v.is_empty() {
                    reader.violate("python_version", "format", message);
                }
                None
            }
        });
        reader.finish(|| {
            Some(CreateParams {
                name: name?,
                python_version: python_version?,
                version_request: version_request?,
            })
        })
    }

    fn schema() -> Value {
        object_schema(&[
            ("name", string_schema(1, Some(64)), true),
            (
                "python_version",
                json!({"type": "string", "pattern": "^[0-9]+\\.[0-9]+(\\.[0-9]+)?$"}),
                true,
            ),
        ])
    }
}

/// `environment/get` and `environment/delete` params.
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

    fn schema() -> Value {
        object_schema(&[("id", string_schema(1, Some(MAX_ID_LENGTH)), true)])
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
    /// The most bytes of each stream kept (at least 1); `None`: the server's default.
    pub max_output_bytes: Option<u64>,
    /// Whether output is also sent, as it arrives, in `environment/output` notifications.
    pub stream: bool,
    /// Resource limits for the child.
    pub limits: ExecuteLimits,
}

/// `environment/execute`'s `limits`: each one, when set, is at least 1 and becomes the
/// child's soft and hard rlimit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExecuteLimits {
    /// Address space, in bytes (`RLIMIT_AS`).
    pub memory_bytes: Option<u64>,
    /// CPU time, in seconds (`RLIMIT_CPU`).
    pub cpu_seconds: Option<u64>,
    /// Processes of the user (`RLIMIT_NPROC`).
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
        let Some(object) = reader.optional_object("limits") else {
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
            })
        })
    }

    fn schema() -> Value {
        let positive = json!({"type": "integer", "minimum": 1});
        let limits: serde_json::Map<String, Value> = ExecuteLimits::FIELDS
            .iter()
            .map(|field| ((*field).to_owned(), positive.clone()))
            .collect();
        object_schema(&[
            ("id", string_schema(1, None), true),
            (
                "argv",
                json!({"type": "array", "items": {"type": "string"}, "minItems": 1}),
                true,
            ),
            (
                "cwd",
                json!({"type": ["string", "null"], "minLength": 1, "pattern": "^/"}),
                false,
            ),
            (
                "env",
                json!({
                    "type": ["object", "null"],
                    "propertyNames": {"minLength": 1, "pattern": "^[^=\\u0000]*$"},
                    "additionalProperties": {"type": "string", "pattern": "^[^\\u0000]*$"},
                }),
                false,
            ),
            ("stdin", json!({"type": ["string", "null"]}), false),
            (
                "timeout_ms",
                json!({"type": ["integer", "null"], "minimum": 1, "maximum": MAX_TIMEOUT_MS}),
                false,
            ),
            (
                "max_output_bytes",
                json!({"type": ["integer", "null"], "minimum": 1}),
                false,
            ),
            ("stream", json!({"type": ["boolean", "null"]}), false),
            (
                "limits",
                json!({
                    "type": ["object", "null"],
                    "properties": limits,
                    "additionalProperties": false,
                }),
                false,
            ),
        ])
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

fn string_schema(min: usize, max: Option<usize>) -> Value {
    let mut schema = json!({"type": "string", "minLength": min});
    if let (Some(max), Value::Object(map)) = (max, &mut schema) {
        map.insert("maxLength".into(), max.into());
    }
    schema
}

fn object_schema(fields: &[(&str, Value, bool)]) -> Value {
    let properties: serde_json::Map<String, Value> = fields
        .iter()
        .map(|(name, schema, _)| ((*name).to_owned(), schema.clone()))
        .collect();
    let required: Vec<&str> = fields.iter().filter(|f| f.2).map(|f| f.0).collect();
    json!({"type": "object", "properties": properties, "required": required})
}
