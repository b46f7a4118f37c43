//! Shared test support: the official schemas of every revision and wire
//! assertions.
#![allow(dead_code, unreachable_pub)]

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use serde_json::{Value, json};

static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_str(include_str!("../spec/schema-2026-07-28.json")).expect("schema parses")
});

static SCHEMA_2025_11_25: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_str(include_str!("../spec/schema-2025-11-25.json")).expect("schema parses")
});

static SCHEMA_2025_06_18: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_str(include_str!("../spec/schema-2025-06-18.json")).expect("schema parses")
});

static COMPILED: LazyLock<Mutex<HashMap<String, &'static jsonschema::Validator>>> =
    LazyLock::new(Default::default);

/// The compiled official definition `def` of `revision`'s schema.
fn validator(revision: &str, def: &str) -> &'static jsonschema::Validator {
    let mut cache = COMPILED.lock().unwrap();
    cache.entry(format!("{revision}/{def}")).or_insert_with(|| {
        const Y2020: &str = "https://json-schema.org/draft/2020-12/schema";
        let (dialect, key, defs) = match revision {
            "2026-07-28" => (Y2020, "$defs", &SCHEMA["$defs"]),
            "2025-11-25" => (Y2020, "$defs", &SCHEMA_2025_11_25["$defs"]),
            "2025-06-18" => (
                "http://json-schema.org/draft-07/schema#",
                "definitions",
                &SCHEMA_2025_06_18["definitions"],
            ),
            other => panic!("no schema for {other}"),
        };
        let schema =
            json!({"$schema": dialect, "$ref": format!("#/{key}/{def}"), key: defs.clone()});
        Box::leak(Box::new(
            jsonschema::validator_for(&schema).expect("official schema compiles"),
        ))
    })
}

/// Asserts that `value` validates against definition `def` of `revision`'s
/// official schema.
#[track_caller]
pub fn assert_valid_in(revision: &str, def: &str, value: &Value) {
    let errors: Vec<String> = validator(revision, def)
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{value} is not a valid {revision} {def}: {errors:#?}"
    );
}

/// Asserts that `value` validates against the official 2026-07-28
/// definition `def`.
#[track_caller]
pub fn assert_valid(def: &str, value: &Value) {
    assert_valid_in("2026-07-28", def, value);
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

/// Asserts that a response of an initialize-era session is valid in its
/// revision, and its result a valid `result_def`; and that nothing of
/// 2026-07-28 leaked into it.
#[track_caller]
pub fn assert_legacy_response(revision: &str, response: &Value, result_def: &str) {
    let (ok, err) = match revision {
        "2025-06-18" => ("JSONRPCResponse", "JSONRPCError"),
        _ => ("JSONRPCResultResponse", "JSONRPCErrorResponse"),
    };
    if response.get("error").is_some() {
        assert_valid_in(revision, err, response);
    } else {
        assert_valid_in(revision, ok, response);
        assert_valid_in(revision, result_def, &response["result"]);
        let result = &response["result"];
        for key in ["resultType", "ttlMs", "cacheScope"] {
            assert!(result.get(key).is_none(), "{key} leaked into {response}");
        }
        assert!(
            result
                .get("_meta")
                .and_then(|m| m.get("io.modelcontextprotocol/serverInfo"))
                .is_none(),
            "serverInfo leaked into {response}"
        );
    }
}
