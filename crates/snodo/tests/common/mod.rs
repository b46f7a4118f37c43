//! Shared test support: the official 2026-07-28 schema and wire assertions.
#![allow(dead_code, unreachable_pub)]

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use serde_json::{Value, json};

static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_str(include_str!("../spec/schema-2026-07-28.json")).expect("schema parses")
});

static COMPILED: LazyLock<Mutex<HashMap<String, &'static jsonschema::Validator>>> =
    LazyLock::new(Default::default);

fn validator(def: &str) -> &'static jsonschema::Validator {
    let mut cache = COMPILED.lock().unwrap();
    cache.entry(def.to_string()).or_insert_with(|| {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$ref": format!("#/$defs/{def}"),
            "$defs": SCHEMA["$defs"].clone(),
        });
        Box::leak(Box::new(
            jsonschema::validator_for(&schema).expect("official schema compiles"),
        ))
    })
}

/// Asserts that `value` validates against the official definition `def`.
#[track_caller]
pub fn assert_valid(def: &str, value: &Value) {
    let v = validator(def);
    let errors: Vec<String> = v
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{value} is not a valid {def}: {errors:#?}"
    );
}

/// Asserts a response is a valid JSON-RPC response under the official schema
/// and, for a result, that the result is a valid `result_def`.
#[track_caller]
pub fn assert_response(response: &Value, result_def: &str) {
    if response.get("error").is_some() {
        assert_valid("JSONRPCErrorResponse", response);
    } else {
        assert_valid("JSONRPCResultResponse", response);
        assert_valid(result_def, &response["result"]);
    }
}

/// The `_meta` of a 2026-07-28 request with the given client capabilities.
pub fn meta_with(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "vectors", "version": "1.0.0"}
    })
}
