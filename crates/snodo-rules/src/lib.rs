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
mod error;
mod header;
mod keywords;
mod name;
mod schema;
mod scope;
pub mod template;

pub use component::{
    PromptShape, RESERVED_VARIABLES, ResourceShape, check_prompt, check_prompt_arguments,
    check_resource, check_resource_uri,
};
pub use error::{RuleError, escape_pointer_token};
pub use header::{HeaderParam, HeaderType, check_header_annotations, is_token};
pub use keywords::{MAX_SCHEMA_DEPTH, check_schema_keywords};
pub use name::check_tool_name;
pub use schema::{check_input_schema, check_output_schema};
pub use scope::check_scope;
pub use template::{TemplateError, UriTemplate};
