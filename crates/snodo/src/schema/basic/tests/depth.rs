//! Depth: deep schemas are refused and deep instances do not overflow the
//! stack.

use serde_json::{Value, json};

use super::{compile, refused};
use crate::schema::{ValidationError, Violation};

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
