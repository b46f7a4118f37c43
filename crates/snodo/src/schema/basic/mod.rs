//! The bundled validator: a dependency-free subset of JSON Schema.

use std::sync::Arc;

use serde_json::Value;

use super::{CompiledSchema, SchemaError, Validator};

mod compile;
mod equality;
mod number;
#[cfg(test)]
mod tests;
mod tree;
mod validate;

use compile::compile_node;
use tree::Compiled;

/// The bundled validator: a dependency-free subset of JSON Schema.
///
/// [`Basic`] compiles a schema once into a tree of checks and never reads the
/// schema JSON again when validating. It supports:
///
/// - `type`: one name or a list (union) of `array`, `boolean`, `integer`,
///   `null`, `number`, `object`, `string`. `integer` is a JSON number parsed as
///   an integer (`1` is one, `1.0` is not); `number` is any number.
/// - `const` and `enum`, with JSON equality where numbers compare by value
///   (`1 == 1.0`).
/// - objects: `required`, `properties`, `additionalProperties` (`true`,
///   `false` or a schema), `minProperties`, `maxProperties`;
/// - arrays: `items` (one schema for every element), `minItems`, `maxItems`,
///   `uniqueItems`;
/// - strings: `minLength`, `maxLength` (counted in Unicode scalar values, not
///   bytes), `pattern` (an unanchored search, compiled with `regex-lite`: no
///   look-around, back-references or `\p{..}` classes);
/// - numbers: `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`
///   (the numeric, draft-6+ form);
/// - the boolean schemas `true` and `false`.
///
/// Each node checks `type`, then `const`, then `enum`, then the keywords of
/// the instance's shape, and validation stops at the first violation. Objects
/// check `required` (in declared order), `minProperties`, `maxProperties`,
/// `properties` (in sorted name order), then `additionalProperties` (extra
/// names in sorted order); arrays check `minItems`, `maxItems`, `uniqueItems`,
/// then `items` (in index order); strings `minLength`, `maxLength`, `pattern`;
/// numbers `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`.
///
/// Other keywords (`$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`, `format`,
/// `multipleOf`, `patternProperties`, `prefixItems`, ...) are ignored, and so
/// are the schemas inside them. A supported keyword with a value of the wrong
/// type, an invalid `pattern`, or a schema nested deeper than 64 levels is
/// refused at compile time with a [`SchemaError`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Basic;

impl Validator for Basic {
    fn compile(&self, schema: &Value) -> Result<Arc<dyn CompiledSchema>, SchemaError> {
        let mut location = Vec::new();
        let root = compile_node(schema, &mut location, 1)?;
        Ok(Arc::new(Compiled { root }))
    }
}
