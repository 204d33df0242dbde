//! The protocol's JSON Schema document: every method's params and result, every
//! notification's params and every error's `data`.
//!
//! Params schemas are recorded from the validators ([`Params::schema`]), result schemas come
//! from the result types' `JsonSchema` derives, so the document is generated, never written by
//! hand. The reference server's document is shipped as `schema/wsp.schema.json`, and
//! `initialize`'s `schema.fingerprint` is the SHA-256 of its canonical form
//! ([`canonical_json`]).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde_json::{json, Value};

use crate::error_code::{JsonRpcCode, WspErrorCode};
use crate::method::Method;
use crate::validation::Params;
use crate::{methods, Id};

/// The schemas of one bound method.
#[derive(Debug, Clone, PartialEq)]
pub struct MethodSchema {
    /// Of its params.
    pub params: Value,
    /// Of its result.
    pub result: Value,
}

impl MethodSchema {
    /// The schemas of a typed method.
    pub fn of<M: Method>() -> Self {
        MethodSchema {
            params: M::Params::schema(),
            result: schema_of::<M::Result>(),
        }
    }

    /// Params of a given schema and a result of type `R`.
    pub fn with_result<R: JsonSchema>(params: Value) -> Self {
        MethodSchema {
            params,
            result: schema_of::<R>(),
        }
    }
}

/// The JSON Schema of a type, as a value.
pub fn schema_of<T: JsonSchema>() -> Value {
    schemars::schema_for!(T).to_value()
}

impl JsonSchema for Id {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Id".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": ["string", "number", "null"]})
    }
}

/// The document for `methods` (name → schemas), with WSP's notifications and errors.
pub fn document(methods: &BTreeMap<String, MethodSchema>) -> Value {
    let methods: serde_json::Map<String, Value> = methods
        .iter()
        .map(|(name, schema)| {
            let entry = json!({"params": schema.params, "result": schema.result});
            (name.clone(), entry)
        })
        .collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "WSP",
        "version": crate::PROTOCOL_VERSION,
        "methods": methods,
        "notifications": notifications(),
        "errors": errors(),
    })
}

fn notifications() -> Value {
    let progress_value = json!({
        "type": "object",
        "required": ["kind"],
        "properties": {
            "kind": {"enum": ["begin", "report", "end"]},
            "title": {"type": "string"},
            "message": {"type": "string"},
            "percentage": {"type": "integer", "minimum": 0, "maximum": 100},
        },
    });
    json!({
        methods::EXIT: {"direction": "client-to-server", "params": crate::NoParams::schema()},
        methods::CANCEL_REQUEST: {
            "direction": "client-to-server",
            "params": {
                "type": "object",
                "required": ["id"],
                "properties": {"id": {"type": ["string", "number"]}},
            },
        },
        methods::INPUT: {
            "direction": "client-to-server",
            "params": schema_of::<crate::interactive::InputParams>(),
        },
        methods::RESIZE: {
            "direction": "client-to-server",
            "params": schema_of::<crate::interactive::ResizeParams>(),
        },
        methods::OUTPUT: {
            "direction": "server-to-client",
            "params": schema_of::<crate::results::OutputParams>(),
        },
        methods::CHANGED: {
            "direction": "server-to-client",
            "params": schema_of::<crate::results::ChangedParams>(),
        },
        methods::PROGRESS: {
            "direction": "server-to-client",
            "params": {
                "type": "object",
                "required": ["token", "value"],
                "properties": {
                    "token": {"type": ["string", "integer"]},
                    "value": progress_value,
                },
            },
        },
    })
}

fn errors() -> Value {
    let violations = json!({
        "type": "object",
        "required": ["violations"],
        "properties": {"violations": {"type": "array", "items": {
            "type": "object",
            "required": ["field", "rule", "message"],
            "properties": {
                "field": {"type": "string"},
                "rule": {"type": "string"},
                "message": {"type": "string"},
            },
        }}},
    });
    let none = json!({"type": "null"});
    let data = |code: WspErrorCode| match code {
        WspErrorCode::JsonRpc(JsonRpcCode::MethodNotFound) => json!({
            "type": "object", "required": ["method"], "properties": {"method": {"type": "string"}},
        }),
        WspErrorCode::JsonRpc(JsonRpcCode::InvalidParams) | WspErrorCode::NameConflict => {
            violations.clone()
        }
        WspErrorCode::EnvironmentNotFound => json!({
            "type": "object", "required": ["id"], "properties": {"id": {"type": "string"}},
        }),
        WspErrorCode::PythonVersionUnavailable => json!({
            "type": "object",
            "required": ["python_version", "available"],
            "properties": {
                "python_version": {"type": "string"},
                "available": {"type": "array", "items": {"type": "string"}},
            },
        }),
        WspErrorCode::ExecutionFailed => json!({
            "type": "object",
            "required": ["reason", "detail"],
            "properties": {"reason": {"type": "string"}, "detail": {"type": "string"}},
        }),
        _ => none.clone(),
    };
    let entries = WspErrorCode::ALL
        .into_iter()
        .map(|code| (code.code(), code.message(), data(code)));
    let map: serde_json::Map<String, Value> = entries
        .into_iter()
        .map(|(code, name, data)| (code.to_string(), json!({"name": name, "data": data})))
        .collect();
    Value::Object(map)
}

/// JSON with object keys sorted and no whitespace, so equal documents hash equally.
pub fn canonical_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, String> =
                map.iter().map(|(k, v)| (k, canonical_json(v))).collect();
            let fields: Vec<String> = sorted
                .into_iter()
                .map(|(k, v)| format!("{}:{v}", Value::String(k.clone())))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical_json).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}
