//! The bundled validator's tests.

use std::sync::Arc;

use serde_json::Value;

use super::*;
use crate::schema::{CompiledSchema, ValidationError, Validator, Violation};
use proptest::prelude::*;
use serde_json::json;

use crate::schema::test_support::Checker;

const CHECK: Checker<Basic> = Checker(Basic);

fn compile(schema: Value) -> Arc<dyn CompiledSchema> {
    CHECK.compile(schema)
}
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

#[test]
fn items_applies_to_every_element() {
    let schema = json!({"items": {"type": "integer"}});
    accepts(schema.clone(), json!([]));
    accepts(schema.clone(), json!([1, 2, 3]));
    rejects(
        schema,
        json!([1, 2, "three", null]),
        "/2",
        "type: value is not one of the declared JSON types (integer)",
    );
    rejects(
        json!({"items": {"items": {"minimum": 0}}}),
        json!([[0], [1, -1]]),
        "/1/1",
        "minimum: must be at least 0",
    );
}

#[test]
fn items_array_form_is_refused() {
    assert!(refused(json!({"items": [{"type": "string"}]})).contains("`items`"));
}

#[test]
fn min_and_max_items() {
    let schema = json!({"minItems": 1, "maxItems": 2});
    accepts(schema.clone(), json!([1, 2]));
    rejects(
        schema.clone(),
        json!([]),
        "",
        "minItems: must have at least 1 items",
    );
    rejects(
        schema,
        json!([1, 2, 3]),
        "",
        "maxItems: must have at most 2 items",
    );
}

#[test]
fn unique_items_uses_json_equality() {
    let schema = json!({"uniqueItems": true});
    accepts(
        schema.clone(),
        json!([1, "1", [1], {"a": 1}, null, true, 1.5]),
    );
    accepts(schema.clone(), json!([{"a": 1}, {"a": 1, "b": 2}]));
    accepts(schema.clone(), json!([[1, 2], [2, 1]]));
    accepts(json!({"uniqueItems": false}), json!([1, 1]));
    for duplicated in [
        serde_json::from_str::<Value>("[1, 1.0]").unwrap(),
        json!(["a", "b", "a"]),
        json!([{"a": 1, "b": [2]}, {"b": [2], "a": 1}]),
        json!([null, null]),
        json!([0, -0.0]),
    ] {
        rejects(
            schema.clone(),
            duplicated,
            "",
            "uniqueItems: items must be unique",
        );
    }
}

#[test]
fn unique_items_must_be_a_boolean() {
    assert!(refused(json!({"uniqueItems": "yes"})).contains("`uniqueItems` must be a boolean"));
    assert!(refused(json!({"uniqueItems": 1})).contains("`uniqueItems` must be a boolean"));
}

#[test]
fn min_length_counts_characters_not_bytes() {
    assert_eq!("héllo".len(), 6);
    accepts(json!({"minLength": 5, "maxLength": 5}), json!("héllo"));
    accepts(json!({"maxLength": 2}), json!("日本"));
    rejects(
        json!({"minLength": 6}),
        json!("héllo"),
        "",
        "minLength: must be at least 6 characters long",
    );
    rejects(
        json!({"minLength": 1}),
        json!(""),
        "",
        "minLength: must be at least 1 characters long",
    );
}

#[test]
fn max_length() {
    rejects(
        json!({"maxLength": 4}),
        json!("héllo"),
        "",
        "maxLength: must be at most 4 characters long",
    );
    // Length keywords only apply to strings.
    accepts(json!({"maxLength": 1}), json!([1, 2, 3]));
}

#[test]
fn pattern_is_an_unanchored_search() {
    let schema = json!({"pattern": "[0-9]{3}"});
    accepts(schema.clone(), json!("abc123def"));
    rejects(
        schema.clone(),
        json!("abc12"),
        "",
        "pattern: does not match the declared pattern",
    );
    accepts(schema, json!(42));
    let anchored = json!({"pattern": "^[a-z]+$"});
    accepts(anchored.clone(), json!("abc"));
    rejects(
        anchored,
        json!("abc1"),
        "",
        "pattern: does not match the declared pattern",
    );
}

#[test]
fn invalid_regex_is_refused() {
    let message = refused(json!({"properties": {"p": {"pattern": "(unclosed"}}}));
    assert!(
        message.contains("`pattern` is not a valid regular expression"),
        "{message}"
    );
    assert!(message.contains("#/properties/p"), "{message}");
    assert!(refused(json!({"pattern": 5})).contains("`pattern` must be a string"));
}

#[test]
fn minimum_and_maximum() {
    let schema = json!({"minimum": 1, "maximum": 10});
    accepts(schema.clone(), json!(1));
    accepts(schema.clone(), json!(10));
    accepts(schema.clone(), json!(10.0));
    accepts(schema.clone(), json!(5.5));
    rejects(
        schema.clone(),
        json!(0.5),
        "",
        "minimum: must be at least 1",
    );
    rejects(schema.clone(), json!(-3), "", "minimum: must be at least 1");
    rejects(
        schema.clone(),
        json!(10.5),
        "",
        "maximum: must be at most 10",
    );
    rejects(schema, json!(u64::MAX), "", "maximum: must be at most 10");
    rejects(
        json!({"maximum": 2.5}),
        json!(3),
        "",
        "maximum: must be at most 2.5",
    );
    accepts(json!({"maximum": 2.5}), json!(2));
    rejects(
        json!({"minimum": -1e300}),
        json!(-1e301),
        "",
        "minimum: must be at least -1e+300",
    );
    accepts(json!({"minimum": -1e300}), json!(i64::MIN));
}

#[test]
fn exclusive_minimum_and_maximum() {
    let schema = json!({"exclusiveMinimum": 0, "exclusiveMaximum": 1.5});
    accepts(schema.clone(), json!(1));
    accepts(schema.clone(), json!(0.001));
    rejects(
        schema.clone(),
        json!(0),
        "",
        "exclusiveMinimum: must be greater than 0",
    );
    rejects(
        schema.clone(),
        json!(0.0),
        "",
        "exclusiveMinimum: must be greater than 0",
    );
    rejects(
        schema.clone(),
        json!(1.5),
        "",
        "exclusiveMaximum: must be less than 1.5",
    );
    rejects(
        schema,
        json!(2),
        "",
        "exclusiveMaximum: must be less than 1.5",
    );
}

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

fn nested(levels: usize) -> Value {
    let mut schema = json!({"type": "string"});
    for _ in 1..levels {
        schema = json!({"properties": {"p": schema}});
    }
    schema
}

#[test]
fn schemas_deeper_than_64_levels_are_refused() {
    let compiled = compile(nested(64));
    let mut instance = json!(1);
    for _ in 1..64 {
        instance = json!({"p": instance});
    }
    let Err(ValidationError::Invalid(v)) = compiled.validate(&instance) else {
        panic!("expected a violation");
    };
    assert_eq!(v.location, "/p".repeat(63));
    let message = refused(nested(65));
    assert!(
        message.contains("schema nesting exceeds 64 levels"),
        "{message}"
    );
    let mut items = json!({});
    for _ in 0..64 {
        items = json!({"items": items});
    }
    assert!(refused(items).contains("schema nesting exceeds 64 levels"));
}

#[test]
fn very_deep_instances_do_not_overflow_the_stack() {
    let mut deep = json!(0);
    for _ in 0..200_000 {
        deep = Value::Array(vec![deep]);
    }
    let pair = Value::Array(vec![deep.clone_shallow(), deep]);
    let compiled = compile(json!({"uniqueItems": true, "const": [[1]]}));
    let result = compiled.validate(&pair);
    assert!(matches!(result, Err(ValidationError::Invalid(_))));
    let compiled = compile(json!({"uniqueItems": true}));
    let result = compiled.validate(&pair);
    assert_eq!(
        result,
        Err(ValidationError::Invalid(Violation::new(
            "",
            "uniqueItems: items must be unique"
        )))
    );
    // serde_json drops values recursively; leak this one instead.
    std::mem::forget(pair);
}

/// Builds an equal copy of a deeply nested single-element array without
/// recursion.
trait CloneShallow {
    fn clone_shallow(&self) -> Value;
}

impl CloneShallow for Value {
    fn clone_shallow(&self) -> Value {
        let mut depth = 0;
        let mut cursor = self;
        while let Value::Array(items) = cursor {
            depth += 1;
            cursor = &items[0];
        }
        let mut copy = cursor.clone();
        for _ in 0..depth {
            copy = Value::Array(vec![copy]);
        }
        copy
    }
}

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

#[test]
fn basic_is_usable_as_a_trait_object() {
    let validator: Box<dyn Validator> = Box::new(Basic);
    let compiled = validator.compile(&json!({"type": "string"})).unwrap();
    assert!(compiled.validate(&json!("ok")).is_ok());
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
