//! Params of the WSP methods, each validated with every violated rule listed.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{json, Value};

use crate::fields::{
    bool_or_false, integer, optional_bool, optional_integer, optional_string, string, string_array,
    Field, ObjectSchema,
};
use crate::packages::{packages, Source, WorkDoneToken};
pub use crate::packages::{InstallParams, PackageSource, UninstallParams};
use crate::progress::ProgressToken;
use crate::python_version::VersionRequest;
use crate::validation::{ParamReader, Params, Violation};

/// Params of a method that takes none: absent, `null`, `{}` or `[]`; serialized as `null`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct NoParams;

impl<'de> Deserialize<'de> for NoParams {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        NoParams::from_params(Some(&value)).map_err(|violations| {
            serde::de::Error::custom(crate::validation::violations_message(&violations))
        })
    }
}

impl Params for NoParams {
    fn from_params(params: Option<&Value>) -> Result<Self, Vec<Violation>> {
        ParamReader::new(params, true).finish(|| Some(NoParams))
    }

    fn schema() -> Value {
        ObjectSchema::no_params()
    }
}

crate::params! {
    /// `initialize` params.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize)]
    pub struct InitializeParams {
        /// The client's name, 1–255 characters.
        pub client_name: String = string(1, Some(255)),
        /// The protocol version the client speaks, 1–64 characters.
        pub client_protocol_version: String = string(1, Some(64)),
    }
}

crate::params! {
    /// `environment/create` params.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize)]
    pub struct CreateParams {
        /// The new environment's name, 1–64 characters.
        pub name: String = string(1, Some(64)),
        /// The version as the client wrote it.
        pub python_version: String = string(1, None)
            .pattern("^[0-9]+\\.[0-9]+(\\.[0-9]+)?$")
            .check(check_python_version),
        /// Packages to install before the environment is committed (empty: none), as
        /// `environment/install` takes them.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        pub packages: Vec<String> = packages(false),
        /// Where to look for them.
        #[serde(flatten)]
        pub source: PackageSource = Source,
        /// The token `$/progress` notifications name.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub work_done_token: Option<ProgressToken> = WorkDoneToken,
        /// The backend that makes and then serves the environment (`venv`, `uv`, `conda`,
        /// ...); `None`: the server's default (`initialize` lists them in `backends`).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub backend: Option<String> = optional_string(1, Some(64)).pattern("^[a-z][a-z0-9-]*$"),
        /// What to install instead of `packages`: exactly what the lock names (feature
        /// `environment.lock`).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub lock: Option<crate::lock::Lock> = crate::lock::LockRule,
        /// Answer with a live environment of the same content (backend, resolved interpreter,
        /// packages and sources) made with `reuse` too, if there is one, instead of building
        /// another (feature `environment.lock`).
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        pub reuse: bool = bool_or_false(),
    }
    derived {
        /// The version, parsed.
        #[serde(skip)]
        pub version_request: VersionRequest =
            python_version.as_deref().and_then(|text| text.parse().ok()),
    }
}

fn check_python_version(text: &str) -> Result<(), (&'static str, String)> {
    match text.parse::<VersionRequest>() {
        Err(message) if !text.is_empty() => Err(("format", message)),
        _ => Ok(()),
    }
}

crate::params! {
    /// `environment/get` params: an id of 1–[`MAX_ID_LENGTH`] characters.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize)]
    pub struct IdParams {
        /// The environment's id.
        pub id: String = string(1, Some(MAX_ID_LENGTH)),
    }
}

/// Longest id `environment/get` accepts.
pub const MAX_ID_LENGTH: usize = 128;

crate::params! {
    /// `environment/delete` params: an id that is any string (the methods document gives delete
    /// no length rule), so an id that names nothing, whatever its length, is `-31001`.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize)]
    pub struct DeleteParams {
        /// The environment's id.
        pub id: String = string(0, None),
    }
}

/// Longest `timeout_ms` an `environment/execute` accepts: 24 hours.
pub const MAX_TIMEOUT_MS: u64 = 86_400_000;

crate::params! {
    /// `environment/execute` params.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize)]
    pub struct ExecuteParams {
        /// The environment's id.
        pub id: String = string(1, None),
        /// The command and its arguments; never empty.
        pub argv: Vec<String> = string_array(1),
        /// The working directory; `None` means the environment's root.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub cwd: Option<String> = optional_string(1, None).pattern("^/").check(check_cwd),
        /// Variables set on top of the environment's activation.
        #[serde(skip_serializing_if = "BTreeMap::is_empty")]
        pub env: BTreeMap<String, String> = EnvVars,
        /// Written to the child's stdin, which is then closed; `None`: stdin is the null device.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub stdin: Option<String> = optional_string(0, None),
        /// Milliseconds, 1–[`MAX_TIMEOUT_MS`], after which the command is killed.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub timeout_ms: Option<u64> = optional_integer(1, MAX_TIMEOUT_MS),
        /// The most bytes each stream takes in the result, encoded as a JSON string (at least
        /// 1); `None`: the server's default.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub max_output_bytes: Option<u64> = optional_integer(1, u64::MAX),
        /// Whether output is also sent, as it arrives, in `environment/output` notifications.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        pub stream: bool = bool_or_false(),
        /// Resource limits for the child.
        #[serde(skip_serializing_if = "ExecuteLimits::is_unset")]
        pub limits: ExecuteLimits = Limits,
        /// Whether the command runs sandboxed; `None`: the server's default (false, or true
        /// under `wsp serve --sandbox`). An explicit `false` runs it unsandboxed under either.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub sandbox: Option<bool> = optional_bool(),
        /// The command starts at once with a pipe for stdin, fed by `environment/input`
        /// notifications naming this request (not with `stdin`).
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        pub stdin_stream: bool = bool_or_false(),
        /// The command runs on a pseudo-terminal of this size (implies `stream` and
        /// `stdin_stream`); `environment/resize` changes the size.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub pty: Option<crate::interactive::PtySize> = crate::interactive::PtyRule,
    }
}

fn check_cwd(cwd: &str) -> Result<(), (&'static str, String)> {
    if cwd.starts_with('/') {
        Ok(())
    } else {
        let message = format!("`cwd` must be an absolute path, got {cwd:?}");
        Err(("absolute", message))
    }
}

/// The rule of `environment/execute`'s `env`: an optional object of strings, each name
/// non-empty without `=` or NUL, each value without NUL.
#[derive(Debug, Clone, Copy)]
pub struct EnvVars;

impl Field for EnvVars {
    type Value = BTreeMap<String, String>;

    fn describe(&self, name: &'static str, schema: &mut ObjectSchema) {
        let env = json!({
            "type": ["object", "null"],
            "additionalProperties": {"type": "string", "pattern": "^[^\u{0}]*$"},
            "propertyNames": {"minLength": 1, "pattern": "^[^=\u{0}]*$"},
        });
        schema.property(name, false, env);
    }

    fn read(&self, reader: &mut ParamReader<'_>, name: &'static str) -> Option<Self::Value> {
        let env = reader.optional_string_map(name).unwrap_or_default();
        for (key, value) in &env {
            if let Err(message) = check_env_key(key) {
                reader.violate(&format!("{name}.{key}"), "env_key", message);
            }
            if let Err(message) = check_env_value(key, value) {
                reader.violate(&format!("{name}.{key}"), "env_value", message);
            }
        }
        Some(env.into_iter().collect())
    }
}

/// `environment/execute`'s `limits`: each one, when set, is at least 1; the first, second and
/// last become the child's soft and hard rlimits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ExecuteLimits {
    /// Address space, in bytes (`RLIMIT_AS`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// CPU time, in seconds (`RLIMIT_CPU`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_seconds: Option<u64>,
    /// Tasks of the command: `pids.max` of a cgroup of its own, or where there is none,
    /// `RLIMIT_NPROC` (which counts the user's processes); see `initialize`'s `process_limit`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub processes: Option<u64>,
    /// Open file descriptors (`RLIMIT_NOFILE`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_files: Option<u64>,
}

impl ExecuteLimits {
    /// The field names `limits` takes.
    pub const FIELDS: [&'static str; 4] =
        ["memory_bytes", "cpu_seconds", "processes", "open_files"];

    /// Whether no limit is set.
    pub fn is_unset(&self) -> bool {
        *self == ExecuteLimits::default()
    }
}

/// The rule of `environment/execute`'s `limits`: an optional object of the
/// [`ExecuteLimits::FIELDS`], each an integer of at least 1 (or `null`), and nothing else.
#[derive(Debug, Clone, Copy)]
pub struct Limits;

impl Limits {
    fn limit_schema() -> Value {
        json!({"type": ["integer", "null"], "minimum": 1, "maximum": u64::MAX})
    }
}

impl Field for Limits {
    type Value = ExecuteLimits;

    fn describe(&self, name: &'static str, schema: &mut ObjectSchema) {
        let properties: serde_json::Map<String, Value> = ExecuteLimits::FIELDS
            .iter()
            .map(|name| ((*name).to_owned(), Self::limit_schema()))
            .collect();
        let limits = json!({"type": ["object", "null"], "properties": properties,
                            "additionalProperties": false});
        schema.property(name, false, limits);
    }

    /// Violations come in [`ExecuteLimits::FIELDS`] order, then unknown fields sorted by name,
    /// whatever order the object had.
    fn read(&self, reader: &mut ParamReader<'_>, name: &'static str) -> Option<ExecuteLimits> {
        let Some(object) = reader.optional_object(name) else {
            return Some(ExecuteLimits::default());
        };
        let mut read = |limit: &str| {
            let value = object.get(limit).filter(|value| !value.is_null())?;
            reader.check_integer(&format!("{name}.{limit}"), value, 1, u64::MAX)
        };
        let limits = ExecuteLimits {
            memory_bytes: read("memory_bytes"),
            cpu_seconds: read("cpu_seconds"),
            processes: read("processes"),
            open_files: read("open_files"),
        };
        let mut unknown: Vec<&String> = object
            .keys()
            .filter(|key| !ExecuteLimits::FIELDS.contains(&key.as_str()))
            .collect();
        unknown.sort();
        for key in unknown {
            let known = ExecuteLimits::FIELDS.join(", ");
            let message = format!("`{name}.{key}` is not a limit wsp knows ({known})");
            reader.violate(&format!("{name}.{key}"), "unknown_field", message);
        }
        Some(limits)
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

crate::params! {
    /// `environment/gc` params (feature `environment.lock`).
    #[derive(Debug, Clone, PartialEq, Eq, Serialize)]
    pub struct GcParams {
        /// The most bytes the store's environments may hold once the collection is done.
        pub keep_bytes: u64 = integer(0, u64::MAX),
    }
}
