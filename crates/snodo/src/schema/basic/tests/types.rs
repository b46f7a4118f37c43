//! `type`, `const` and `enum`.

use serde_json::{Value, json};

use super::{accepts, refused, rejects};

#[test]
fn type_single_name() {
    accepts(json!({"type": "string"}), json!("x"));
    accepts(json!({"type": "null"}), json!(null));
    accepts(json!({"type": "boolean"}), json!(false));
    accepts(json!({"type": "object"}), json!({}));
    accepts(json!({"type": "array"}), json!([]));
    rejects(
        json!({"type": "string"}),
        json!(1),
        "",
        "type: value is not one of the declared JSON types (string)",
    );
    rejects(
        json!({"type": "object"}),
        json!([]),
        "",
        "type: value is not one of the declared JSON types (object)",
    );
}

#[test]
fn type_integer_is_not_a_float_one() {
    accepts(json!({"type": "integer"}), json!(1));
    accepts(json!({"type": "integer"}), json!(-7));
    accepts(json!({"type": "integer"}), json!(u64::MAX));
    let float_one: Value = serde_json::from_str("1.0").unwrap();
    rejects(
        json!({"type": "integer"}),
        float_one.clone(),
        "",
        "type: value is not one of the declared JSON types (integer)",
    );
    accepts(json!({"type": "number"}), float_one);
    accepts(json!({"type": "number"}), json!(1));
    rejects(
        json!({"type": "integer"}),
        json!("1"),
        "",
        "type: value is not one of the declared JSON types (integer)",
    );
}

#[test]
fn type_union() {
    let schema = json!({"type": ["integer", "null"]});
    accepts(schema.clone(), json!(3));
    accepts(schema.clone(), json!(null));
    rejects(
        schema,
        json!(2.5),
        "",
        "type: value is not one of the declared JSON types (integer, null)",
    );
    // Duplicates are tolerated and named once.
    rejects(
        json!({"type": ["string", "string"]}),
        json!(true),
        "",
        "type: value is not one of the declared JSON types (string)",
    );
}

#[test]
fn type_empty_list_or_unknown_name_is_refused() {
    for schema in [
        json!({"type": []}),
        json!({"type": "float"}),
        json!({"type": ["string", "date"]}),
        json!({"type": 1}),
        json!({"type": [1]}),
    ] {
        let message = refused(schema);
        assert!(
            message.contains("`type` must name one or more supported JSON types"),
            "{message}"
        );
    }
}

#[test]
fn const_compares_numbers_by_value() {
    accepts(json!({"const": 1}), serde_json::from_str("1.0").unwrap());
    accepts(json!({"const": 1.0}), json!(1));
    accepts(
        json!({"const": {"a": [1, null], "b": "x"}}),
        serde_json::from_str(r#"{"b": "x", "a": [1.0, null]}"#).unwrap(),
    );
    rejects(
        json!({"const": 1}),
        json!(1.5),
        "",
        "const: value is not the declared constant",
    );
    rejects(
        json!({"const": {"a": 1}}),
        json!({"a": 1, "b": 2}),
        "",
        "const: value is not the declared constant",
    );
    rejects(
        json!({"const": [1, 2]}),
        json!([2, 1]),
        "",
        "const: value is not the declared constant",
    );
    rejects(
        json!({"const": null}),
        json!(false),
        "",
        "const: value is not the declared constant",
    );
    // Large integers keep their precision.
    rejects(
        json!({"const": 9_007_199_254_740_993_u64}),
        json!(9_007_199_254_740_992.0),
        "",
        "const: value is not the declared constant",
    );
}

#[test]
fn enum_compares_numbers_by_value() {
    let schema = json!({"enum": [1, "one", [2], {"k": 3}]});
    accepts(schema.clone(), serde_json::from_str("1.0").unwrap());
    accepts(schema.clone(), json!("one"));
    accepts(schema.clone(), serde_json::from_str("[2.0]").unwrap());
    accepts(
        schema.clone(),
        serde_json::from_str(r#"{"k": 3.0}"#).unwrap(),
    );
    rejects(
        schema.clone(),
        json!(2),
        "",
        "enum: value is not one of the allowed values",
    );
    rejects(
        schema,
        json!("One"),
        "",
        "enum: value is not one of the allowed values",
    );
}

#[test]
fn enum_must_be_an_array() {
    assert!(refused(json!({"enum": "a"})).contains("`enum` must be an array"));
    assert!(refused(json!({"enum": {"a": 1}})).contains("`enum` must be an array"));
}
