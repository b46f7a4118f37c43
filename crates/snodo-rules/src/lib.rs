//! Definition rules shared by snodo's registry and its compile-time DSL.
//!
//! The same checks run in two places: when a server is built from hand-written
//! components (`Server::builder(..).build()`) and when the `#[snodo::tool]`,
//! `#[snodo::resource]` and `#[snodo::prompt]` macros expand. Keeping them in one
//! small crate means both places agree by construction. The crate also owns the
//! resource [`template`] parser, so that a `uri_template` is refused at compile
//! time exactly as a server would refuse it.
//!
//! Every check returns a [`RuleError`] naming the rule that failed and, where it
//! applies, the JSON pointer of the offending place inside the document.
//!
//! ```
//! use serde_json::json;
//! assert!(snodo_rules::check_tool_name("get_user.v2").is_ok());
//! let schema = json!({"type": "object", "properties": {"q": {"type": "number", "x-mcp-header": "Q"}}});
//! let err = snodo_rules::check_input_schema(&schema).unwrap_err();
//! assert_eq!(err.pointer, "/properties/q/type");
//! ```

#![forbid(unsafe_code)]

mod component;
mod header;
mod keywords;
mod name;
mod schema;
pub mod template;

pub use component::{
    PromptShape, RESERVED_VARIABLES, ResourceShape, check_prompt, check_prompt_arguments,
    check_resource, check_resource_uri,
};
pub use header::{HeaderParam, HeaderType, check_header_annotations, is_token};
pub use keywords::{MAX_SCHEMA_DEPTH, check_schema_keywords};
pub use name::check_tool_name;
pub use schema::{check_input_schema, check_output_schema};
pub use template::{TemplateError, UriTemplate};

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
    pub(crate) fn new(pointer: impl Into<String>, message: impl Into<String>) -> Self {
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

/// Escapes one JSON pointer reference token (RFC 6901).
pub fn escape_pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}
