//! The rules of one params field, each a value that both checks the field and describes it as
//! JSON Schema, so a params type declared as a list of fields and their rules
//! ([`params!`](crate::params!), [`method!`](crate::method!)) has its validator and its schema
//! from one declaration, with nothing recorded at run time.

use serde_json::{json, Map, Value};

use crate::validation::{ParamReader, StringArrayRules};

/// One field's rules: how its value is read and checked, and its JSON Schema.
pub trait Field {
    /// What the field reads as.
    type Value;

    /// Adds the field (or, for a rule that stands for several fields, each of them) to the
    /// params' schema.
    fn describe(&self, name: &'static str, schema: &mut ObjectSchema);

    /// Reads and checks the field, adding a violation for each broken rule; `None` when there
    /// is no value to build the params from.
    fn read(&self, reader: &mut ParamReader<'_>, name: &'static str) -> Option<Self::Value>;
}

/// The JSON Schema of a params object, built field by field.
#[derive(Debug, Default)]
pub struct ObjectSchema {
    properties: Map<String, Value>,
    required: Vec<String>,
}

impl ObjectSchema {
    /// Adds property `name`; a `required` one must be present and not `null`.
    pub fn property(&mut self, name: &str, required: bool, schema: Value) {
        self.properties.insert(name.to_owned(), schema);
        if required {
            self.required.push(name.to_owned());
        }
    }

    /// The schema: an object, or also `null` (absent params) when no field is required.
    pub fn into_value(self) -> Value {
        let kind = if self.required.is_empty() {
            json!(["object", "null"])
        } else {
            json!("object")
        };
        json!({"type": kind, "properties": self.properties, "required": self.required})
    }

    /// The schema of params a method takes none of: absent, `null`, `{}` or `[]`.
    pub fn no_params() -> Value {
        json!({"type": ["object", "array", "null"], "maxItems": 0})
    }
}

/// A further check of a string field's value: `Err` holds the rule's name and the message.
pub type TextCheck = fn(&str) -> Result<(), (&'static str, String)>;

/// A string's length bounds, in characters, and what else it must be.
#[derive(Debug, Clone, Copy)]
pub struct TextRules {
    min: usize,
    max: Option<usize>,
    pattern: Option<&'static str>,
    check: Option<TextCheck>,
}

impl TextRules {
    fn schema(&self, kind: Value) -> Value {
        let mut schema = json!({"type": kind, "minLength": self.min});
        if let Value::Object(map) = &mut schema {
            if let Some(max) = self.max {
                map.insert("maxLength".into(), max.into());
            }
            if let Some(pattern) = self.pattern {
                map.insert("pattern".into(), pattern.into());
            }
        }
        schema
    }

    fn check(&self, reader: &mut ParamReader<'_>, name: &str, text: &str) {
        if let Some(Err((rule, message))) = self.check.map(|check| check(text)) {
            reader.violate(name, rule, message);
        }
    }
}

macro_rules! text_rule {
    ($(#[$doc:meta])* $rule:ident, $value:ty, $required:tt, $kind:tt, $read:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub struct $rule(TextRules);

        impl $rule {
            /// This rule, whose value must also match `pattern` (JSON Schema's `pattern`, which
            /// the [`TextRules`] check enforces).
            pub const fn pattern(mut self, pattern: &'static str) -> Self {
                self.0.pattern = Some(pattern);
                self
            }

            /// This rule, whose value `check` also checks.
            pub const fn check(mut self, check: TextCheck) -> Self {
                self.0.check = Some(check);
                self
            }
        }

        impl Field for $rule {
            type Value = $value;

            fn describe(&self, name: &'static str, schema: &mut ObjectSchema) {
                schema.property(name, $required, self.0.schema(json!($kind)));
            }

            fn read(&self, reader: &mut ParamReader<'_>, name: &'static str) -> Option<$value> {
                let text = reader.$read(name, self.0.min, self.0.max);
                if let Some(text) = &text {
                    self.0.check(reader, name, text);
                }
                text_rule!(@value $required, text)
            }
        }
    };
    (@value true, $text:ident) => { $text };
    (@value false, $text:ident) => { Some($text) };
}

text_rule! {
    /// A required string: [`string`].
    Text, String, true, "string", string
}

text_rule! {
    /// An optional string: [`optional_string`].
    OptionalText, Option<String>, false, ["string", "null"], optional_string
}

/// A required string of `min..=max` characters (`None`: no upper bound).
pub const fn string(min: usize, max: Option<usize>) -> Text {
    Text(TextRules {
        min,
        max,
        pattern: None,
        check: None,
    })
}

/// An optional string of `min..=max` characters; absent or `null` reads as `None`.
pub const fn optional_string(min: usize, max: Option<usize>) -> OptionalText {
    OptionalText(string(min, max).0)
}

/// A required array of at least `min` strings: [`string_array`].
#[derive(Debug, Clone, Copy)]
pub struct Strings {
    min: usize,
}

/// A required array of at least `min` strings.
pub const fn string_array(min: usize) -> Strings {
    Strings { min }
}

impl Field for Strings {
    type Value = Vec<String>;

    fn describe(&self, name: &'static str, schema: &mut ObjectSchema) {
        let items = json!({"type": "array", "items": {"type": "string"}, "minItems": self.min});
        schema.property(name, true, items);
    }

    fn read(&self, reader: &mut ParamReader<'_>, name: &'static str) -> Option<Vec<String>> {
        reader.string_array(name, self.min)
    }
}

/// An array of strings within [`StringArrayRules`]; an optional one that is absent reads as
/// empty.
#[derive(Debug, Clone, Copy)]
pub struct StringList {
    /// Whether it must be present.
    pub required: bool,
    /// How many items, and what each must be.
    pub rules: StringArrayRules,
}

impl Field for StringList {
    type Value = Vec<String>;

    fn describe(&self, name: &'static str, schema: &mut ObjectSchema) {
        let rules = &self.rules;
        let kind = if self.required {
            json!("array")
        } else {
            json!(["array", "null"])
        };
        let mut item = json!({"type": "string", "minLength": rules.min_length,
                              "maxLength": rules.max_length});
        if let (Some(pattern), Value::Object(item)) = (rules.pattern, &mut item) {
            item.insert("pattern".into(), pattern.into());
        }
        let list = json!({"type": kind, "items": item, "minItems": rules.min_items,
                          "maxItems": rules.max_items});
        schema.property(name, self.required, list);
    }

    fn read(&self, reader: &mut ParamReader<'_>, name: &'static str) -> Option<Vec<String>> {
        let list = reader.bounded_string_array(name, self.required, self.rules);
        if self.required {
            list
        } else {
            Some(list.unwrap_or_default())
        }
    }
}

/// An optional boolean: [`optional_bool`].
#[derive(Debug, Clone, Copy)]
pub struct OptionalBool;

/// An optional boolean; absent or `null` reads as `None`.
pub const fn optional_bool() -> OptionalBool {
    OptionalBool
}

impl Field for OptionalBool {
    type Value = Option<bool>;

    fn describe(&self, name: &'static str, schema: &mut ObjectSchema) {
        schema.property(name, false, json!({"type": ["boolean", "null"]}));
    }

    fn read(&self, reader: &mut ParamReader<'_>, name: &'static str) -> Option<Option<bool>> {
        Some(reader.optional_bool(name))
    }
}

/// An optional boolean that reads as `false` when absent: [`bool_or_false`].
#[derive(Debug, Clone, Copy)]
pub struct BoolOrFalse;

/// An optional boolean; absent or `null` reads as `false`.
pub const fn bool_or_false() -> BoolOrFalse {
    BoolOrFalse
}

impl Field for BoolOrFalse {
    type Value = bool;

    fn describe(&self, name: &'static str, schema: &mut ObjectSchema) {
        OptionalBool.describe(name, schema);
    }

    fn read(&self, reader: &mut ParamReader<'_>, name: &'static str) -> Option<bool> {
        Some(reader.optional_bool(name).unwrap_or(false))
    }
}

/// A required integer: [`integer`].
#[derive(Debug, Clone, Copy)]
pub struct Integer {
    min: u64,
    max: u64,
}

/// A required integer in `min..=max`.
pub const fn integer(min: u64, max: u64) -> Integer {
    Integer { min, max }
}

impl Field for Integer {
    type Value = u64;

    fn describe(&self, name: &'static str, schema: &mut ObjectSchema) {
        let integer = json!({"type": "integer", "minimum": self.min, "maximum": self.max});
        schema.property(name, true, integer);
    }

    fn read(&self, reader: &mut ParamReader<'_>, name: &'static str) -> Option<u64> {
        reader.integer(name, self.min, self.max)
    }
}

/// An optional integer: [`optional_integer`].
#[derive(Debug, Clone, Copy)]
pub struct OptionalInteger {
    min: u64,
    max: u64,
}

/// An optional integer in `min..=max`; absent or `null` reads as `None`.
pub const fn optional_integer(min: u64, max: u64) -> OptionalInteger {
    OptionalInteger { min, max }
}

impl Field for OptionalInteger {
    type Value = Option<u64>;

    fn describe(&self, name: &'static str, schema: &mut ObjectSchema) {
        let integer =
            json!({"type": ["integer", "null"], "minimum": self.min, "maximum": self.max});
        schema.property(name, false, integer);
    }

    fn read(&self, reader: &mut ParamReader<'_>, name: &'static str) -> Option<Option<u64>> {
        Some(reader.optional_integer(name, self.min, self.max))
    }
}

/// An optional object of strings: [`optional_string_map`].
#[derive(Debug, Clone, Copy)]
pub struct StringMap;

/// An optional object whose values are all strings, read as its pairs; absent or `null` reads
/// as `None`.
pub const fn optional_string_map() -> StringMap {
    StringMap
}

impl Field for StringMap {
    type Value = Option<Vec<(String, String)>>;

    fn describe(&self, name: &'static str, schema: &mut ObjectSchema) {
        let map = json!({"type": ["object", "null"], "additionalProperties": {"type": "string"}});
        schema.property(name, false, map);
    }

    fn read(&self, reader: &mut ParamReader<'_>, name: &'static str) -> Option<Self::Value> {
        Some(reader.optional_string_map(name))
    }
}
