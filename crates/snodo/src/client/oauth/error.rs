//! What OAuth fails with.

use std::fmt;

use crate::error::BackendError;

/// Why authorization failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OAuthError {
    /// An OAuth endpoint could not be reached or answered badly; the HTTP
    /// client's error is the [`source`](std::error::Error::source).
    Http(BackendError),
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
    /// authorizations than [`MAX_AUTHORIZATIONS`](super::MAX_AUTHORIZATIONS).
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

impl std::error::Error for OAuthError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            OAuthError::Http(e) => std::error::Error::source(e),
            _ => None,
        }
    }
}

impl From<crate::net::FetchError> for OAuthError {
    fn from(e: crate::net::FetchError) -> Self {
        match e {
            crate::net::FetchError::Http(m) => OAuthError::Http(m),
            crate::net::FetchError::Insecure(m) => OAuthError::Insecure(m),
        }
    }
}
