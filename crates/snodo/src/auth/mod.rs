//! Authorization: OAuth 2.1 as MCP specifies it.
//!
//! - [`challenge`]: `WWW-Authenticate` parsing and building, for both sides;
//! - [`metadata`]: Protected Resource Metadata, authorization server
//!   metadata, and where each is looked up;
//! - [`client`] (feature `client`): what a client does on `401` and `403`:
//!   discovery, registration, PKCE, tokens, refresh, step-up;
//! - [`resource`] (features `auth` and `http`): the resource server for
//!   Streamable HTTP: metadata, bearer checks, token verifiers, scopes.

pub mod challenge;
#[cfg(feature = "client")]
pub mod client;
pub mod metadata;
#[cfg(all(feature = "auth", feature = "http"))]
#[cfg_attr(docsrs, doc(cfg(all(feature = "auth", feature = "http"))))]
pub mod resource;
