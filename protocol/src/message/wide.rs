//! Integers among the top-level members of `params` that a [`Value`] holds only as doubles.
//!
//! A [`Value`] holds an integer beyond 64 bits only as the nearest double, one beyond a
//! double's range not at all, and `-0` as the double `-0.0`. A request keeps their text as it
//! arrived in [`WideIntegers`], so a member that must be echoed exactly (a `work_done_token`)
//! can be, as an id is; in `params` they are the nearest double, or the largest double of their
//! sign past a double's range.

use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The top-level `params` members that are integers a `Value` holds only as doubles (beyond 64
/// bits, or `-0`), each as written; empty for almost every request.
#[derive(Debug, Clone, Default)]
pub struct WideIntegers(Vec<(String, Box<RawValue>)>);

impl PartialEq for WideIntegers {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len()
            && (self.0.iter().zip(&other.0))
                .all(|((a, a_text), (b, b_text))| a == b && a_text.get() == b_text.get())
    }
}

impl Eq for WideIntegers {}

impl WideIntegers {
    /// The text `member` was written as, when it is such an integer.
    pub fn get(&self, member: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(name, _)| name == member)
            .map(|(_, text)| text.get())
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Whether a top-level member of `params` is a number a `Value` holds as a double, so that it
/// may have been written as an integer beyond 64 bits.
pub(super) fn may_hold_wide_integers(params: &Value) -> bool {
    params.as_object().is_some_and(|members| {
        members
            .values()
            .any(|value| matches!(value, Value::Number(n) if n.is_f64()))
    })
}

/// `params` for the fast path, which keeps no text: refused when a top-level member may be an
/// integer beyond 64 bits, so that [`super::parse_payload_via_value`] keeps its text.
pub(super) fn narrow_params<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Value>, D::Error> {
    let params = Value::deserialize(deserializer)?;
    if may_hold_wide_integers(&params) {
        return Err(serde::de::Error::custom(
            "a member may be an integer beyond 64 bits",
        ));
    }
    Ok(Some(params))
}

/// Reads `params` into a `Value`, keeping the text of its top-level integers held as doubles. An
/// error is what serde_json says of `params` as a whole.
pub(super) fn read_params(raw: &RawValue) -> Result<(Value, WideIntegers), serde_json::Error> {
    let whole = match serde_json::from_str::<Value>(raw.get()) {
        Ok(value) if !may_hold_wide_integers(&value) => {
            return Ok((value, WideIntegers::default()))
        }
        whole => whole,
    };
    let members = match serde_json::from_str::<Members<'_>>(raw.get()) {
        Ok(Members(members)) if members.iter().any(|(_, text)| is_integer(text.get())) => members,
        _ => return whole.map(|value| (value, WideIntegers::default())),
    };
    let mut object = Map::new();
    let mut wide = Vec::new();
    for (name, text) in members {
        let (value, is_wide) = match serde_json::from_str::<Value>(text.get()) {
            Ok(Value::Number(n)) if is_integer(text.get()) => {
                let is_wide = n.is_f64();
                (Value::Number(n), is_wide)
            }
            Ok(value) => (value, false),
            Err(_) if is_integer(text.get()) => (largest_double(text.get()), true),
            Err(error) => return Err(whole.err().unwrap_or(error)),
        };
        // A repeated member: the last one counts, in `params` and here.
        wide.retain(|(earlier, _): &(String, Box<RawValue>)| *earlier != name);
        if is_wide {
            wide.push((name.clone(), text.to_owned()));
        }
        object.insert(name, value);
    }
    Ok((Value::Object(object), WideIntegers(wide)))
}

/// A JSON integer: an optional `-`, then digits (JSON allows no leading `+` or zeros).
fn is_integer(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|byte| byte.is_ascii_digit())
}

/// What `params` holds for an integer beyond a double's range: the largest double of its sign.
fn largest_double(text: &str) -> Value {
    Value::from(if text.starts_with('-') {
        f64::MIN
    } else {
        f64::MAX
    })
}

/// An object's members in order, each value left as raw text.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MembersVisitor;

        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, &'de RawValue>()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }

        deserializer.deserialize_map(MembersVisitor)
    }
}
