//! Array keywords: `items`, `minItems`, `maxItems` and `uniqueItems`.

use serde_json::{Value, json};

use super::{accepts, refused, rejects};

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
