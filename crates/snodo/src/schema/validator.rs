//! The validator traits and what validation reports.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

/// Compiles JSON Schema documents into validators.
pub trait Validator: Send + Sync + 'static {
    /// Compiles `schema`; called once per schema at build time.
    fn compile(&self, schema: &Value) -> Result<Arc<dyn CompiledSchema>, SchemaError>;
}

/// A compiled schema.
pub trait CompiledSchema: Send + Sync + 'static {
    /// Validates `instance`.
    fn validate(&self, instance: &Value) -> Result<(), ValidationError>;
}

/// A schema the validator cannot compile (bad keyword value, unsupported
/// dialect, unresolvable `$ref`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// Why the schema was refused.
    pub message: String,
}

impl SchemaError {
    /// A schema error with a message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SchemaError {}

/// Why validation did not accept an instance.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ValidationError {
    /// The instance violates the schema.
    Invalid(Violation),
    /// The validator itself failed; the request fails with -32603.
    Failed(String),
}

/// Where an instance violates a schema, and which rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// A JSON pointer into the instance (`""` for the root).
    pub location: String,
    /// The broken rule, in words that never quote the value.
    pub rule: String,
}

impl Violation {
    /// A violation at `location`.
    pub fn new(location: impl Into<String>, rule: impl Into<String>) -> Self {
        Self {
            location: location.into(),
            rule: rule.into(),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.location.is_empty() {
            "/"
        } else {
            &self.location
        };
        write!(f, "at {at}: {}", self.rule)
    }
}
