//! The instance's values: violations never contain them, and arbitrary
//! instances never panic.

use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{Value, json};

use super::{CHECK, compile};
use crate::schema::{CompiledSchema, ValidationError};

const SECRET: &str = "SECRET-123";

#[test]
fn violations_never_contain_the_value() {
    let cases = [
        (json!({"type": "integer"}), json!(SECRET)),
        (json!({"const": "x"}), json!(SECRET)),
        (json!({"enum": ["x", 1]}), json!(SECRET)),
        (json!({"minLength": 11}), json!(SECRET)),
        (json!({"maxLength": 3}), json!(SECRET)),
        (json!({"pattern": "^[a-z]+$"}), json!(SECRET)),
        (json!({"uniqueItems": true}), json!([SECRET, SECRET])),
        (json!({"maxItems": 1}), json!([SECRET, SECRET])),
        (json!({"items": {"type": "null"}}), json!([SECRET])),
        (json!({"maximum": 10}), json!(123_456_789)),
        (json!({"exclusiveMinimum": 200_000_000}), json!(123_456_789)),
        (json!({"additionalProperties": false}), json!({"k": SECRET})),
        (
            json!({"properties": {"k": {"type": "object"}}}),
            json!({"k": SECRET}),
        ),
        (json!({"required": ["r"]}), json!({"k": SECRET})),
        (json!({"maxProperties": 0}), json!({"k": SECRET})),
        (json!(false), json!(SECRET)),
    ];
    CHECK.never_repeats(cases, &[SECRET, "123456789"]);
}

fn arbitrary_json() -> impl Strategy<Value = Value> {
    // Keys may appear in rules (`additionalProperties` names them); the
    // secret is only ever a value.
    let key = prop_oneof![
        any::<String>(),
        prop::sample::select(vec!["", "a", "b", "x/y", "m~n", "héllo"]).prop_map(str::to_owned),
    ];
    let string = prop_oneof![key.clone(), Just(SECRET.to_owned()),];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-20i64..20).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        (-40i32..40).prop_map(|n| Value::from(f64::from(n) / 4.0)),
        string.clone().prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 96, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(key.clone(), inner, 0..6)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

fn rich_schemas() -> Vec<Arc<dyn CompiledSchema>> {
    let scalar = json!({
        "type": ["integer", "string", "number", "null", "boolean"],
        "minimum": -5, "maximum": 5.5,
        "exclusiveMinimum": -10, "exclusiveMaximum": 10,
        "minLength": 1, "maxLength": 3, "pattern": "^[a-z]+$"
    });
    let collection = json!({
        "minItems": 1, "maxItems": 4, "uniqueItems": true,
        "items": {"enum": [1, "a", null, [1], {"a": 1.0}]},
        "minProperties": 1, "maxProperties": 4,
        "additionalProperties": {"items": {"uniqueItems": true}}
    });
    let recursive = {
        let mut schema = json!({"uniqueItems": true, "not": "checked"});
        for _ in 0..8 {
            schema = json!({
                "items": schema.clone(),
                "additionalProperties": schema,
                "properties": {"a": {"const": {"k": [1, 2.0]}}, "b": false}
            });
        }
        schema
    };
    vec![
        compile(json!({
            "required": ["a"],
            "properties": {
                "a": scalar.clone(),
                "b": collection.clone(),
                "x/y": {"const": {"k": [1, 2.0]}},
                "SECRET-123": false
            },
            "additionalProperties": scalar.clone()
        })),
        compile(scalar),
        compile(collection),
        compile(recursive),
        compile(json!({"additionalProperties": false, "items": false})),
        compile(json!({"type": "object", "properties": {"": true}})),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_instances_never_panic(instance in arbitrary_json()) {
        for compiled in rich_schemas() {
            match compiled.validate(&instance) {
                Ok(()) => {}
                Err(ValidationError::Invalid(v)) => {
                    // The location always points into the instance.
                    prop_assert!(instance.pointer(&v.location).is_some(), "{:?}", v);
                    prop_assert!(!v.rule.contains(SECRET), "{:?}", v);
                }
                Err(ValidationError::Failed(reason)) => {
                    prop_assert!(false, "validator failed: {}", reason);
                }
            }
        }
    }
}
