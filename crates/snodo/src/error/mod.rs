//! The typed JSON-RPC error: the failure shape for requests that should never
//! have been dispatched.
//!
//! A tool that understands its own failure returns a *successful* result with
//! `isError: true` ([`ToolResult::error`](crate::ToolResult::error)). An [`Error`]
//! is different: it fails the JSON-RPC request itself.
//!
//! ```
//! use snodo::Error;
//! let err = Error::invalid_params("Unknown tool: nope");
//! assert_eq!(err.code(), -32602);
//! assert_eq!(
//!     err.to_json(),
//!     serde_json::json!({"code": -32602, "message": "Unknown tool: nope"})
//! );
//! ```
//!
//! A handler says which shape its failure takes by its error type,
//! [`HandlerError`]: a protocol [`Error`] converts into one that fails the
//! request, any other error into one that fails the work (an `isError: true`
//! result for a tool).

mod backend;
pub mod code;
mod handler;
mod rpc;

pub use backend::BackendError;
pub use handler::{HandlerError, ResultExt};
pub(crate) use rpc::chain;
pub use rpc::{BoxError, Error};
