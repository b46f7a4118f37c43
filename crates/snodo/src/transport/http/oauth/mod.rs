//! OAuth 2.1 resource server for the Streamable HTTP transport (features
//! `auth` and `http`): Protected Resource Metadata (RFC 9728), bearer
//! tokens from the `Authorization` header only, the `WWW-Authenticate`
//! challenges MCP specifies, and token verification behind
//! [`TokenVerifier`].
//!
//! Built into the listener with [`HttpOptions::oauth`](crate::transport::http::HttpOptions::oauth),
//! or put in front of [`Server::http_service`](crate::Server::http_service)
//! as a tower layer ([`OAuthLayer`]). Either way:
//!
//! - `GET`/`HEAD` of the metadata (path-inserted and root well-known paths)
//!   answer the document; `OPTIONS` answers the CORS preflight;
//! - no `Authorization`: `401` with `Bearer resource_metadata="…"` and the
//!   default scopes; a token that does not verify: `401
//!   error="invalid_token"`; a malformed header, several of them, or a
//!   token in the query string: `400 error="invalid_request"`;
//! - the verified [`Principal`](crate::Principal) reaches [`Context::principal`](crate::Context::principal)
//!   and [`Policy`](crate::server::Policy); a request whose tool, resource
//!   or prompt needs scopes the token lacks gets `403
//!   error="insufficient_scope"` naming every scope it needs;
//! - with [`dpop`](ResourceServerBuilder::dpop) (RFC 9449, as the MCP
//!   authorization extension drafts it), a token bound to a key (`cnf.jkt`)
//!   is taken only with the `DPoP` scheme and a fresh ES256 proof for the
//!   request, the token and that key; a proof that fails gets `401
//!   error="invalid_dpop_proof"`, a replayed one too.
//!
//! There is no helper that forwards the caller's token anywhere: a server
//! that calls other APIs gets its own tokens.

mod dpop;
pub(crate) mod introspect;
pub(crate) mod jwt;
mod layer;
pub(crate) mod server;
pub(crate) mod verify;

pub use dpop::{DEFAULT_DPOP_WINDOW, MAX_DPOP_PROOFS, MAX_DPOP_PROOFS_PER_KEY};
pub use introspect::{DEFAULT_CACHE_TTL, Introspection, MAX_CACHED};
pub use jwt::{
    DEFAULT_FETCH_TIMEOUT, DEFAULT_JWKS_TTL, DEFAULT_LEEWAY, DEFAULT_REFRESH_INTERVAL,
    DEFAULT_VERIFIED_TTL, JwtVerifier, MAX_VERIFIED,
};
pub use layer::{OAuthLayer, OAuthService};
pub use server::{ConfigError, MAX_AUTHORIZATION_BYTES, ResourceServer, ResourceServerBuilder};
pub use verify::{TokenVerifier, VerifyError};
