//! The bundled validator's tests.

mod arrays;
mod depth;
mod numbers;
mod objects;
mod schemas;
mod strings;
mod types;
mod values;

use std::sync::Arc;

use serde_json::Value;

use super::Basic;
use crate::schema::CompiledSchema;
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
