//! Tests of `full`.

use super::*;
use serde_json::json;

use crate::schema::test_support::Checker;

const CHECK: Checker<Full> = Checker(Full);

fn accepts(schema: Value, instance: Value) {
    CHECK.accepts(schema, instance)
}
fn rejects(schema: Value, instance: Value, location: &str, rule: &str) {
    CHECK.rejects(schema, instance, location, rule)
}
fn refused(schema: Value) -> String {
    CHECK.refused(schema)
}

#[test]
fn default_dialect_is_2020_12_prefix_items() {
    let schema = json!({
        "type": "array",
        "prefixItems": [{"type": "string"}, {"type": "integer"}],
        "items": false
    });
    accepts(schema.clone(), json!(["a", 1]));
    accepts(schema.clone(), json!(["a"]));
    rejects(
        schema.clone(),
        json!(["a", "b"]),
        "/1",
        "type: value is not one of the declared JSON types (integer)",
    );
    rejects(
        schema,
        json!(["a", 1, true]),
        "/2",
        "false schema: no value is allowed here",
    );
}

#[test]
fn local_defs_ref_and_anchor() {
    let schema = json!({
        "$defs": {
            "name": {"type": "string", "minLength": 1},
            "count": {"$anchor": "count", "type": "integer", "minimum": 0}
        },
        "type": "object",
        "properties": {
            "name": {"$ref": "#/$defs/name"},
            "n": {"$ref": "#count"},
            "children": {"type": "array", "items": {"$ref": "#"}}
        }
    });
    accepts(
        schema.clone(),
        json!({"name": "a", "n": 1, "children": [{"name": "b", "children": []}]}),
    );
    rejects(
        schema.clone(),
        json!({"name": ""}),
        "/name",
        "minLength: must be at least 1 characters long",
    );
    rejects(
        schema.clone(),
        json!({"n": -1}),
        "/n",
        "minimum: must be at least 0",
    );
    rejects(
        schema,
        json!({"children": [{"n": 1.5}]}),
        "/children/0/n",
        "type: value is not one of the declared JSON types (integer)",
    );
}

#[test]
fn references_to_the_documents_own_ids_resolve() {
    let schema = json!({
        "$id": "https://example.com/root.json",
        "properties": {
            "a": {"$ref": "https://example.com/root.json#/$defs/a"},
            "b": {"$ref": "item.json"}
        },
        "$defs": {
            "a": {"type": "string"},
            "item": {"$id": "item.json", "type": "integer"}
        }
    });
    accepts(schema.clone(), json!({"a": "x", "b": 1}));
    rejects(
        schema,
        json!({"b": "x"}),
        "/b",
        "type: value is not one of the declared JSON types (integer)",
    );
}

#[test]
fn unevaluated_properties() {
    let schema = json!({
        "allOf": [{"properties": {"a": {"type": "string"}}}],
        "properties": {"b": true},
        "unevaluatedProperties": false
    });
    accepts(schema.clone(), json!({"a": "x", "b": 1}));
    rejects(
        schema.clone(),
        json!({"a": "x", "c": 1}),
        "",
        "unevaluatedProperties: property `c` is not allowed",
    );
    rejects(
        schema,
        json!({"d": 1, "c": 1}),
        "",
        "unevaluatedProperties: properties `c`, `d` are not allowed",
    );
}

#[test]
fn draft_07_schema_is_honoured() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"s": {"type": "string"}},
        "type": "array",
        "items": [{"$ref": "#/definitions/s"}, {"type": "integer"}],
        "additionalItems": false,
        "prefixItems": [{"type": "boolean"}]
    });
    accepts(schema.clone(), json!(["a", 1]));
    rejects(
        schema.clone(),
        json!([1]),
        "/0",
        "type: value is not one of the declared JSON types (string)",
    );
    rejects(
        schema,
        json!(["a", 1, 2]),
        "",
        "additionalItems: must have at most 2 items",
    );
    // draft-07 knows nothing of `prefixItems`; 2020-12 does.
    let prefix = json!({"prefixItems": [{"type": "boolean"}]});
    accepts(
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "prefixItems": [{"type": "boolean"}]}),
        json!(["a"]),
    );
    rejects(
        prefix,
        json!(["a"]),
        "/0",
        "type: value is not one of the declared JSON types (boolean)",
    );
}

#[test]
fn draft_04_boolean_exclusive_maximum() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-04/schema#",
        "maximum": 10,
        "exclusiveMaximum": true
    });
    accepts(schema.clone(), json!(9));
    rejects(
        schema,
        json!(10),
        "",
        "exclusiveMaximum: must be less than 10",
    );
}

#[test]
fn every_supported_dialect_uri_compiles() {
    for uri in [
        "https://json-schema.org/draft/2020-12/schema",
        "http://json-schema.org/draft/2020-12/schema#",
        "https://json-schema.org/draft/2019-09/schema",
        "http://json-schema.org/draft-07/schema#",
        "https://json-schema.org/draft-07/schema",
        "http://json-schema.org/draft-06/schema#",
        "http://json-schema.org/draft-04/schema#",
    ] {
        accepts(json!({"$schema": uri, "type": "string"}), json!("x"));
    }
}

#[test]
fn unknown_dialect_is_refused() {
    assert_eq!(
        refused(json!({"$schema": "https://example.com/my-meta-schema"})),
        "unsupported JSON Schema dialect: https://example.com/my-meta-schema"
    );
    assert_eq!(
        refused(json!({"$schema": "http://json-schema.org/draft-03/schema#"})),
        "unsupported JSON Schema dialect: http://json-schema.org/draft-03/schema#"
    );
    assert!(refused(json!({"$schema": 7})).contains("`$schema` must be a string"));
}

#[test]
fn remote_ref_is_refused_without_fetching() {
    let message = refused(json!({"$ref": "https://example.com/schema"}));
    assert!(message.contains("https://example.com/schema"), "{message}");
    assert!(message.contains("never fetched"), "{message}");
    let message = refused(json!({
        "properties": {"a": {"$ref": "http://example.com/defs.json#/$defs/a"}}
    }));
    assert!(
        message.contains("http://example.com/defs.json"),
        "{message}"
    );
}

#[test]
fn file_and_relative_refs_are_refused() {
    let message = refused(json!({"$ref": "file:///etc/passwd"}));
    assert!(message.contains("file:///etc/passwd"), "{message}");
    assert!(message.contains("never fetched"), "{message}");
    let message = refused(json!({"$ref": "other.json"}));
    assert!(message.contains("other.json"), "{message}");
    assert!(message.contains("never fetched"), "{message}");
}

#[test]
fn missing_local_target_is_refused() {
    let message = refused(json!({"$ref": "#/$defs/missing"}));
    assert!(message.contains("unresolvable reference"), "{message}");
}

#[test]
fn invalid_keyword_values_are_refused() {
    let message = refused(json!({"minLength": "x"}));
    assert!(message.starts_with("invalid schema at"), "{message}");
    refused(json!({"type": "float"}));
    refused(json!({"required": "a"}));
}

#[test]
fn format_is_an_annotation_in_2020_12_and_asserted_in_draft_07() {
    accepts(json!({"format": "email"}), json!("not an email"));
    rejects(
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "format": "email"}),
        json!("not an email"),
        "",
        "format: is not a valid `email`",
    );
}

#[test]
fn rules_by_kind() {
    let cases = [
        // jsonschema names a union's types in its own order, not the declared one.
        (
            json!({"type": ["integer", "null"]}),
            json!("x"),
            "",
            "type: value is not one of the declared JSON types (null, integer)",
        ),
        (
            json!({"const": 1}),
            serde_json::from_str("1.0").unwrap(),
            "",
            "",
        ),
        (
            json!({"const": 1}),
            json!(2),
            "",
            "const: value is not the declared constant",
        ),
        (
            json!({"enum": [1, 2]}),
            json!(3),
            "",
            "enum: value is not one of the allowed values",
        ),
        (
            json!({"required": ["a", "b"]}),
            json!({"a": 1}),
            "",
            "required: missing property `b`",
        ),
        (
            json!({"additionalProperties": false}),
            json!({"x": 1}),
            "",
            "additionalProperties: property `x` is not allowed",
        ),
        (
            json!({"additionalProperties": false}),
            json!({"y": 1, "x": {}}),
            "",
            "additionalProperties: properties `x`, `y` are not allowed",
        ),
        (
            json!({"properties": {"a": true}, "additionalProperties": false}),
            json!({"a": 1, "x": 1}),
            "",
            "additionalProperties: property `x` is not allowed",
        ),
        (
            json!({"properties": {"o": {"additionalProperties": false}}}),
            json!({"o": {"x": 1}}),
            "/o",
            "additionalProperties: property `x` is not allowed",
        ),
        (
            json!({"properties": {"additionalProperties": false}}),
            json!({"additionalProperties": {}}),
            "/additionalProperties",
            "false schema: no value is allowed here",
        ),
        (
            json!({"patternProperties": {"^a": false}}),
            json!({"ab": 1}),
            "/ab",
            "false schema: no value is allowed here",
        ),
        (
            json!({"items": false}),
            json!([1]),
            "/0",
            "false schema: no value is allowed here",
        ),
        (
            json!({"minProperties": 2}),
            json!({}),
            "",
            "minProperties: must have at least 2 properties",
        ),
        (
            json!({"maxProperties": 0}),
            json!({"a": 1}),
            "",
            "maxProperties: must have at most 0 properties",
        ),
        (
            json!({"minItems": 1}),
            json!([]),
            "",
            "minItems: must have at least 1 items",
        ),
        (
            json!({"maxItems": 1}),
            json!([1, 2]),
            "",
            "maxItems: must have at most 1 items",
        ),
        (
            json!({"uniqueItems": true}),
            json!([1, 1]),
            "",
            "uniqueItems: items must be unique",
        ),
        (
            json!({"contains": {"type": "string"}}),
            json!([1]),
            "",
            "contains: no item matches the declared schema",
        ),
        (
            json!({"minLength": 6}),
            json!("héllo"),
            "",
            "minLength: must be at least 6 characters long",
        ),
        (
            json!({"maxLength": 4}),
            json!("héllo"),
            "",
            "maxLength: must be at most 4 characters long",
        ),
        (
            json!({"pattern": "^a"}),
            json!("b"),
            "",
            "pattern: does not match the declared pattern",
        ),
        (
            json!({"minimum": 1}),
            json!(0),
            "",
            "minimum: must be at least 1",
        ),
        (
            json!({"maximum": 10}),
            json!(11),
            "",
            "maximum: must be at most 10",
        ),
        (
            json!({"exclusiveMinimum": 0}),
            json!(0),
            "",
            "exclusiveMinimum: must be greater than 0",
        ),
        (
            json!({"exclusiveMaximum": 1.5}),
            json!(2),
            "",
            "exclusiveMaximum: must be less than 1.5",
        ),
        (
            json!({"multipleOf": 3}),
            json!(4),
            "",
            "multipleOf: must be a multiple of 3",
        ),
        (
            json!(false),
            json!(1),
            "",
            "false schema: no value is allowed here",
        ),
        (
            json!({"not": {"type": "string"}}),
            json!("x"),
            "",
            "not: value must not match the declared schema",
        ),
        (
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
            json!(1),
            "",
            "anyOf: value does not match any of the alternatives",
        ),
        (
            json!({"oneOf": [{"type": "string"}, {"type": "null"}]}),
            json!(1),
            "",
            "oneOf: value does not match any of the alternatives",
        ),
        (
            json!({"oneOf": [{"type": "number"}, {"type": "integer"}]}),
            json!(1),
            "",
            "oneOf: value matches more than one alternative",
        ),
        (
            json!({"propertyNames": {"maxLength": 2}}),
            json!({"abc": 1}),
            "",
            "propertyNames: a property name does not satisfy the declared schema (maxLength: must be at most 2 characters long)",
        ),
        (
            json!({"prefixItems": [true], "unevaluatedItems": false}),
            json!([1, 2]),
            "",
            "unevaluatedItems: items not evaluated by the schema are not allowed",
        ),
        (
            json!({"properties": {"a/b": {"items": {"type": "string"}}}}),
            json!({"a/b": ["x", 1]}),
            "/a~1b/1",
            "type: value is not one of the declared JSON types (string)",
        ),
        (
            json!({"additionalProperties": {"type": "string"}}),
            json!({"m~n": 1}),
            "/m~0n",
            "type: value is not one of the declared JSON types (string)",
        ),
    ];
    for (schema, instance, location, rule) in cases {
        if rule.is_empty() {
            accepts(schema, instance);
        } else {
            rejects(schema, instance, location, rule);
        }
    }
}

const SECRET: &str = "SECRET-123";

#[test]
fn violations_never_contain_the_value() {
    let draft7 = "http://json-schema.org/draft-07/schema#";
    let cases = [
        (json!({"type": "integer"}), json!(SECRET)),
        (json!({"const": "x"}), json!(SECRET)),
        (json!({"enum": ["x", 1]}), json!(SECRET)),
        (json!({"minLength": 11}), json!(SECRET)),
        (json!({"maxLength": 3}), json!(SECRET)),
        (json!({"pattern": "^[a-z]+$"}), json!(SECRET)),
        (json!({"$schema": draft7, "format": "email"}), json!(SECRET)),
        (json!({"$schema": draft7, "format": "date"}), json!(SECRET)),
        (json!({"not": {"type": "string"}}), json!(SECRET)),
        (json!({"anyOf": [{"type": "null"}]}), json!(SECRET)),
        (json!({"oneOf": [{"type": "null"}]}), json!(SECRET)),
        (json!({"oneOf": [true, true]}), json!(SECRET)),
        (json!({"allOf": [{"maxLength": 1}]}), json!(SECRET)),
        (json!({"if": true, "then": {"type": "null"}}), json!(SECRET)),
        (json!(false), json!(SECRET)),
        (json!({"uniqueItems": true}), json!([SECRET, SECRET])),
        (json!({"maxItems": 1}), json!([SECRET, SECRET])),
        (json!({"contains": {"type": "null"}}), json!([SECRET])),
        (json!({"items": {"type": "null"}}), json!([SECRET])),
        (
            json!({"prefixItems": [true], "unevaluatedItems": false}),
            json!([1, SECRET]),
        ),
        (
            json!({"$schema": draft7, "items": [true], "additionalItems": false}),
            json!([1, SECRET]),
        ),
        (json!({"maximum": 10}), json!(123_456_789)),
        (json!({"multipleOf": 10}), json!(123_456_789)),
        (json!({"exclusiveMinimum": 200_000_000}), json!(123_456_789)),
        (json!({"additionalProperties": false}), json!({"k": SECRET})),
        (
            json!({"unevaluatedProperties": false}),
            json!({"k": SECRET}),
        ),
        (
            json!({"properties": {"k": {"type": "object"}}}),
            json!({"k": SECRET}),
        ),
        (json!({"required": ["r"]}), json!({"k": SECRET})),
        (json!({"maxProperties": 0}), json!({"k": SECRET})),
        (
            json!({"dependentRequired": {"k": ["r"]}}),
            json!({"k": SECRET}),
        ),
        (
            json!({"$schema": draft7, "contentEncoding": "base64"}),
            json!(SECRET),
        ),
        (
            json!({"$schema": draft7, "contentMediaType": "application/json"}),
            json!(SECRET),
        ),
    ];
    CHECK.never_repeats(cases, &[SECRET, "123456789"]);
}

#[test]
fn full_is_usable_as_a_trait_object() {
    let validator: Box<dyn Validator> = Box::new(Full);
    let compiled = validator.compile(&json!({"type": "string"})).unwrap();
    assert!(compiled.validate(&json!("ok")).is_ok());
}
