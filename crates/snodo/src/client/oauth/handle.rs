//! [`OAuth`]: the configuration, the tokens in use per endpoint, and the
//! builder.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use super::authorizer::{Authorizer, Headless};
use super::credentials::ClientCredentials;
use super::dpop::Prover;
use super::error::OAuthError;
use super::state::FlowState;
use super::store::{MemoryStore, Registration, TokenSet, TokenStore};
use crate::net::OAuthHttp;
use crate::protocol::auth::dpop::DpopKey;

/// OAuth for one client: configuration, the store, and the flow's state.
/// Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct OAuth {
    pub(super) inner: Arc<Inner>,
}

impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

#[derive(Debug)]
pub(super) struct Config {
    pub(super) authorizer: Arc<dyn Authorizer>,
    pub(super) store: Arc<dyn TokenStore>,
    pub(super) client_name: String,
    pub(super) client_metadata_url: Option<String>,
    pub(super) pre_registered: Vec<(String, Registration)>,
    pub(super) credentials: Option<ClientCredentials>,
    /// The issuer the credentials belong to: set, or the first one used.
    pub(super) credentials_issuer: Mutex<Option<String>>,
}

pub(super) struct Inner {
    pub(super) config: Config,
    pub(super) http: OAuthHttp,
    /// The DPoP key and the nonces servers gave, when DPoP is on.
    pub(super) dpop: Option<Prover>,
    /// The token sent to each endpoint (keyed by the endpoint's URL): a
    /// token obtained for one server is never sent to another.
    pub(super) current: Mutex<HashMap<String, Current>>,
    /// One flow at a time.
    pub(super) flow: tokio::sync::Mutex<FlowState>,
}

/// The token in use for one endpoint.
#[derive(Clone)]
pub(super) struct Current {
    issuer: String,
    header: ::http::HeaderValue,
    scopes: Vec<String>,
    /// The access token of a DPoP-bound token (each request's proof names
    /// its hash).
    bound: Option<String>,
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
    dpop: Option<DpopKey>,
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
            dpop: None,
        }
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn TokenStore> {
        &self.inner.config.store
    }

    pub(super) fn current(&self, endpoint: &str) -> Option<Current> {
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

    /// The credentials of one `method` request to `endpoint`: its
    /// `Authorization` value and, for a DPoP-bound token, a fresh proof.
    pub(crate) fn credentials(
        &self,
        endpoint: &str,
        method: &str,
    ) -> Result<Option<(::http::HeaderValue, Option<::http::HeaderValue>)>, OAuthError> {
        let Some(current) = self.current(endpoint) else {
            return Ok(None);
        };
        let proof = match (&current.bound, &self.inner.dpop) {
            (Some(token), Some(prover)) => Some(prover.proof(method, endpoint, Some(token))?),
            _ => None,
        };
        Ok(Some((current.header, proof)))
    }

    /// Keeps the DPoP nonce a response from `url` carries; whether it is
    /// new (a request refused with `use_dpop_nonce` may then be sent again).
    pub(crate) fn remember_nonce(&self, url: &str, headers: &::http::HeaderMap) -> bool {
        self.inner
            .dpop
            .as_ref()
            .is_some_and(|p| p.remember(url, headers))
    }

    /// Whether `tokens` can be presented: a bearer token, or one bound to
    /// this client's DPoP key.
    pub(super) fn can_present(&self, tokens: &TokenSet) -> bool {
        match (&tokens.dpop_jkt, &self.inner.dpop) {
            (None, _) => true,
            (Some(jkt), Some(prover)) => jkt == prover.thumbprint(),
            (Some(_), None) => false,
        }
    }

    pub(super) fn set_current(
        &self,
        endpoint: &str,
        issuer: &str,
        tokens: &TokenSet,
    ) -> Result<(), OAuthError> {
        if !self.can_present(tokens) {
            return Err(OAuthError::Token(
                "the token is bound to another DPoP key".into(),
            ));
        }
        let mut header = ::http::HeaderValue::from_str(&tokens.authorization())
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
                    bound: tokens
                        .dpop_jkt
                        .is_some()
                        .then(|| tokens.access_token.clone()),
                },
            );
        Ok(())
    }

    pub(super) fn clear_current(&self, endpoint: &str) {
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

    /// Ask for DPoP-bound tokens (RFC 9449, as the MCP authorization
    /// extension drafts it), proved with `key`: every token request to an
    /// issuer that lists ES256 carries a proof, a bound token is sent with
    /// the `DPoP` scheme and a fresh proof on every request, and a server's
    /// `use_dpop_nonce` is answered once with its nonce. An issuer that does
    /// not list ES256 is asked for bearer tokens as before.
    pub fn dpop(mut self, key: DpopKey) -> Self {
        self.dpop = Some(key);
        self
    }

    /// The configured [`OAuth`].
    pub fn build(self) -> OAuth {
        // Building the connection pool fails only when TLS cannot be set up,
        // which new_pool already reports; fall back to refusing every call.
        let http = OAuthHttp::new(self.allow_insecure_http)
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
                dpop: self.dpop.map(Prover::new),
                current: Mutex::new(HashMap::new()),
                flow: tokio::sync::Mutex::new(FlowState::default()),
            }),
        }
    }
}
