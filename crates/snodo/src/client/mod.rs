//! The MCP client: talk to any MCP server, ours or anyone's.
//!
//! [`Client::connect`] reaches a server through one of three transports —
//! a Streamable HTTP URL (keep-alive pool, TLS through rustls), a child
//! process over stdio, or a [`Server`](crate::Server) in the same process —
//! and negotiates the revision: 2026-07-28 when the server answers
//! `server/discover`, otherwise the `initialize` handshake of 2025-11-25 or
//! 2025-06-18 (with `Mcp-Session-Id` over HTTP). Every call then works the
//! same on either wire.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use serde_json::json;
//! use snodo::client::Client;
//! use snodo::prelude::*;
//!
//! #[snodo::tool(
//!     description = "Add two integers",
//!     input_schema = {"type": "object", "properties": {
//!         "a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}
//! )]
//! async fn add(args: Arguments) -> CallResult {
//!     Ok(format!("{}", args.i64("a")? + args.i64("b")?).into())
//! }
//!
//! let server = Server::builder("calc", "1.0.0").tool(add).build().unwrap();
//! let client = Client::connect(server).await.unwrap();
//! assert_eq!(client.protocol_version(), "2026-07-28");
//! let tools = client.list_tools().await.unwrap();
//! assert_eq!(tools[0].name, "add");
//! let result = client.call_tool("add", json!({"a": 2, "b": 40})).await.unwrap();
//! assert_eq!(result.text_content(), "42");
//! client.close().await;
//! # });
//! ```
//!
//! What the client adds on top of the wire:
//! - per-request `_meta` (protocol version, capabilities, client info) and,
//!   over HTTP, `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and the
//!   `Mcp-Param-*` headers of `x-mcp-header` arguments;
//! - list helpers that follow `nextCursor` (bounded in pages, items and
//!   bytes, with a loop check);
//! - automatic answers to `input_required` results through the handlers of
//!   [`ClientBuilder`] (elicitation, sampling, roots), which also answer the
//!   server requests of the initialize-era wire;
//! - progress callbacks, timeouts that may reset on progress under a total
//!   cap, and cancellation when a call's future is dropped;
//! - [`Client::listen`]: change notifications as a [`Stream`](futures_util::Stream).

pub(crate) mod answer;
mod completion;
mod encode;
mod error;
mod handle;
mod legacy;
mod listen;
mod listing;
mod mrtr;
mod negotiate;
pub mod oauth;
mod options;
mod pending;
mod request;
mod shared;
#[cfg(feature = "skills")]
mod skills;
mod target;
mod tasks;
pub(crate) mod transport;
mod version;

pub use answer::is_input_required;
pub use completion::{Completion, CompletionRef};
pub use error::{ClientError, ClientErrorKind, ClientLimit, ProtocolErrorKind, TimeoutKind};
pub use handle::Client;
pub use listen::{ChangeNotification, ListenFilter, Subscription};
pub use options::{
    BoxFuture, ClientBuilder, DEFAULT_MAX_LISTING_BYTES, DEFAULT_MAX_LISTING_ITEMS, ElicitMode,
    ElicitRequest, LEGACY_VERSIONS, LogMessage, MODERN_VERSIONS, Progress, RequestOptions, Root,
    VersionPolicy, elicit_result,
};
pub use pending::Pending;
#[cfg(feature = "skills")]
#[cfg_attr(docsrs, doc(cfg(feature = "skills")))]
pub use skills::LoadedSkill;
pub use target::{StderrMode, StdioCommand, Target};
pub use tasks::{Task, TaskCall, TaskWait};
pub use transport::TransportKind;

pub(crate) use shared::Shared;
