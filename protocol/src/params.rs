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
        reader.finish(|| {
            Some(ExecuteParams {
                id: id?,
                argv: argv?,
                cwd,
                env: env.into_iter().collect(),
            })
        })
    }

    fn schema() -> Value {
        object_schema(&[
            ("id", string_schema(1, None), true),
            (
                "argv",
                json!({"type": "array", "items": {"type": "string"}, "minItems": 1}),
                true,
            ),
            ("cwd", json!({"type": ["string", "null"]}), false),
            (
                "env",
                json!({"type": ["object", "null"], "additionalProperties": {"type": "string"}}),
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
