//! What a handler works with besides its input: the request's [`Context`],
//! the extractors its parameters are resolved by ([`FromCall`], [`State`]),
//! the input it may ask the client for mid-call ([`InputRequired`]), and the
//! boxed future object-safe traits return ([`BoxFuture`]).
//!
//! Every parameter of a `#[snodo::tool]`, `#[snodo::resource]` or
//! `#[snodo::prompt]` function is produced by [`FromCall`], from the request's
//! input (a tool's [`Arguments`](crate::Arguments), a resource's
//! [`ReadRequest`](crate::resource::ReadRequest), a prompt's
//! [`PromptArguments`](crate::prompt::PromptArguments)) and its [`Context`]. The
//! macros match no type names: any type implementing `FromCall` for that input
//! may be a parameter, in any order, including extractors of your own.
//!
//! | parameter | tool | resource | prompt |
//! |---|---|---|---|
//! | [`Context`] | yes | yes | yes |
//! | [`State<S>`] (registered with [`ServerBuilder::state`](crate::ServerBuilder::state)) | yes | yes | yes |
//! | [`Arguments`](crate::Arguments), [`Args<T>`](crate::Args) | yes | | |
//! | [`ReadRequest`](crate::resource::ReadRequest) | | yes | |
//! | [`PromptArguments`](crate::prompt::PromptArguments) | | | yes |
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use snodo::prelude::*;
//! use snodo::State;
//!
//! #[derive(Clone, Default)]
//! struct Hits(Arc<AtomicU64>);
//!
//! /// Counts its calls.
//! #[snodo::tool]
//! async fn hit(State(hits): State<Hits>) -> String {
//!     (hits.0.fetch_add(1, Ordering::Relaxed) + 1).to_string()
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let server = Server::builder("counter", "0.1.0")
//!     .state(Hits::default())
//!     .tool(hit)
//!     .build()
//!     .unwrap();
//! server.call_tool("hit", serde_json::json!({})).await.unwrap();
//! let reply = server.call_tool("hit", serde_json::json!({})).await.unwrap();
//! assert_eq!(reply["content"][0]["text"], "2");
//! # });
//! ```
//!
//! A handler asks for input with
//! [`ToolResult::input_required`](crate::ToolResult::input_required) and an
//! [`InputRequired`]; the client fulfils the requests and retries the original
//! request with `inputResponses` (and the echoed `requestState`, sealed by the
//! server's [`StateSealer`](crate::server::StateSealer)).

pub use crate::context::{
    CancelSignal, ConnectionInfo, Context, ElicitAction, ElicitResponse, MAX_PROGRESS_MESSAGE,
    MAX_PROGRESS_UPDATES, Principal, ProgressError, Share, TransportInfo, TransportKind,
};
pub use crate::extract::{FromCall, InputSchema, Rejection, State, StateNeed};
pub use crate::future::BoxFuture;
pub use crate::mrtr::{InputRequired, check_form_schema};
