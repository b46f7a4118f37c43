//! What the validators' tests share: compile a schema, expect an instance to
//! pass, or expect the first violation at a location.

use std::sync::Arc;

use serde_json::Value;

use super::{CompiledSchema, ValidationError, Validator, Violation};

/// A validator under test.
pub(crate) struct Checker<V>(pub(crate) V);

impl<V: Validator> Checker<V> {
    pub(crate) fn compile(&self, schema: Value) -> Arc<dyn CompiledSchema> {
        match self.0.compile(&schema) {
            Ok(compiled) => compiled,
            Err(e) => panic!("schema {schema} refused: {e}"),
        }
    }

    pub(crate) fn accepts(&self, schema: Value, instance: Value) {
        let compiled = self.compile(schema.clone());
        if let Err(e) = compiled.validate(&instance) {
            panic!("{instance} against {schema}: {e:?}");
        }
    }

    pub(crate) fn violation(&self, schema: Value, instance: Value) -> Violation {
        match self.compile(schema.clone()).validate(&instance) {
            Err(ValidationError::Invalid(v)) => v,
            other => panic!("{instance} against {schema}: expected a violation, got {other:?}"),
        }
    }

    pub(crate) fn rejects(&self, schema: Value, instance: Value, location: &str, rule: &str) {
        let v = self.violation(schema, instance);
        assert_eq!((v.location.as_str(), v.rule.as_str()), (location, rule));
    }

    pub(crate) fn refused(&self, schema: Value) -> String {
        match self.0.compile(&schema) {
            Ok(_) => panic!("schema {schema} was accepted"),
            Err(e) => e.message,
        }
    }

    /// Asserts that no violation's rule or location contains any of `values`.
    pub(crate) fn never_repeats(
        &self,
        cases: impl IntoIterator<Item = (Value, Value)>,
        values: &[&str],
    ) {
        for (schema, instance) in cases {
            let v = self.violation(schema.clone(), instance);
            for text in [&v.rule, &v.location] {
                assert!(
                    values.iter().all(|value| !text.contains(value)),
                    "{schema}: {v:?}"
                );
            }
        }
    }
}
