//! Param validation that reports every violated rule, not just the first.
//!
//! [`ParamReader`] walks a params object field by field and collects a [`Violation`] for each
//! broken rule; [`Params`] is what a method's params type implements so the server can validate
//! it before the handler runs. The rules of each field, and their JSON Schema, are
//! [`Field`](crate::fields::Field)s. Lengths count Unicode scalar values, not bytes.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::message::{Request, WideIntegers};

/// One violated rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// The offending field (`params` for the params value itself).
    pub field: String,
    /// The rule's short name: `required`, `type`, `min_length`, `max_length`, `format`, …
    pub rule: String,
    /// A human-readable explanation.
    pub message: String,
}

impl Violation {
    /// A violation of `rule` on `field`.
    pub fn new(field: &str, rule: &str, message: impl Into<String>) -> Self {
        Violation {
            field: field.to_owned(),
            rule: rule.to_owned(),
            message: message.into(),
        }
    }
}

/// A method's params type: parsed from the request's `params` with every violation listed, and
/// described by a JSON Schema. [`params!`](crate::params!) and [`method!`](crate::method!) declare
/// both from one list of fields and their [`Field`](crate::fields::Field) rules.
pub trait Params: Sized + Send + 'static {
    /// Parses and validates. `None` is an absent `params` member.
    fn from_params(params: Option<&Value>) -> Result<Self, Vec<Violation>>;

    /// Parses and validates a request's params: [`Params::from_params`] of `request.params`,
    /// unless the type also reads [`Request::wide_integers`] (the exact text of top-level
    /// integers beyond 64 bits, which `params` holds only as doubles).
    fn from_request(request: &Request) -> Result<Self, Vec<Violation>> {
        Self::from_params(request.params.as_ref())
    }

    /// The JSON Schema of the params.
    fn schema() -> Value;
}

/// The violations in one line, for an error that holds a message only (a params type's
/// `Deserialize`).
pub fn violations_message(violations: &[Violation]) -> String {
    let messages: Vec<&str> = violations.iter().map(|v| v.message.as_str()).collect();
    messages.join("; ")
}

/// Parses any `Deserialize` type as params: absent, `null` and `[]` read as `{}`, and a serde
/// error becomes one violation. For custom methods that need no rule beyond their types.
pub fn from_serde<T: serde::de::DeserializeOwned>(
    params: Option<&Value>,
) -> Result<T, Vec<Violation>> {
    let value = match params {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::Array(items)) if items.is_empty() => Value::Object(Map::new()),
        Some(value) => value.clone(),
    };
    serde_json::from_value(value).map_err(|e| vec![Violation::new("params", "type", e.to_string())])
}

/// Reads fields out of a params object, collecting violations.
#[derive(Debug)]
pub struct ParamReader<'a> {
    object: Option<&'a Map<String, Value>>,
    shape_ok: bool,
    violations: Vec<Violation>,
    wide_integers: Option<&'a WideIntegers>,
}

impl<'a> ParamReader<'a> {
    /// Checks the params' shape. Absent, `null` and `{}` mean "no params"; `[]` does too when
    /// the method takes none; any other shape is a violation.
    pub fn new(params: Option<&'a Value>, takes_none: bool) -> Self {
        let mut reader = ParamReader {
            object: None,
            shape_ok: true,
            violations: Vec::new(),
            wide_integers: None,
        };
        match params {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => reader.object = Some(map),
            Some(Value::Array(items)) if items.is_empty() && takes_none => {}
            Some(other) => {
                reader.shape_ok = false;
                let expected = if takes_none {
                    "this method takes no params: omit them or send null, {} or []"
                } else {
                    "params must be an object of named params"
                };
                reader.violations.push(Violation::new(
                    "params",
                    "type",
                    format!("{expected}, got {}", type_name(other)),
                ));
            }
        }
        reader
    }

    /// This reader, reading `wide` for the exact text of top-level integers beyond 64 bits.
    pub fn with_wide_integers(mut self, wide: &'a WideIntegers) -> Self {
        self.wide_integers = Some(wide);
        self
    }

    /// The exact text of top-level field `name`, an integer a `Value` holds only as a double.
    pub fn wide_integer(&self, name: &str) -> Option<&'a str> {
        self.wide_integers.and_then(|wide| wide.get(name))
    }

    fn field(&self, name: &str) -> Option<&'a Value> {
        self.object.and_then(|map| map.get(name))
    }

    /// Field `name`'s value, present and not `null`; its absence is a `required` violation.
    /// `None` also when the params are not an object (already a violation of their own).
    fn required(&mut self, name: &str) -> Option<&'a Value> {
        if !self.shape_ok {
            return None;
        }
        match self.field(name) {
            None | Some(Value::Null) => {
                self.violate(name, "required", format!("`{name}` is required"));
                None
            }
            value => value,
        }
    }

    /// Adds a violation found by the caller.
    pub fn violate(&mut self, field: &str, rule: &str, message: impl Into<String>) {
        self.violations.push(Violation::new(field, rule, message));
    }

    /// A required string of `min..=max` characters.
    pub fn string(&mut self, name: &str, min: usize, max: Option<usize>) -> Option<String> {
        let value = self.required(name)?;
        self.check_string(name, value, min, max)
    }

    /// An optional string (absent or `null` is `None`).
    pub fn optional_string(
        &mut self,
        name: &str,
        min: usize,
        max: Option<usize>,
    ) -> Option<String> {
        match self.field(name) {
            None | Some(Value::Null) => None,
            Some(value) => self.check_string(name, value, min, max),
        }
    }

    fn check_string(
        &mut self,
        name: &str,
        value: &Value,
        min: usize,
        max: Option<usize>,
    ) -> Option<String> {
        let Value::String(s) = value else {
            self.violate(
                name,
                "type",
                format!("`{name}` must be a string, got {}", type_name(value)),
            );
            return None;
        };
        let length = s.chars().count();
        if length < min && min == 1 {
            self.violate(name, "non_empty", format!("`{name}` must not be empty"));
        } else if length < min {
            self.violate(
                name,
                "min_length",
                format!("`{name}` must have at least {min} characters, got {length}"),
            );
        }
        if let Some(max) = max.filter(|max| length > *max) {
            self.violate(
                name,
                "max_length",
                format!("`{name}` must have at most {max} characters, got {length}"),
            );
        }
        Some(s.clone())
    }

    /// A required array of strings (at least `min` items).
    pub fn string_array(&mut self, name: &str, min: usize) -> Option<Vec<String>> {
        let items = match self.required(name)? {
            Value::Array(items) => items,
            other => {
                self.violate(
                    name,
                    "type",
                    format!(
                        "`{name}` must be an array of strings, got {}",
                        type_name(other)
                    ),
                );
                return None;
            }
        };
        if items.len() < min {
            self.violate(
                name,
                "non_empty",
                format!("`{name}` must have at least {min} element(s)"),
            );
        }
        let mut strings = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            match item {
                Value::String(s) => strings.push(s.clone()),
                other => self.violate(
                    &format!("{name}[{index}]"),
                    "type",
                    format!(
                        "`{name}[{index}]` must be a string, got {}",
                        type_name(other)
                    ),
                ),
            }
        }
        Some(strings)
    }

    /// The raw value of an optional field, unchecked (absent or `null` is `None`), for a field
    /// whose rules the caller checks itself.
    pub fn optional_value(&self, name: &str) -> Option<&'a Value> {
        self.field(name).filter(|value| !value.is_null())
    }

    /// An array of strings within `rules`; absent or `null` is a `required` violation when
    /// `required`, else `None`. Each item's violation names it (`name[index]`).
    pub fn bounded_string_array(
        &mut self,
        name: &str,
        required: bool,
        rules: StringArrayRules,
    ) -> Option<Vec<String>> {
        if !self.shape_ok {
            return None;
        }
        let items = match self.field(name) {
            None | Some(Value::Null) => {
                if required {
                    self.violate(name, "required", format!("`{name}` is required"));
                }
                return None;
            }
            Some(Value::Array(items)) => items,
            Some(other) => {
                let message = format!(
                    "`{name}` must be an array of strings, got {}",
                    type_name(other)
                );
                self.violate(name, "type", message);
                return None;
            }
        };
        if items.len() < rules.min_items {
            let message = format!("`{name}` must have at least {} element(s)", rules.min_items);
            self.violate(name, "non_empty", message);
        }
        if items.len() > rules.max_items {
            let message = format!(
                "`{name}` must have at most {} elements, got {}",
                rules.max_items,
                items.len()
            );
            self.violate(name, "max_items", message);
        }
        let mut strings = Vec::with_capacity(items.len().min(rules.max_items));
        for (index, item) in items.iter().enumerate() {
            let field = format!("{name}[{index}]");
            let before = self.violations.len();
            let Some(text) =
                self.check_string(&field, item, rules.min_length, Some(rules.max_length))
            else {
                continue;
            };
            let length_ok = self.violations.len() == before;
            if let Some(Err(message)) = rules.format.filter(|_| length_ok).map(|f| f(&text)) {
                self.violate(&field, "format", format!("`{field}` {message}"));
            }
            strings.push(text);
        }
        Some(strings)
    }

    /// An optional object whose values are all strings (absent or `null` is `None`).
    pub fn optional_string_map(&mut self, name: &str) -> Option<Vec<(String, String)>> {
        let map = match self.field(name) {
            None | Some(Value::Null) => return None,
            Some(Value::Object(map)) => map,
            Some(other) => {
                self.violate(
                    name,
                    "type",
                    format!(
                        "`{name}` must be an object of strings, got {}",
                        type_name(other)
                    ),
                );
                return None;
            }
        };
        let mut pairs = Vec::with_capacity(map.len());
        for (key, value) in map {
            match value {
                Value::String(s) => pairs.push((key.clone(), s.clone())),
                other => self.violate(
                    &format!("{name}.{key}"),
                    "type",
                    format!("`{name}.{key}` must be a string, got {}", type_name(other)),
                ),
            }
        }
        Some(pairs)
    }

    /// An optional boolean (absent or `null` is `None`).
    pub fn optional_bool(&mut self, name: &str) -> Option<bool> {
        match self.field(name) {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => {
                self.violate(
                    name,
                    "type",
                    format!("`{name}` must be a boolean, got {}", type_name(other)),
                );
                None
            }
        }
    }

    /// A required integer in `min..=max`.
    pub fn integer(&mut self, name: &str, min: u64, max: u64) -> Option<u64> {
        let value = self.required(name)?;
        self.check_integer(name, value, min, max)
    }

    /// An optional integer in `min..=max` (absent or `null` is `None`).
    pub fn optional_integer(&mut self, name: &str, min: u64, max: u64) -> Option<u64> {
        match self.field(name) {
            None | Some(Value::Null) => None,
            Some(value) => self.check_integer(name, value, min, max),
        }
    }

    /// Checks that `value`, the value of `field`, is an integer in `min..=max`. An integral
    /// float such as `2.0` counts as an integer, as in JSON Schema.
    pub fn check_integer(&mut self, field: &str, value: &Value, min: u64, max: u64) -> Option<u64> {
        let Value::Number(number) = value else {
            self.violate(
                field,
                "type",
                format!("`{field}` must be an integer, got {}", type_name(value)),
            );
            return None;
        };
        let (rule, bound) = match read_integer(number) {
            Reading::Fraction => {
                let message = format!("`{field}` must be an integer, got {number}");
                self.violate(field, "type", message);
                return None;
            }
            Reading::Integer(integer) if (min..=max).contains(&integer) => return Some(integer),
            Reading::Integer(integer) if integer < min => ("minimum", min),
            Reading::Negative => ("minimum", min),
            Reading::Integer(_) | Reading::TooLarge => ("maximum", max),
        };
        let relation = if rule == "minimum" {
            "at least"
        } else {
            "at most"
        };
        let message = format!("`{field}` must be {relation} {bound}, got {number}");
        self.violate(field, rule, message);
        None
    }

    /// An optional object (absent or `null` is `None`), for the caller to read field by field.
    pub fn optional_object(&mut self, name: &str) -> Option<&'a Map<String, Value>> {
        match self.field(name) {
            None | Some(Value::Null) => None,
            Some(Value::Object(map)) => Some(map),
            Some(other) => {
                self.violate(
                    name,
                    "type",
                    format!("`{name}` must be an object, got {}", type_name(other)),
                );
                None
            }
        }
    }

    /// The collected violations, or `Ok(value)` when there are none.
    pub fn finish<T>(self, build: impl FnOnce() -> Option<T>) -> Result<T, Vec<Violation>> {
        if !self.violations.is_empty() {
            return Err(self.violations);
        }
        build().ok_or_else(|| vec![Violation::new("params", "type", "params could not be read")])
    }
}

/// Rules of [`ParamReader::bounded_string_array`]: how many items, how many characters each,
/// and what else each must be.
#[derive(Debug, Clone, Copy)]
pub struct StringArrayRules {
    /// Fewest items.
    pub min_items: usize,
    /// Most items.
    pub max_items: usize,
    /// Fewest characters of an item.
    pub min_length: usize,
    /// Most characters of an item.
    pub max_length: usize,
    /// A further check of each item of the right length: `Err` holds what the item must be
    /// (`must not start with -`), a `format` violation.
    pub format: Option<ItemCheck>,
    /// The JSON Schema `pattern` that says what `format` checks.
    pub pattern: Option<&'static str>,
}

/// A check of one item of a string array: `Err` says what the item must be.
pub type ItemCheck = fn(&str) -> Result<(), String>;

/// A JSON number as a candidate for a `u64`.
enum Reading {
    Integer(u64),
    Negative,
    TooLarge,
    Fraction,
}

fn read_integer(number: &serde_json::Number) -> Reading {
    if let Some(integer) = number.as_u64() {
        return Reading::Integer(integer);
    }
    // A negative integer, a float, or (with arbitrary precision) a very large integer.
    let float = number.as_f64().unwrap_or(f64::INFINITY);
    if float < 0.0 {
        Reading::Negative
    } else if float.is_finite() && float.fract() != 0.0 {
        Reading::Fraction
    } else if float < 18_446_744_073_709_551_616.0 {
        // An integral float below 2^64 converts exactly.
        Reading::Integer(float as u64)
    } else {
        Reading::TooLarge
    }
}

/// The JSON type of a value, for messages.
pub fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
