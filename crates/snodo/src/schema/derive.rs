//! Schemas derived from Rust types by `schemars` (the `schemars` feature, on by
//! default): the input schema of [`Args<T>`](crate::Args) and the output schema
//! of [`Json<T>`](crate::Json) (found by `tool::output`).

use serde_json::Value;

/// Types whose JSON Schema can be derived: every `schemars::JsonSchema` type
/// when the `schemars` feature is on, and no type otherwise.
#[cfg_attr(
    not(feature = "schemars"),
    diagnostic::on_unimplemented(
        message = "`Args<{Self}>` needs an `input_schema`: the `schemars` feature of snodo is off",
        label = "no `input_schema` is given for these typed arguments",
        note = "write the schema in the attribute: `#[snodo::tool(input_schema = {{ \"type\": \"object\", ... }})]`",
        note = "or enable `features = [\"schemars\"]` on the snodo dependency and derive `schemars::JsonSchema` for `{Self}`"
    )
)]
#[cfg_attr(
    feature = "schemars",
    diagnostic::on_unimplemented(
        message = "`{Self}` does not implement `schemars::JsonSchema`, so `Args<{Self}>` has no input schema",
        label = "no `input_schema` is given for these typed arguments",
        note = "derive `schemars::JsonSchema` for `{Self}`, or write the schema in the attribute: `input_schema = {{ ... }}`"
    )
)]
pub trait DerivedSchema {
    /// The type's JSON Schema, without `$schema` and `title`.
    fn derived_schema() -> Value;
}

#[cfg(feature = "schemars")]
impl<T: schemars::JsonSchema> DerivedSchema for T {
    fn derived_schema() -> Value {
        let mut value = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
        if let Some(map) = value.as_object_mut() {
            map.remove("$schema");
            map.remove("title");
        }
        value
    }
}
