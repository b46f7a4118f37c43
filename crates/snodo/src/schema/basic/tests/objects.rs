//! Object keywords: `required`, `properties`, `additionalProperties`,
//! `minProperties` and `maxProperties`.

use serde_json::json;

use super::{accepts, refused, rejects};

#[test]
fn required_names_the_missing_property() {
    let schema = json!({"required": ["a", "b"]});
    accepts(schema.clone(), json!({"a": 1, "b": null}));
    accepts(schema.clone(), json!("not an object"));
    rejects(
        schema,
        json!({"a": 1}),
        "",
        "required: missing property `b`",
    );
    rejects(
        json!({"properties": {"o": {"required": ["z"]}}}),
        json!({"o": {}}),
        "/o",
        "required: missing property `z`",
    );
}

#[test]
fn required_must_be_unique_strings() {
    for schema in [
        json!({"required": "a"}),
        json!({"required": ["a", 1]}),
        json!({"required": ["a", "a"]}),
    ] {
        assert!(refused(schema).contains("`required` must be an array of unique strings"));
    }
}

#[test]
fn properties_are_checked_in_sorted_name_order() {
    let schema = json!({
        "properties": {
            "b": {"type": "string"},
            "a": {"type": "string"},
            "c": {"type": "string"}
        }
    });
    accepts(schema.clone(), json!({"a": "x", "z": 1}));
    rejects(
        schema.clone(),
        json!({"c": 3, "b": 2, "a": 1}),
        "/a",
        "type: value is not one of the declared JSON types (string)",
    );
    rejects(
        schema,
        json!({"c": 3, "b": 2}),
        "/b",
        "type: value is not one of the declared JSON types (string)",
    );
}

#[test]
fn additional_properties_false_names_the_first_extra_in_sorted_order() {
    let schema = json!({"properties": {"a": {}}, "additionalProperties": false});
    accepts(schema.clone(), json!({"a": 1}));
    rejects(
        schema,
        json!({"zz": 1, "a": 1, "m": 2}),
        "",
        "additionalProperties: property `m` is not allowed",
    );
}

#[test]
fn additional_properties_schema_applies_to_extras() {
    let schema = json!({
        "properties": {"a": {"type": "string"}},
        "additionalProperties": {"type": "integer", "maximum": 10}
    });
    accepts(schema.clone(), json!({"a": "x", "n": 3, "m": 10}));
    rejects(
        schema.clone(),
        json!({"a": "x", "y": 11, "x": "str"}),
        "/x",
        "type: value is not one of the declared JSON types (integer)",
    );
    rejects(
        schema,
        json!({"y": 11}),
        "/y",
        "maximum: must be at most 10",
    );
    accepts(
        json!({"additionalProperties": true}),
        json!({"anything": [1, 2]}),
    );
}

#[test]
fn min_and_max_properties() {
    let schema = json!({"minProperties": 1, "maxProperties": 2});
    accepts(schema.clone(), json!({"a": 1}));
    rejects(
        schema.clone(),
        json!({}),
        "",
        "minProperties: must have at least 1 properties",
    );
    rejects(
        schema,
        json!({"a": 1, "b": 2, "c": 3}),
        "",
        "maxProperties: must have at most 2 properties",
    );
}
