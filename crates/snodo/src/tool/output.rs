//! The output schema a `#[snodo::tool]` function's return type implies.

use serde_json::Value;

use crate::schema::derive::DerivedSchema;

/// Finds the output schema a tool's return type implies, for
/// `#[snodo::tool]` without `output_schema`: `Json<T>` (bare or in a `Result`)
/// with `T: schemars::JsonSchema` whose schema is an object gives `T`'s
/// schema, anything else none (structured content must be an object).
///
/// The macro calls `(&&OutputProbe::<R>::new()).output_schema()`: method
/// resolution picks [`DerivedOutput`] when its bounds hold and falls back to
/// [`NoOutput`] otherwise.
#[doc(hidden)]
#[derive(Debug)]
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
