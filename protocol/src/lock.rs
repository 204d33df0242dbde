//! Lock files: what `environment/lock` answers and what `environment/create` takes as `lock`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::fields::{Field, ObjectSchema};
use crate::validation::{type_name, ParamReader};

/// The formats a lock comes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum LockFormat {
    /// PEP 751 `pylock.toml` (venv and uv environments).
    #[serde(rename = "pylock.toml")]
    Pylock,
    /// An `@EXPLICIT` list of conda package URLs, each with `#<md5 or sha256>` (conda).
    #[serde(rename = "conda-explicit")]
    CondaExplicit,
}

impl LockFormat {
    /// Every format, as spelled on the wire.
    pub const ALL: [(LockFormat, &'static str); 2] = [
        (LockFormat::Pylock, "pylock.toml"),
        (LockFormat::CondaExplicit, "conda-explicit"),
    ];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            LockFormat::Pylock => "pylock.toml",
            LockFormat::CondaExplicit => "conda-explicit",
        }
    }

    /// The format a wire word names.
    pub fn parse(word: &str) -> Option<LockFormat> {
        LockFormat::ALL
            .iter()
            .find(|(_, spelling)| *spelling == word)
            .map(|(format, _)| *format)
    }
}

impl std::fmt::Display for LockFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A lock: the `environment/lock` result, and `environment/create`'s `lock`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Lock {
    /// How `text` is written.
    pub format: LockFormat,
    /// The lock itself.
    pub text: String,
}

/// The most characters of a lock's `text` a create takes (16 Mi).
pub const MAX_LOCK_TEXT: usize = 16 << 20;

/// The rule of `environment/create`'s `lock`: an optional object with a known `format` and a
/// `text`, and nothing else; never together with `packages`.
#[derive(Debug, Clone, Copy)]
pub struct LockRule;

impl Field for LockRule {
    type Value = Option<Lock>;

    fn describe(&self, name: &'static str, schema: &mut ObjectSchema) {
        let formats: Vec<&str> = LockFormat::ALL.iter().map(|(_, word)| *word).collect();
        let lock = json!({
            "type": ["object", "null"],
            "required": ["format", "text"],
            "properties": {
                "format": {"enum": formats},
                "text": {"type": "string", "maxLength": MAX_LOCK_TEXT},
            },
            "additionalProperties": false,
        });
        schema.property(name, false, lock);
    }

    fn read(&self, reader: &mut ParamReader<'_>, name: &'static str) -> Option<Option<Lock>> {
        let Some(object) = reader.optional_object(name) else {
            return Some(None);
        };
        if reader
            .optional_value("packages")
            .is_some_and(|packages| !packages.is_null())
        {
            let message = format!("`{name}` and `packages` cannot both be given");
            reader.violate(name, "exclusive", message);
        }
        let format = string_field(reader, object, name, "format").and_then(|word| {
            LockFormat::parse(word).or_else(|| {
                let known = LockFormat::ALL.map(|(_, word)| word).join(", ");
                let message = format!("`{name}.format` {word:?} is not one of {known}");
                reader.violate(&format!("{name}.format"), "enum", message);
                None
            })
        });
        let text = string_field(reader, object, name, "text").and_then(|text| {
            if text.chars().count() <= MAX_LOCK_TEXT {
                return Some(text.to_owned());
            }
            let message = format!("`{name}.text` is longer than {MAX_LOCK_TEXT} characters");
            reader.violate(&format!("{name}.text"), "max_length", message);
            None
        });
        let mut unknown: Vec<&String> = object
            .keys()
            .filter(|key| !matches!(key.as_str(), "format" | "text"))
            .collect();
        unknown.sort();
        for key in unknown {
            let message = format!("`{name}.{key}` is not a lock field (format, text)");
            reader.violate(&format!("{name}.{key}"), "unknown_field", message);
        }
        Some(Some(Lock {
            format: format?,
            text: text?,
        }))
    }
}

/// `object[field]` when it is a string; anything else (or nothing) is a `type` violation at
/// `name.field`.
fn string_field<'a>(
    reader: &mut ParamReader<'_>,
    object: &'a serde_json::Map<String, serde_json::Value>,
    name: &str,
    field: &str,
) -> Option<&'a str> {
    match object.get(field) {
        Some(serde_json::Value::String(text)) => Some(text),
        other => {
            let got = other.map_or("nothing", type_name);
            let message = format!("`{name}.{field}` must be a string, got {got}");
            reader.violate(&format!("{name}.{field}"), "type", message);
            None
        }
    }
}
