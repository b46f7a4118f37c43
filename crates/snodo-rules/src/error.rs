//! The error every rule returns, and JSON pointer escaping.

use std::fmt;

/// A definition rule that a tool, resource or prompt broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    /// A JSON pointer into the offending document (`""` for the whole document).
    pub pointer: String,
    /// What the rule requires, as a sentence fragment.
    pub message: String,
}

impl RuleError {
    /// A broken rule at `pointer` (`""` for the whole definition).
    pub fn new(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{} (at {})", self.message, self.pointer)
        }
    }
}

impl std::error::Error for RuleError {}

/// A rule about the whole definition (no pointer).
impl From<String> for RuleError {
    fn from(message: String) -> Self {
        Self::new("", message)
    }
}

/// A rule about the whole definition (no pointer).
impl From<&str> for RuleError {
    fn from(message: &str) -> Self {
        Self::new("", message)
    }
}

/// Escapes one JSON pointer reference token (RFC 6901).
pub fn escape_pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}
