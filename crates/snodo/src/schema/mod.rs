//! Pluggable JSON Schema validation.
//!
//! A [`Validator`] compiles each schema once, when the server is built; the
//! compiled form validates instances on every call. Three are provided:
//! [`PassThrough`] (the default: accepts everything), [`Basic`] (a bundled
//! subset of keywords) and, with the `jsonschema` feature, `Full`
//! (JSON Schema 2020-12).
//!
//! Whatever the validator, a violation names the location (a JSON pointer) and
//! the rule, **never the value**.

mod basic;
pub mod derive;
#[cfg(feature = "jsonschema")]
mod full;
mod passthrough;
#[cfg(test)]
mod test_support;
mod validator;

pub use basic::Basic;
#[cfg(feature = "jsonschema")]
#[cfg_attr(docsrs, doc(cfg(feature = "jsonschema")))]
pub use full::Full;
pub use passthrough::PassThrough;
pub use validator::{CompiledSchema, SchemaError, ValidationError, Validator, Violation};
