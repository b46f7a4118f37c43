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
//! use snodo::auth::client::{LoopbackBrowser, OAuth};
//! use snodo::client::Client;
//!
//! let oauth = OAuth::builder().authorizer(LoopbackBrowser::new()).build();
//! let client = Client::builder()
//!     .oauth(oauth)
//!     .connect("https://mcp.example.com/mcp")
//!     .await?;
//! # Ok(()) }
//! ```

mod authorizer;
mod credentials;
mod file_store;
mod flow;
pub(crate) mod http;
mod pkce;
mod registration;
mod store;
pub(crate) mod token;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

pub use authorizer::{AuthorizationSession, Authorizer, CallbackParams, Headless, LoopbackBrowser};
pub use credentials::ClientCredentials;
#[cfg(feature = "auth")]
pub use credentials::SigningKey;
pub use file_store::FileStore;
pub use registration::client_metadata_document;
pub use store::{IssuerState, MemoryStore, Registration, TokenSet, TokenStore};

pub(crate) use flow::Refusal;
#[cfg(all(feature = "auth", feature = "http"))]
pub(crate) use store::now_secs;

/// The most authorizations one request may cause (initial, step-ups).
pub const MAX_AUTHORIZATIONS: usize = 3;

/// Why authorization failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OAuthError {
    /// An OAuth endpoint could not be reached or answered badly.
    Http(String),
    /// An endpoint is plain http outside loopback.
    Insecure(String),
    /// Discovery failed: no usable Protected Resource Metadata or
    /// authorization server metadata.
    Metadata(String),
    /// The metadata's `resource` does not cover the endpoint.
    ResourceMismatch {
        /// What the metadata said.
        resource: String,
        /// The endpoint the client talks to.
        endpoint: String,
    },
    /// The metadata's `issuer` is not the issuer it was fetched for.
    IssuerMismatch {
        /// The issuer the client asked about.
        expected: String,
        /// What the document (or the redirect's `iss`) said.
        found: String,
    },
    /// No way to identify the client to the authorization server.
    Registration(String),
    /// The authorization step failed (denied, a bad `state`, no code).
    Authorization(String),
    /// The token endpoint refused.
    Token(String),
    /// The server wants scopes the client already holds, or more
    /// authorizations than [`MAX_AUTHORIZATIONS`].
    InsufficientScope(String),
    /// The server refused for another reason than scope (`403`).
    Forbidden(String),
}

impl fmt::Display for OAuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OAuthError::Http(m) => write!(f, "OAuth request failed: {m}"),
            OAuthError::Insecure(m) => write!(f, "insecure OAuth endpoint: {m}"),
            OAuthError::Metadata(m) => write!(f, "OAuth discovery failed: {m}"),
            OAuthError::ResourceMismatch { resource, endpoint } => write!(
                f,
                "the protected resource metadata names {resource:?}, which does not cover {endpoint:?}"
            ),
            OAuthError::IssuerMismatch { expected, found } => write!(
                f,
                "the authorization server answered as {found:?}, not as {expected:?}"
            ),
            OAuthError::Registration(m) => write!(f, "client registration failed: {m}"),
            OAuthError::Authorization(m) => write!(f, "authorization failed: {m}"),
            OAuthError::Token(m) => write!(f, "the token request failed: {m}"),
            OAuthError::InsufficientScope(m) => write!(f, "insufficient scope: {m}"),
            OAuthError::Forbidden(m) => write!(f, "forbidden: {m}"),
        }
    }
}

impl std::error::Error for OAuthError {}

/// OAuth for one client: configuration, the store, and the flow's state.
/// Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct OAuth {
    inner: Arc<Inner>,
}

impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

#[derive(Debug)]
struct Config {
    authorizer: Arc<dyn Authorizer>,
    store: Arc<dyn TokenStore>,
    client_name: String,
    client_metadata_url: Option<String>,
    pre_registered: Vec<(String, Registration)>,
    credentials: Option<ClientCredentials>,
    /// The issuer the credentials belong to: set, or the first one used.
    credentials_issuer: Mutex<Option<String>>,
}

struct Inner {
    config: Config,
    http: http::OAuthHttp,
    /// The token sent to each endpoint (keyed by the endpoint's URL): a
    /// token obtained for one server is never sent to another.
    current: Mutex<HashMap<String, Current>>,
    /// One flow at a time.
    flow: tokio::sync::Mutex<flow::FlowState>,
}

/// The token in use for one endpoint.
#[derive(Clone)]
struct Current {
    issuer: String,
    header: ::http::HeaderValue,
    scopes: Vec<String>,
}

/// Builds an [`OAuth`].
#[derive(Debug)]
pub struct OAuthBuilder {
    authorizer: Option<Arc<dyn Authorizer>>,
    store: Arc<dyn TokenStore>,
    client_name: String,
    client_metadata_url: Option<String>,
    pre_registered: Vec<(String, Registration)>,
    credentials: Option<ClientCredentials>,
    credentials_issuer: Option<String>,
    allow_insecure_http: bool,
    redirect_uri: String,
}

impl OAuth {
    /// A builder with the defaults: a [`Headless`] authorizer, a
    /// [`MemoryStore`], client name `snodo`.
    pub fn builder() -> OAuthBuilder {
        OAuthBuilder {
            authorizer: None,
            store: Arc::new(MemoryStore::new()),
            client_name: "snodo".into(),
            client_metadata_url: None,
            pre_registered: Vec::new(),
            credentials: None,
            credentials_issuer: None,
            allow_insecure_http: false,
            redirect_uri: "http://127.0.0.1:8976/callback".into(),
        }
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn TokenStore> {
        &self.inner.config.store
    }

    fn current(&self, endpoint: &str) -> Option<Current> {
        self.inner
            .current
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(endpoint)
            .cloned()
    }

    /// The issuer of the token in use for `endpoint` (the URL the client
    /// connected to), once one was obtained.
    pub fn issuer_for(&self, endpoint: &str) -> Option<String> {
        self.current(endpoint).map(|c| c.issuer)
    }

    /// The scopes of the token in use for `endpoint`.
    pub fn granted_scopes_for(&self, endpoint: &str) -> Vec<String> {
        self.current(endpoint).map(|c| c.scopes).unwrap_or_default()
    }

    /// The `Authorization` value to send to `endpoint`, if a token is held
    /// for it.
    pub(crate) fn authorization(&self, endpoint: &str) -> Option<::http::HeaderValue> {
        self.current(endpoint).map(|c| c.header)
    }

    fn set_current(
        &self,
        endpoint: &str,
        issuer: &str,
        tokens: &TokenSet,
    ) -> Result<(), OAuthError> {
        let mut header = ::http::HeaderValue::from_str(&format!("Bearer {}", tokens.access_token))
            .map_err(|_| OAuthError::Token("the access token cannot be sent in a header".into()))?;
        header.set_sensitive(true);
        self.inner
            .current
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                endpoint.to_string(),
                Current {
                    issuer: issuer.to_string(),
                    header,
                    scopes: tokens.scopes.clone(),
                },
            );
        Ok(())
    }

    fn clear_current(&self, endpoint: &str) {
        self.inner
            .current
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(endpoint);
    }
}

impl OAuthBuilder {
    /// How the user agent is sent to authorize (default: [`Headless`]).
    pub fn authorizer(mut self, authorizer: impl Authorizer + 'static) -> Self {
        self.authorizer = Some(Arc::new(authorizer));
        self
    }

    /// The redirect URI of the default [`Headless`] authorizer.
    pub fn redirect_uri(mut self, uri: &str) -> Self {
        self.redirect_uri = uri.to_string();
        self
    }

    /// Where registrations and tokens are kept (default: [`MemoryStore`]).
    pub fn store(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.store = store;
        self
    }

    /// The `client_name` sent in dynamic registration.
    pub fn client_name(mut self, name: &str) -> Self {
        self.client_name = name.to_string();
        self
    }

    /// The https URL of this client's Client ID Metadata Document, used as
    /// its `client_id` where the authorization server supports them.
    pub fn client_metadata_url(mut self, url: &str) -> Self {
        self.client_metadata_url = Some(url.to_string());
        self
    }

    /// A client registered beforehand at `issuer` (used only there).
    pub fn pre_registered(mut self, issuer: &str, client_id: &str, secret: Option<&str>) -> Self {
        self.pre_registered.push((
            issuer.to_string(),
            Registration {
                client_id: client_id.to_string(),
                client_secret: secret.map(str::to_string),
                auth_method: None,
            },
        ));
        self
    }

    /// Use the client-credentials grant with these credentials instead of
    /// asking a person. The credentials are sent only to the first issuer
    /// a server names (or the one set with
    /// [`credentials_issuer`](Self::credentials_issuer)); a server that
    /// later names another issuer is refused rather than handed the secret.
    pub fn client_credentials(mut self, credentials: ClientCredentials) -> Self {
        self.credentials = Some(credentials);
        self
    }

    /// The only issuer the client credentials may be sent to.
    pub fn credentials_issuer(mut self, issuer: &str) -> Self {
        self.credentials_issuer = Some(issuer.to_string());
        self
    }

    /// Allow plain-http authorization servers outside loopback (never do
    /// this in production).
    pub fn allow_insecure_http(mut self, allow: bool) -> Self {
        self.allow_insecure_http = allow;
        self
    }

    /// The configured [`OAuth`].
    pub fn build(self) -> OAuth {
        // Building the connection pool fails only when TLS cannot be set up,
        // which new_pool already reports; fall back to refusing every call.
        let http = http::OAuthHttp::new(self.allow_insecure_http)
            .expect("the TLS configuration of the HTTP client");
        let authorizer = self
            .authorizer
            .unwrap_or_else(|| Arc::new(Headless::new(&self.redirect_uri).with_http(http.clone())));
        OAuth {
            inner: Arc::new(Inner {
                config: Config {
                    authorizer,
                    store: self.store,
                    client_name: self.client_name,
                    client_metadata_url: self.client_metadata_url,
                    pre_registered: self.pre_registered,
                    credentials: self.credentials,
                    credentials_issuer: Mutex::new(self.credentials_issuer),
                },
                http,
                current: Mutex::new(HashMap::new()),
                flow: tokio::sync::Mutex::new(flow::FlowState::default()),
            }),
        }
    }
}
