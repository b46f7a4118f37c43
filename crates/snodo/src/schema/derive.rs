//! Schemas derived from Rust types by `schemars` (the `schemars` feature, on by
//! default): the input schema of [`Args<T>`](crate::Args) and the output schema
//! of [`Json<T>`](crate::Json).

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

/// Finds the output schema a tool's return type implies, for
/// `#[snodo::tool]` without `output_schema`: `Json<T>` (bare or in a `Result`)
/// with `T: schemars::JsonSchema` whose schema is an object gives `T`'s
/// schema, anything else none (structured content must be an object).
///
/// The macro calls `(&&OutputProbe::<R>::new()).output_schema()`: method
/// resolution picks [`DerivedOutput`] when its bounds hold and falls back to
/// [`NoOutput`] otherwise.
#[doc(hidden)]
pub struct OutputProbe<R>(std::marker::PhantomData<fn() -> R>);

impl<R> OutputProbe<R> {
    /// A probe for the return type `R`.
    pub fn new() -> Self {
        Self(std::marker::PhantomData)
    }
}

impl<R> Default for OutputProbe<R> {
    fn default() -> Self {
        Self::new()
    }
}

/// The probe's fallback: no output schema.
#[doc(hidden)]
pub trait NoOutput {
    /// `None`.
    fn output_schema(&self) -> Option<Value> {
        None
    }
}

impl<R> NoOutput for OutputProbe<R> {}

/// The probe's match: the schema of `T` in `Json<T>`.
#[doc(hidden)]
pub trait DerivedOutput {
    /// `T`'s derived schema.
    fn output_schema(&self) -> Option<Value>;
}

impl<T: DerivedSchema> DerivedOutput for &OutputProbe<crate::Json<T>> {
    fn output_schema(&self) -> Option<Value> {
        object_schema::<T>()
    }
}

impl<T: DerivedSchema, E> DerivedOutput for &OutputProbe<Result<crate::Json<T>, E>> {
    fn output_schema(&self) -> Option<Value> {
        object_schema::<T>()
    }
}

fn object_schema<T: DerivedSchema>() -> Option<Value> {
    let schema = T::derived_schema();
    (schema.get("type").and_then(Value::as_str) == Some("object")).then_some(schema)
}
