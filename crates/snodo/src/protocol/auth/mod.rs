//! OAuth 2.1 as MCP specifies it, the parts both ends share:
//! `WWW-Authenticate` challenges, and the discovery documents with where
//! each is looked up. The client's side is [`client::oauth`](crate::client::oauth),
//! the resource server's
//! [`transport::http::oauth`](crate::transport::http::oauth) (feature `auth`).

pub mod challenge;
#[cfg(feature = "http-client")]
pub mod dpop;
pub mod metadata;
