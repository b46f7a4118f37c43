//! Number keywords: `minimum`, `maximum`, `exclusiveMinimum` and
//! `exclusiveMaximum`.

use serde_json::json;

use super::{accepts, rejects};

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
