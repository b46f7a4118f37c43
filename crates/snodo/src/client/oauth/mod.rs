//! OAuth 2.1 in the client: what a Streamable HTTP client does when a server
//! answers `401` or `403` (feature `client`).
//!
//! On a `401` the client reads the challenge, fetches the server's Protected
//! Resource Metadata (the challenge's `resource_metadata`, else the
//! path-inserted then the root well-known URL), checks that its `resource`
//! covers the endpoint, discovers the authorization server's metadata in the
//! spec's order (checking `issuer` byte for byte and refusing a server
//! without PKCE S256), finds a client identity (pre-registered, a Client ID
//! Metadata Document, or dynamic registration), and gets a token: from the
//! store, by refresh, by the client-credentials grant, or by the
//! authorization-code flow with PKCE, `state` and the RFC 9207 `iss` check.
//! Every grant carries `resource`. On a `403 insufficient_scope` it asks for
//! the union of the scopes it had and the challenged ones (step-up), unless
//! it already holds them. Registrations and tokens are kept per issuer in a
//! [`TokenStore`] and never sent to another issuer.
//!
//! ```no_run
//! # async fn run() -> Result<(), snodo::client::ClientError> {
//! use snodo::client::oauth::{LoopbackBrowser, OAuth};
//! use snodo::client::Client;
//!
//! let oauth = OAuth::builder().authorizer(LoopbackBrowser::new()).build();
//! let client = Client::builder()
//!     .oauth(oauth)
//!     .connect("https://mcp.example.com/mcp")
//!     .await?;
//! # Ok(()) }
//! ```

pub(crate) mod authorizer;
mod credentials;
mod dpop;
mod error;
mod file_store;
pub(crate) mod flow;
mod handle;
mod pkce;
pub(crate) mod registration;
mod state;
mod store;
pub(crate) mod token;

pub use authorizer::{AuthorizationSession, Authorizer, CallbackParams, Headless, LoopbackBrowser};
#[cfg(feature = "auth")]
pub use credentials::SigningKey;
pub use credentials::{Assertion, ClientCredentials, EnterpriseIdp, MAX_ASSERTION_BYTES};
pub use error::OAuthError;
pub use file_store::FileStore;
pub use handle::{OAuth, OAuthBuilder};
pub use registration::client_metadata_document;
pub use state::MAX_AUTHORIZATIONS;
pub use store::{IssuerState, MemoryStore, Registration, TokenSet, TokenStore};

pub use crate::protocol::auth::dpop::DpopKey;

pub(crate) use flow::Refusal;
