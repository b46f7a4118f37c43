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
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let server = Server::builder("greeter", "0.1.0").tool(greet).build().unwrap();
//! let reply = server
//!     .call_tool("greet", json!({"name": "Ada"}))
//!     .await
//!     .unwrap();
//! assert_eq!(reply["content"][0]["text"], "Hello, Ada!");
//! # });
//! ```
//!
//! ## Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `macros` | yes | `#[snodo::tool]`, `#[snodo::resource]`, `#[snodo::prompt]` |
//! | `http` | yes | the Streamable HTTP listener and the tower `Service` ([`transport::http`]) |
//! | `schemars` | yes | schemas derived from types: [`Args<T>`](Args) in, [`Json<T>`](Json) out |
//! | `client` | no | [`Client`](crate::client): Streamable HTTP (rustls), stdio child processes, in process |
//! | `auth` | no | JWT support for OAuth: `private_key_jwt` client assertions (with `client`), and (with `http`) the resource server's token verifiers; it does not build the MCP client |
//! | `jsonschema` | no | `schema::Full`, the full JSON Schema 2020-12 validator |
//! | `otel` | no | trace context across MCP and the duration histograms, through the `opentelemetry` API ([`telemetry`]) |
//! | `http-client` | no | the HTTP client building block `client` and `auth` share (a rustls keep-alive pool); turned on by them |
//! | `fuzzing` | no | `snodo::fuzzing`: entry points for the fuzz targets (not a stable API) |
//!
//! ## Modules
//!
//! - [`tool`](mod@tool), [`resource`](mod@resource), [`prompt`](mod@prompt):
//!   the component behaviours;
//! - [`handler`]: what a handler works with (the [`Context`], extractors, input
//!   asked for mid-call);
//! - [`schema`]: pluggable JSON Schema validation;
//! - [`server`]: the immutable registry, its settings, events and keys;
//! - [`transport`]: stdio, the Streamable HTTP listener and the tower `Service`;
//! - [`task`]: durable tasks and their stores;
//! - [`model`]: the protocol's data (the JSON-RPC envelope, revisions, `_meta`);
//! - [`error`]: the JSON-RPC error and a handler's error;
//! - [`telemetry`]: spans, metrics and trace context (OTLP export is the
//!   `snodo-otlp` crate);
//! - `client` and `proxy` (feature `client`): a client for any MCP server, and a
//!   server that fronts others.
//!
//! ## Macros
//!
//! With the `macros` feature (on by default), [`#[snodo::tool]`](macro@tool),
//! [`#[snodo::resource]`](macro@resource) and [`#[snodo::prompt]`](macro@prompt)
//! turn an `async fn` into a component, checking its definition when the code
//! compiles with the rules a server applies at `build()`. Each name is both a
//! module and an attribute macro: they live in different namespaces, so
//! `use snodo::resource;` brings both.
//!
//! ```
//! use snodo::prelude::*;
//! use snodo::prompt::PromptArguments;
//!
//! /// The project's readme.
//! #[snodo::resource(uri = "docs://readme", mime_type = "text/markdown")]
//! async fn readme() -> &'static str {
//!     "# Hello"
//! }
//!
//! #[snodo::prompt(arguments = [{ "name": "topic", "required": true }])]
//! async fn brief(args: PromptArguments) -> String {
//!     format!("Write a brief about {}.", args.get("topic").unwrap_or_default())
//! }
//!
//! let server = Server::builder("docs", "0.1.0").resource(readme).prompt(brief).build();
//! assert!(server.is_ok());
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod apps;
#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub mod client;
mod context;
pub mod error;
mod events;
mod extract;
mod future;
#[cfg(feature = "fuzzing")]
#[cfg_attr(docsrs, doc(cfg(feature = "fuzzing")))]
pub mod fuzzing;
pub mod handler;
mod keyring;
pub mod model;
mod mrtr;
#[cfg(any(feature = "client", all(feature = "auth", feature = "http")))]
mod net;
pub mod prompt;
mod protocol;
#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub mod proxy;
mod random;
pub mod resource;
pub mod schema;
pub mod server;
#[cfg(feature = "skills")]
#[cfg_attr(docsrs, doc(cfg(feature = "skills")))]
pub mod skills;
pub mod task;
pub mod telemetry;
pub mod tool;
pub mod transport;
mod wire;

#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub use client::Client;
pub use context::{CancelSignal, Context, Principal, TransportInfo, TransportKind};
pub use error::{BoxError, Error, HandlerError};
pub use extract::State;
pub use mrtr::InputRequired;
pub use random::RandomUnavailable;
/// The `schemars` crate snodo derives schemas with (the `schemars` feature).
#[cfg(feature = "schemars")]
#[cfg_attr(docsrs, doc(cfg(feature = "schemars")))]
pub use schemars;
pub use server::{BuildError, Dispatched, Server, ServerBuilder};
pub use tool::{
    Args, Arguments, CallResult, Content, IntoCallResult, Json, Tool, ToolDefinition, ToolResult,
};

// The attribute macros live in the macro namespace, so `snodo::tool`,
// `snodo::resource` and `snodo::prompt` name both a macro and a module.
#[cfg(feature = "macros")]
#[cfg_attr(docsrs, doc(cfg(feature = "macros")))]
pub use snodo_macros::{prompt, resource, tool};

/// The names a tool needs: the server, the tool behaviour and what a tool
/// receives and returns. Resources, prompts and validators are named through
/// their modules (`snodo::resource::ReadResult`, `snodo::schema::Basic`).
pub mod prelude {
    // `Args`, `Json`, `State` and `Error` stay out: axum, clap and anyhow
    // export the same names. Write `snodo::Args` and so on.
    pub use crate::{
        Arguments, BoxError, CallResult, Content, Context, HandlerError, InputRequired,
        IntoCallResult, Server, Tool, ToolResult,
    };
}

/// Support for code the macros generate. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use serde_json;

    /// Parses JSON the macro already checked at compile time.
    pub fn static_json(text: &'static str) -> serde_json::Value {
        serde_json::from_str(text).expect("checked at compile time")
    }

    pub use crate::tool::output::{DerivedOutput, NoOutput, OutputProbe};

    /// The first schema a parameter implies, else `{"type": "object"}`.
    pub fn input_schema(implied: &[Option<serde_json::Value>]) -> serde_json::Value {
        implied
            .iter()
            .flatten()
            .next()
            .cloned()
            .unwrap_or_else(|| serde_json::json!({"type": "object"}))
    }
}

/// The README's examples, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
