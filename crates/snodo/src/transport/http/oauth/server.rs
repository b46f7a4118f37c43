//! [`ResourceServer`]: its metadata document, the bearer check and the
//! challenges it answers with.

use std::sync::Arc;
use std::time::Duration;

use ::http::header::{self, HeaderMap, HeaderValue};
use ::http::{Method, Response, StatusCode};
use bytes::Bytes;

use super::dpop::{DEFAULT_DPOP_WINDOW, DpopCheck, MAX_DPOP_PROOFS, Mode, Reuse};
use super::verify::{TokenVerifier, VerifyError};
use crate::Principal;
use crate::protocol::auth::challenge::Challenge;
use crate::protocol::auth::dpop::{self as proof, ALGORITHM, DPOP_HEADER};
use crate::protocol::auth::metadata::{
    PRM_WELL_KNOWN, ResourceMetadata, resource_metadata_path, split_url,
};
use crate::transport::http::McpBody;

/// Longest `Authorization` value read.
pub const MAX_AUTHORIZATION_BYTES: usize = 8 * 1024;

/// The resource server's configuration. Cheap to clone.
#[derive(Clone)]
pub struct ResourceServer {
    inner: Arc<Inner>,
}

struct Inner {
    metadata: ResourceMetadata,
    /// The metadata document, encoded once.
    document: Bytes,
    /// Its absolute URL (path-inserted), for `resource_metadata`.
    metadata_url: String,
    /// The path-inserted and root paths it is served at.
    paths: Vec<String>,
    default_scopes: Vec<String>,
    verifier: Arc<dyn TokenVerifier>,
    /// The resource's `scheme://authority`, for the `htu` of DPoP proofs.
    origin: String,
    dpop: Option<DpopCheck>,
}

impl std::fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceServer")
            .field("resource", &self.inner.metadata.resource)
            .field(
                "authorization_servers",
                &self.inner.metadata.authorization_servers,
            )
            .field("verifier", &self.inner.verifier)
            .finish_non_exhaustive()
    }
}

/// Builds a [`ResourceServer`].
#[derive(Debug)]
pub struct ResourceServerBuilder {
    metadata: ResourceMetadata,
    default_scopes: Vec<String>,
    verifier: Option<Arc<dyn TokenVerifier>>,
    dpop: Option<(Mode, Duration)>,
}

/// Why a [`ResourceServer`] could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "resource server configuration: {}", self.0)
    }
}

impl std::error::Error for ConfigError {}

impl ResourceServer {
    /// A resource server for the MCP endpoint at `resource`, its canonical
    /// URI exactly as clients send it (`https://mcp.example.com/mcp`).
    pub fn builder(resource: &str) -> ResourceServerBuilder {
        ResourceServerBuilder {
            metadata: ResourceMetadata {
                resource: resource.to_string(),
                bearer_methods_supported: Some(vec!["header".into()]),
                ..ResourceMetadata::default()
            },
            default_scopes: Vec::new(),
            verifier: None,
            dpop: None,
        }
    }

    /// The Protected Resource Metadata document.
    pub fn metadata(&self) -> &ResourceMetadata {
        &self.inner.metadata
    }

    /// The metadata's absolute URL (the path-inserted one).
    pub fn metadata_url(&self) -> &str {
        &self.inner.metadata_url
    }

    /// The paths the metadata is served at: path-inserted, then root.
    pub fn metadata_paths(&self) -> &[String] {
        &self.inner.paths
    }

    /// Whether `path` is one of [`metadata_paths`](Self::metadata_paths).
    pub fn is_metadata_path(&self, path: &str) -> bool {
        self.inner.paths.iter().any(|p| p == path)
    }

    /// The answer to a request for the metadata: the document for `GET`
    /// and `HEAD`, the CORS preflight for `OPTIONS`, 405 otherwise.
    pub fn metadata_response(&self, method: &Method) -> Response<McpBody> {
        let mut response = match *method {
            Method::GET => Response::new(McpBody::full(self.inner.document.clone())),
            Method::HEAD => Response::new(McpBody::empty()),
            Method::OPTIONS => {
                let mut r = Response::new(McpBody::empty());
                *r.status_mut() = StatusCode::NO_CONTENT;
                let h = r.headers_mut();
                h.insert(
                    header::ACCESS_CONTROL_ALLOW_METHODS,
                    HeaderValue::from_static("GET, HEAD, OPTIONS"),
                );
                h.insert(
                    header::ACCESS_CONTROL_ALLOW_HEADERS,
                    HeaderValue::from_static("mcp-protocol-version"),
                );
                r
            }
            _ => {
                let mut r = Response::new(McpBody::empty());
                *r.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
                r.headers_mut().insert(
                    header::ALLOW,
                    HeaderValue::from_static("GET, HEAD, OPTIONS"),
                );
                r
            }
        };
        let h = response.headers_mut();
        h.insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
        if *method == Method::GET || *method == Method::HEAD {
            h.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            h.insert(
                header::CACHE_CONTROL,
                HeaderValue::from_static("max-age=3600"),
            );
        }
        response
    }

    /// Checks the credentials of a `method` request to `uri`: the
    /// principal, or the response that refuses the request.
    pub async fn authenticate(
        &self,
        method: &Method,
        uri: &::http::Uri,
        headers: &HeaderMap,
    ) -> Result<Principal, Box<Response<McpBody>>> {
        if uri.query().is_some_and(query_has_token) {
            return Err(Box::new(self.invalid_request(
                "access tokens are accepted in the Authorization header only",
            )));
        }
        let mut values = headers.get_all(header::AUTHORIZATION).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            return Err(Box::new(if headers.contains_key(header::AUTHORIZATION) {
                self.invalid_request("more than one Authorization header")
            } else {
                self.unauthorized(None)
            }));
        };
        let (scheme, token) = match credential(value.as_bytes()) {
            Ok(Some(found)) => found,
            Ok(None) => return Err(Box::new(self.unauthorized(None))),
            Err(why) => return Err(Box::new(self.invalid_request(why))),
        };
        let dpop = self.inner.dpop.as_ref();
        match (scheme, dpop.map(|d| d.mode)) {
            (Scheme::Dpop, None) => return Err(Box::new(self.unauthorized(None))),
            (Scheme::Bearer, Some(Mode::Required)) => {
                return Err(Box::new(self.unauthorized(Some(
                    "a bearer token where only DPoP-bound tokens are taken",
                ))));
            }
            _ => {}
        }
        match self.inner.verifier.verify(token).await {
            Ok(principal) => {
                let bound_to = principal
                    .claims
                    .get("cnf")
                    .and_then(|c| c.get("jkt"))
                    .and_then(serde_json::Value::as_str);
                match (scheme, dpop, bound_to) {
                    (Scheme::Bearer, _, None) => Ok(principal),
                    (Scheme::Bearer, _, Some(_)) => Err(Box::new(self.unauthorized(Some(
                        "bound to a DPoP key: present it with the DPoP scheme and a proof",
                    )))),
                    (Scheme::Dpop, _, None) => {
                        Err(Box::new(self.unauthorized(Some("not bound to a DPoP key"))))
                    }
                    (Scheme::Dpop, None, Some(_)) => Err(Box::new(self.unauthorized(None))),
                    (Scheme::Dpop, Some(check), Some(jkt)) => {
                        match self.check_proof(check, method, uri, headers, token, jkt) {
                            Ok(()) => Ok(principal),
                            Err(refusal) => Err(refusal),
                        }
                    }
                }
            }
            Err(VerifyError::Invalid(why)) => Err(Box::new(self.unauthorized(Some(&why)))),
            Err(VerifyError::Unavailable(_)) => {
                let mut r = oauth_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "temporarily_unavailable",
                    "the token cannot be verified now",
                );
                let after = self.inner.verifier.retry_after();
                let secs = after.as_secs() + u64::from(after.subsec_nanos() > 0);
                r.headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(secs.max(1)));
                Err(Box::new(r))
            }
        }
    }

    /// The DPoP proof of a request that presents the token `token`, bound
    /// to the key `jkt`: exactly one, valid for this request and this
    /// token, signed by that key, not seen before in the window.
    fn check_proof(
        &self,
        check: &DpopCheck,
        method: &Method,
        uri: &::http::Uri,
        headers: &HeaderMap,
        token: &str,
        jkt: &str,
    ) -> Result<(), Box<Response<McpBody>>> {
        let refuse = |why: &str| Box::new(self.invalid_proof(why));
        let mut proofs = headers.get_all(DPOP_HEADER).iter();
        let (Some(value), None) = (proofs.next(), proofs.next()) else {
            return Err(refuse(if headers.contains_key(DPOP_HEADER) {
                "more than one DPoP header"
            } else {
                "no DPoP proof"
            }));
        };
        let url = format!("{}{}", self.inner.origin, uri.path());
        let now = crate::net::now_secs();
        let expected = proof::Expected {
            method: method.as_str(),
            url: &url,
            access_token: Some(token),
            now,
            window: check.window.as_secs(),
        };
        let verified =
            proof::verify_proof(value.as_bytes(), &expected).map_err(|e| refuse(&e.to_string()))?;
        if verified.jkt != jkt {
            return Err(refuse(
                "the proof is signed by another key than the token is bound to",
            ));
        }
        match check.first_use(&verified.jkt, &verified.jti, verified.iat, now) {
            Ok(()) => Ok(()),
            Err(Reuse::Replayed) => Err(refuse("the proof was used before")),
            Err(full @ (Reuse::KeyFull | Reuse::Full)) => {
                let why = if full == Reuse::KeyFull {
                    "too many DPoP proofs of this key in the window"
                } else {
                    "too many DPoP proofs in the window"
                };
                let mut r = oauth_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "temporarily_unavailable",
                    why,
                );
                r.headers_mut().insert(
                    header::RETRY_AFTER,
                    HeaderValue::from(check.window.as_secs().max(1)),
                );
                Err(Box::new(r))
            }
        }
    }

    /// The challenge of this server's scheme: `DPoP` where only bound
    /// tokens are taken, `Bearer` otherwise.
    fn challenge(&self) -> Challenge {
        let scheme = match self.inner.dpop.as_ref().map(|d| d.mode) {
            Some(Mode::Required) => "DPoP",
            _ => "Bearer",
        };
        let c = Challenge::new(scheme).with("resource_metadata", &self.inner.metadata_url);
        if scheme == "DPoP" {
            c.with("algs", ALGORITHM)
        } else {
            c
        }
    }

    fn with_challenge(response: Response<McpBody>, challenge: Challenge) -> Response<McpBody> {
        Self::with_challenges(response, [challenge])
    }

    fn with_challenges(
        mut response: Response<McpBody>,
        challenges: impl IntoIterator<Item = Challenge>,
    ) -> Response<McpBody> {
        for challenge in challenges {
            if let Ok(v) = HeaderValue::from_str(&challenge.to_string()) {
                response.headers_mut().append(header::WWW_AUTHENTICATE, v);
            }
        }
        response
    }

    /// `401 invalid_dpop_proof` with a DPoP challenge.
    fn invalid_proof(&self, why: &str) -> Response<McpBody> {
        let c = Challenge::new("DPoP")
            .with("resource_metadata", &self.inner.metadata_url)
            .with("algs", ALGORITHM)
            .with("error", "invalid_dpop_proof")
            .with("error_description", why);
        Self::with_challenge(
            oauth_error(StatusCode::UNAUTHORIZED, "invalid_dpop_proof", why),
            c,
        )
    }

    /// `401`: no credentials (`why` is `None`), or a token that did not
    /// verify. Where DPoP-bound tokens are taken beside bearer ones, a
    /// `DPoP` challenge follows the `Bearer` one.
    pub fn unauthorized(&self, why: Option<&str>) -> Response<McpBody> {
        let mut c = self.challenge();
        if !self.inner.default_scopes.is_empty() {
            c = c.with("scope", &self.inner.default_scopes.join(" "));
        }
        let also_dpop =
            (self.inner.dpop.as_ref().map(|d| d.mode) == Some(Mode::Accepted)).then(|| {
                Challenge::new("DPoP")
                    .with("resource_metadata", &self.inner.metadata_url)
                    .with("algs", ALGORITHM)
            });
        let response = match why {
            None => oauth_error(
                StatusCode::UNAUTHORIZED,
                "invalid_request",
                "authorization required",
            ),
            Some(why) => {
                c = c
                    .with("error", "invalid_token")
                    .with("error_description", &format!("the token is {why}"));
                oauth_error(
                    StatusCode::UNAUTHORIZED,
                    "invalid_token",
                    &format!("the token is {why}"),
                )
            }
        };
        Self::with_challenges(response, std::iter::once(c).chain(also_dpop))
    }

    /// `403 insufficient_scope`, naming every scope the request needs.
    pub fn insufficient_scope(&self, needed: &[String]) -> Response<McpBody> {
        let scope = needed.join(" ");
        let why = format!("this request needs scope {scope:?}");
        let c = self
            .challenge()
            .with("error", "insufficient_scope")
            .with("scope", &scope)
            .with("error_description", &why);
        Self::with_challenge(
            oauth_error(StatusCode::FORBIDDEN, "insufficient_scope", &why),
            c,
        )
    }

    /// `400 invalid_request`.
    pub fn invalid_request(&self, why: &str) -> Response<McpBody> {
        let c = self
            .challenge()
            .with("error", "invalid_request")
            .with("error_description", why);
        Self::with_challenge(
            oauth_error(StatusCode::BAD_REQUEST, "invalid_request", why),
            c,
        )
    }
}

/// A JSON body `{"error": …, "error_description": …}`.
fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response<McpBody> {
    let body = serde_json::json!({"error": error, "error_description": description});
    let mut r = Response::new(McpBody::full(body.to_string()));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

/// Whether a query string carries `access_token`.
fn query_has_token(query: &str) -> bool {
    form_urlencoded::parse(query.as_bytes()).any(|(k, _)| k == "access_token")
}

/// The schemes an access token is presented with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scheme {
    Bearer,
    Dpop,
}

/// The token of a `Bearer` credential; `Ok(None)` for another scheme
/// (what the fuzz target reads).
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn bearer_token(value: &[u8]) -> Result<Option<&str>, &'static str> {
    Ok(credential(value)?.and_then(|(scheme, token)| (scheme == Scheme::Bearer).then_some(token)))
}

/// The scheme and token of a `Bearer` or `DPoP` credential; `Ok(None)` for
/// another scheme.
pub(crate) fn credential(value: &[u8]) -> Result<Option<(Scheme, &str)>, &'static str> {
    if value.len() > MAX_AUTHORIZATION_BYTES {
        return Err("the Authorization header is too long");
    }
    let text = std::str::from_utf8(value).map_err(|_| "the Authorization header is not text")?;
    let (scheme, rest) = match text.split_once(' ') {
        Some(parts) => parts,
        None => (text, ""),
    };
    let scheme = if scheme.eq_ignore_ascii_case("bearer") {
        Scheme::Bearer
    } else if scheme.eq_ignore_ascii_case("dpop") {
        Scheme::Dpop
    } else {
        return Ok(None);
    };
    let token = rest.trim_matches(' ');
    if token.is_empty() {
        return Err("the credential has no token");
    }
    // token68: ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/", then "="s.
    let body = token.trim_end_matches('=');
    if body.is_empty()
        || !body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
    {
        return Err("the token is malformed");
    }
    Ok(Some((scheme, token)))
}

impl ResourceServerBuilder {
    /// An authorization server whose tokens are accepted (its issuer
    /// identifier, exactly as its metadata spells it).
    pub fn authorization_server(mut self, issuer: &str) -> Self {
        self.metadata.authorization_servers.push(issuer.to_string());
        self
    }

    /// The scopes published as `scopes_supported`.
    pub fn scopes_supported<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.metadata.scopes_supported = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// The scopes a `401` challenge names (usually the server's
    /// [default scopes](crate::ServerBuilder::default_scopes)).
    pub fn challenge_scopes<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.default_scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The human-readable `resource_name`.
    pub fn resource_name(mut self, name: &str) -> Self {
        self.metadata.resource_name = Some(name.to_string());
        self
    }

    /// How tokens are verified.
    pub fn verifier(mut self, verifier: impl TokenVerifier) -> Self {
        self.verifier = Some(Arc::new(verifier));
        self
    }

    /// Take DPoP-bound tokens (RFC 9449, as the MCP authorization extension
    /// drafts it) beside bearer tokens: a token whose claims carry
    /// `cnf.jkt` is taken only with the `DPoP` scheme and a proof (ES256)
    /// for this request, this token and that key, made within
    /// [`DEFAULT_DPOP_WINDOW`] and not seen before; a bearer token goes on
    /// as before. The metadata lists `dpop_signing_alg_values_supported`.
    pub fn dpop(mut self) -> Self {
        let window = self.dpop.map_or(DEFAULT_DPOP_WINDOW, |(_, w)| w);
        self.dpop = Some((Mode::Accepted, window));
        self
    }

    /// Like [`dpop`](Self::dpop), and take DPoP-bound tokens only: the
    /// metadata says `dpop_bound_access_tokens_required`, challenges use the
    /// `DPoP` scheme.
    pub fn dpop_required(mut self) -> Self {
        let window = self.dpop.map_or(DEFAULT_DPOP_WINDOW, |(_, w)| w);
        self.dpop = Some((Mode::Required, window));
        self
    }

    /// How far a proof's `iat` may be from this server's clock, either way
    /// ([`DEFAULT_DPOP_WINDOW`]); proofs are remembered this long after it
    /// to refuse a replay.
    pub fn dpop_window(mut self, window: Duration) -> Self {
        let mode = self.dpop.map_or(Mode::Accepted, |(m, _)| m);
        self.dpop = Some((mode, window));
        self
    }

    /// The resource server; refused without a verifier, without an
    /// authorization server, or with a resource that is not an absolute
    /// http(s) URI without a fragment.
    pub fn build(self) -> Result<ResourceServer, ConfigError> {
        let resource = &self.metadata.resource;
        let parts = split_url(resource)
            .filter(|_| !resource.contains('#'))
            .ok_or_else(|| {
                ConfigError(format!(
                    "the resource {resource:?} is not an absolute http(s) URI without a fragment"
                ))
            })?;
        if self.metadata.authorization_servers.is_empty() {
            return Err(ConfigError("no authorization server".into()));
        }
        let verifier = self
            .verifier
            .ok_or_else(|| ConfigError("no token verifier".into()))?;
        let inserted = resource_metadata_path(parts.path);
        let origin = parts.origin.to_string();
        let metadata_url = format!("{origin}{inserted}");
        let mut metadata = self.metadata;
        if let Some((mode, _)) = self.dpop {
            metadata.dpop_signing_alg_values_supported = Some(vec![ALGORITHM.to_string()]);
            metadata.dpop_bound_access_tokens_required = Some(mode == Mode::Required);
        }
        let mut paths = vec![inserted];
        if paths[0] != PRM_WELL_KNOWN {
            paths.push(PRM_WELL_KNOWN.to_string());
        }
        let document = serde_json::to_vec(&metadata).unwrap_or_default().into();
        Ok(ResourceServer {
            inner: Arc::new(Inner {
                metadata,
                document,
                metadata_url,
                paths,
                default_scopes: self.default_scopes,
                verifier,
                origin,
                dpop: self
                    .dpop
                    .map(|(mode, window)| DpopCheck::new(mode, window, MAX_DPOP_PROOFS)),
            }),
        })
    }
}

#[cfg(test)]
mod tests;
