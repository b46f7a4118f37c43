//! String keywords: `minLength`, `maxLength` and `pattern`.

use serde_json::json;

use super::{accepts, refused, rejects};

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
