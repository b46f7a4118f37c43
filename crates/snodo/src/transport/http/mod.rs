//! Streamable HTTP (MCP 2026-07-28): one endpoint, one JSON-RPC message per
//! POST, answered with `application/json`, or with server-sent events when
//! the request streams notifications (202 for notifications).
//!
//! - [`McpService`] is the endpoint as a tower service
//!   ([`Server::http_service`](crate::Server::http_service)): mount it in axum
//!   or any tower stack.
//! - [`HttpListener`] serves that same service on a TCP port, over HTTP/1.1 and
//!   HTTP/2 cleartext ([`Server::serve_http`](crate::Server::serve_http)).
//!
//! Protocol rules (`_meta`, header mirroring, status codes) live in the core;
//! this transport adds the endpoint, the DNS-rebinding checks, the limits and
//! timeouts of [`HttpOptions`], and graceful shutdown.
//!
//! ```no_run
//! # async fn demo(server: snodo::Server) -> std::io::Result<()> {
//! use snodo::transport::http::{HttpListener, HttpOptions};
//!
//! let listener = HttpListener::bind(&server, "127.0.0.1:0".parse().unwrap(), HttpOptions::new()).await?;
//! eprintln!("listening on {}", listener.url());
//! listener.run(std::future::pending()).await
//! # }
//! ```

mod admission;
mod body;
mod guard;
mod legacy;
mod listener;
mod modern;
#[cfg(feature = "auth")]
#[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
pub mod oauth;
mod options;
mod response;
mod service;
mod session;
mod shared;
mod sse;

pub use body::McpBody;
pub use listener::HttpListener;
pub use options::HttpOptions;
pub use service::{McpService, ResponseFuture};
pub use session::{
    DEFAULT_IDLE_UNDER_PRESSURE, DEFAULT_MAX_SESSIONS, DEFAULT_MAX_SESSIONS_PER_SHARE,
    DEFAULT_SESSION_IDLE, MemorySessions, SessionStore, SessionsFull, UNFINISHED_GRACE,
};
