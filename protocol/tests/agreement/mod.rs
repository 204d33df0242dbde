//! The agreement check shared by the schema property tests: a JSON Schema validator compiled
//! once per params type, and `from_params`, must both accept or both refuse an input.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use proptest::prelude::*;
use serde_json::Value;
use wsp_protocol::validation::Params;

/// `P`'s schema and its compiled validator, made on first use (compiling a schema builds its
/// regexes, which would otherwise dominate every case).
fn compiled<P: Params + 'static>() -> Arc<(Value, jsonschema::Validator)> {
    type Cache = Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let mut cache = CACHE
        .get_or_init(Cache::default)
        .lock()
        .expect("not poisoned");
    let entry = cache.entry(TypeId::of::<P>()).or_insert_with(|| {
        let schema = P::schema();
        let validator = jsonschema::validator_for(&schema).expect("the recorded schema compiles");
        Arc::new((schema, validator))
    });
    Arc::clone(entry)
        .downcast::<(Value, jsonschema::Validator)>()
        .expect("one entry type")
}

/// Fails the case when the schema and the reader disagree about `input`.
pub fn agree<P: Params + 'static>(input: &Value) -> Result<(), TestCaseError> {
    let compiled = compiled::<P>();
    let (schema, validator) = &*compiled;
    let by_reader = P::from_params(Some(input));
    prop_assert_eq!(
        validator.is_valid(input),
        by_reader.is_ok(),
        "input {} schema {} reader {:?}",
        input,
        schema,
        by_reader.err()
    );
    Ok(())
}
