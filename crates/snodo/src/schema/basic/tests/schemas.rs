//! Schemas as a whole: keyword values of the wrong type, schema locations,
//! boolean schemas, the order of checks, unknown keywords, instance
//! locations, and use as a trait object.

use serde_json::json;

use super::{accepts, refused, rejects};
use crate::schema::Validator;
use crate::schema::basic::Basic;

#[test]
fn keyword_values_of_the_wrong_type_are_refused() {
    for (schema, expected) in [
        (
            json!({"minLength": "x"}),
            "`minLength` must be a non-negative integer",
        ),
        (
            json!({"maxLength": -1}),
            "`maxLength` must be a non-negative integer",
        ),
        (
            json!({"minItems": 1.5}),
            "`minItems` must be a non-negative integer",
        ),
        (
            json!({"maxItems": null}),
            "`maxItems` must be a non-negative integer",
        ),
        (
            json!({"minProperties": true}),
            "`minProperties` must be a non-negative integer",
        ),
        (
            json!({"maxProperties": [1]}),
            "`maxProperties` must be a non-negative integer",
        ),
        (json!({"minimum": "3"}), "`minimum` must be a number"),
        (json!({"maximum": null}), "`maximum` must be a number"),
        (
            json!({"exclusiveMinimum": true}),
            "`exclusiveMinimum` must be a number",
        ),
        (
            json!({"exclusiveMaximum": "1"}),
            "`exclusiveMaximum` must be a number",
        ),
        (
            json!({"properties": []}),
            "`properties` must be an object of schemas",
        ),
        (
            json!({"properties": {"a": 1}}),
            "a schema must be an object or a boolean",
        ),
        (
            json!({"additionalProperties": 1}),
            "a schema must be an object or a boolean",
        ),
        (
            json!({"items": "string"}),
            "a schema must be an object or a boolean",
        ),
        (json!("string"), "a schema must be an object or a boolean"),
        (json!(null), "a schema must be an object or a boolean"),
    ] {
        let message = refused(schema.clone());
        assert!(message.contains(expected), "{schema}: {message}");
    }
    // Integral floats are integers to JSON Schema.
    accepts(json!({"minLength": 2.0}), json!("ab"));
}

#[test]
fn schema_errors_name_the_schema_location() {
    let message = refused(json!({
        "properties": {"a/b": {"items": {"minItems": "x"}}}
    }));
    assert_eq!(
        message,
        "`minItems` must be a non-negative integer \
         (at schema location `#/properties/a~1b/items`)"
    );
}

#[test]
fn boolean_schemas() {
    accepts(json!(true), json!({"anything": [1]}));
    rejects(
        json!(false),
        json!(null),
        "",
        "false schema: no value is allowed here",
    );
    let schema = json!({"properties": {"gone": false, "any": true}});
    accepts(schema.clone(), json!({"any": 1}));
    rejects(
        schema,
        json!({"gone": 1}),
        "/gone",
        "false schema: no value is allowed here",
    );
    rejects(
        json!({"items": false}),
        json!([1]),
        "/0",
        "false schema: no value is allowed here",
    );
    accepts(json!({"items": false}), json!([]));
}

#[test]
fn checks_type_then_const_then_enum_then_shape() {
    let schema = json!({
        "minLength": 10,
        "enum": ["a", "bb"],
        "const": "bb",
        "type": "string"
    });
    rejects(
        schema.clone(),
        json!(5),
        "",
        "type: value is not one of the declared JSON types (string)",
    );
    rejects(
        schema.clone(),
        json!("a"),
        "",
        "const: value is not the declared constant",
    );
    rejects(
        json!({"enum": ["a", "bb"], "minLength": 10}),
        json!("c"),
        "",
        "enum: value is not one of the allowed values",
    );
    rejects(
        schema,
        json!("bb"),
        "",
        "minLength: must be at least 10 characters long",
    );
}

#[test]
fn stops_at_the_first_error() {
    let schema = json!({
        "required": ["r"],
        "properties": {"a": {"type": "string"}},
        "additionalProperties": false
    });
    rejects(
        schema.clone(),
        json!({"a": 1, "x": 1}),
        "",
        "required: missing property `r`",
    );
    rejects(
        schema,
        json!({"r": 1, "a": 1, "x": 1}),
        "/a",
        "type: value is not one of the declared JSON types (string)",
    );
}

#[test]
fn unknown_keywords_are_ignored() {
    accepts(
        json!({
            "$ref": "https://example.com/never-fetched",
            "anyOf": [{"type": "string"}],
            "format": "email",
            "multipleOf": 7,
            "x-mcp-header": "Name",
            "title": "t",
            "description": "d",
            "default": 1
        }),
        json!(3),
    );
}

#[test]
fn locations_are_escaped_json_pointers() {
    rejects(
        json!({"properties": {"a/b": {"properties": {"m~n": {"type": "null"}}}}}),
        json!({"a/b": {"m~n": 1}}),
        "/a~1b/m~0n",
        "type: value is not one of the declared JSON types (null)",
    );
    rejects(
        json!({"additionalProperties": {"items": {"type": "string"}}}),
        json!({"~/": ["a", 0]}),
        "/~0~1/1",
        "type: value is not one of the declared JSON types (string)",
    );
}

#[test]
fn basic_is_usable_as_a_trait_object() {
    let validator: Box<dyn Validator> = Box::new(Basic);
    let compiled = validator.compile(&json!({"type": "string"})).unwrap();
    assert!(compiled.validate(&json!("ok")).is_ok());
}
