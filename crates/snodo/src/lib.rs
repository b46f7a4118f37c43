//! # snodo
//!
//! Model Context Protocol servers and clients for Rust: tools, resources and
//! prompts declared as plain JSON Schema documents (checked when the code
//! compiles), two failure shapes that never mix, and the MCP 2026-07-28 wire.
//!
//! ```
//! use snodo::prelude::*;
//! use serde_json::json;
//!
//! #[snodo::tool(
//!     description = "Create a greeting",
//!     input_schema = {
//!         "type": "object",
//!         "properties": {"name": {"type": "string", "x-mcp-header": "Name"}},
//!         "required": ["name"]
//!     }
//! )]
//! async fn greet(args: Arguments) -> CallResult {
//!     Ok(format!("Hello, {}!", args.str("name")?).into())
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let server = Server::builder("greeter", "0.1.0").tool(greet).build().unwrap();
//! let reply = server
//!     .call_tool("greet", json!({"name": "Ada"}))
//!     .await
//!     .unwrap();
//! assert_eq!(reply["content"][0]["text"], "Hello, Ada!");
//! # });
//! ```
//!
//! ## Layers
//!
//! - [`wire`]: the JSON-RPC 2.0 envelope (bounded decoding, ids, encoding);
//! - [`protocol`]: the 2026-07-28 revision's rules (`_meta`, versions, headers);
//! - [`server`]: the immutable registry and the dispatch pipeline;
//! - [`tool`], [`schema`]: the component behaviours and validation;
//! - [`transport`]: stdio, the Streamable HTTP listener and the tower `Service`.

pub mod context;
pub mod error;
pub mod mrtr;
pub mod prompt;
pub mod protocol;
pub mod resource;
pub mod schema;
pub mod server;
pub mod testing;
pub mod tool;
pub mod transport;
pub mod wire;

pub use context::{CancelSignal, Context, Principal, TransportInfo, TransportKind};
pub use error::{BoxError, Error};
pub use mrtr::InputRequired;
pub use server::{BuildError, Dispatched, Server, ServerBuilder};
pub use tool::{
    Args, Arguments, CallResult, Content, IntoCallResult, Json, Tool, ToolDefinition, ToolResult,
};

#[cfg(feature = "macros")]
pub use snodo_macros::tool;

/// The names most programs need.
pub mod prelude {
    pub use crate::prompt::{Prompt, PromptArgument, PromptArguments, PromptMessage, PromptResult};
    pub use crate::protocol::LogLevel;
    pub use crate::resource::{ReadRequest, ReadResult, Resource, ResourceContents};
    pub use crate::schema::{Basic, PassThrough};
    pub use crate::{
        Args, Arguments, BoxError, CallResult, Content, Context, Error, InputRequired,
        IntoCallResult, Json, Server, Tool, ToolResult,
    };
}

/// Support for code the macros generate. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use serde_json;

    use crate::tool::{ArgsError, CallResult, ToolResult};

    /// Parses JSON the macro already checked at compile time.
    pub fn static_json(text: &'static str) -> serde_json::Value {
        serde_json::from_str(text).expect("checked at compile time")
    }

    /// Turns a typed-arguments failure into an `isError` result.
    pub fn args_error(error: ArgsError) -> CallResult {
        Ok(ToolResult::error(error.to_string()))
    }

    /// The input schema of typed arguments, derived by `schemars`.
    #[cfg(feature = "schemars")]
    pub fn schema_for<T: schemars::JsonSchema>() -> serde_json::Value {
        let mut value = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
        if let Some(map) = value.as_object_mut() {
            map.remove("$schema");
            map.remove("title");
        }
        value
    }
}

/// The README's examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
