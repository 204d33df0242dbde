//! Interactive `environment/execute`: a stdin the client streams (`stdin_stream: true`,
//! `environment/input`) and a pseudo-terminal (`pty`, `environment/resize`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::fields::{Field, ObjectSchema};
use crate::validation::{type_name, ParamReader};
use crate::Id;

/// The most bytes one `environment/input` may carry in `data` (UTF-8); a larger one is
/// refused (logged) without being copied.
pub const MAX_INPUT_DATA_BYTES: usize = 1024 * 1024;

/// A terminal's size, in character cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PtySize {
    /// Rows, 1–65535.
    pub rows: u16,
    /// Columns, 1–65535.
    pub cols: u16,
}

impl PtySize {
    /// The fields a `pty` object has.
    pub const FIELDS: [&'static str; 2] = ["rows", "cols"];
}

/// The rule of `environment/execute`'s `pty`: an optional object with both `rows` and `cols`,
/// integers 1–65535, and nothing else.
#[derive(Debug, Clone, Copy)]
pub struct PtyRule;

fn size_schema() -> Value {
    json!({"type": "integer", "minimum": 1, "maximum": u16::MAX})
}

impl Field for PtyRule {
    type Value = Option<PtySize>;

    fn describe(&self, name: &'static str, schema: &mut ObjectSchema) {
        let pty = json!({
            "type": ["object", "null"],
            "required": PtySize::FIELDS,
            "properties": {"rows": size_schema(), "cols": size_schema()},
            "additionalProperties": false,
        });
        schema.property(name, false, pty);
    }

    fn read(&self, reader: &mut ParamReader<'_>, name: &'static str) -> Option<Option<PtySize>> {
        let Some(object) = reader.optional_object(name) else {
            return Some(None);
        };
        let mut read = |field: &str| {
            let path = format!("{name}.{field}");
            match object.get(field) {
                Some(value) => reader.check_integer(&path, value, 1, u64::from(u16::MAX)),
                None => {
                    reader.violate(&path, "required", format!("`{path}` is required"));
                    None
                }
            }
        };
        let (rows, cols) = (read("rows"), read("cols"));
        let mut unknown: Vec<&String> = object
            .keys()
            .filter(|key| !PtySize::FIELDS.contains(&key.as_str()))
            .collect();
        unknown.sort();
        for key in unknown {
            let message = format!("`{name}.{key}` is not a pty field (rows, cols)");
            reader.violate(&format!("{name}.{key}"), "unknown_field", message);
        }
        let size = |n: Option<u64>| n.and_then(|n| u16::try_from(n).ok());
        Some(Some(PtySize {
            rows: size(rows)?,
            cols: size(cols)?,
        }))
    }
}

/// Params of the `environment/input` notification (client to server): text for the stdin of a
/// running `environment/execute` that asked for `stdin_stream: true` (or `pty`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct InputParams {
    /// The id of the `environment/execute` request whose stdin this is.
    pub request_id: Id,
    /// The text, written as UTF-8: at most 1 MiB (1,048,576 bytes) of it, or the notification
    /// is ignored (and logged). Absent: `""`.
    #[serde(default)]
    pub data: String,
    /// Closes the command's stdin after `data` (on a pty: the terminal's end-of-file
    /// character, Ctrl-D).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub eof: bool,
}

impl InputParams {
    /// Reads the params of one `environment/input`, checking `data`'s size before copying it.
    pub fn read(params: Option<&Value>) -> Result<InputParams, String> {
        let request_id = request_id(params)?;
        let data = match params.and_then(|params| params.get("data")) {
            None | Some(Value::Null) => "",
            Some(Value::String(data)) if data.len() <= MAX_INPUT_DATA_BYTES => data,
            Some(Value::String(data)) => {
                return Err(format!(
                "`data` holds {} bytes, more than the {MAX_INPUT_DATA_BYTES} one input may carry",
                data.len()
            ))
            }
            Some(other) => {
                return Err(format!("`data` must be a string, got {}", type_name(other)))
            }
        };
        let eof = match params.and_then(|params| params.get("eof")) {
            None | Some(Value::Null) => false,
            Some(Value::Bool(eof)) => *eof,
            Some(other) => {
                return Err(format!("`eof` must be a boolean, got {}", type_name(other)))
            }
        };
        Ok(InputParams {
            request_id,
            data: data.to_owned(),
            eof,
        })
    }
}

/// Params of the `environment/resize` notification (client to server): the new size of the
/// terminal of a running `environment/execute` that asked for a `pty`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ResizeParams {
    /// The id of the `environment/execute` request whose terminal this is.
    pub request_id: Id,
    /// Rows, 1–65535.
    #[schemars(range(min = 1))]
    pub rows: u16,
    /// Columns, 1–65535.
    #[schemars(range(min = 1))]
    pub cols: u16,
}

impl ResizeParams {
    /// Reads the params of one `environment/resize`.
    pub fn read(params: Option<&Value>) -> Result<ResizeParams, String> {
        let request_id = request_id(params)?;
        let size = |field: &str| {
            params
                .and_then(|params| params.get(field))
                .and_then(Value::as_u64)
                .and_then(|n| u16::try_from(n).ok())
                .filter(|n| *n >= 1)
                .ok_or_else(|| format!("`{field}` must be an integer, 1–65535"))
        };
        Ok(ResizeParams {
            request_id,
            rows: size("rows")?,
            cols: size("cols")?,
        })
    }
}

/// The `request_id` of an `environment/input` or `environment/resize`.
pub fn request_id(params: Option<&Value>) -> Result<Id, String> {
    let id = params
        .and_then(|params| params.get("request_id"))
        .ok_or("`request_id` is required")?;
    Id::from_value(id).ok_or_else(|| "`request_id` must be a string or a number".to_owned())
}
