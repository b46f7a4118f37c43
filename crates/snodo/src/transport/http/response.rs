//! The plain HTTP responses both the 2026-07-28 service and the
//! initialize-era session handling send.

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use http::{Response, StatusCode};

use super::body::McpBody;
use crate::{Error, TransportInfo, wire};

/// A JSON response. A 503 says when to try again (`Retry-After: 1`) unless
/// its maker sets a better time.
pub(super) fn json(code: StatusCode, body: Bytes) -> Response<McpBody> {
    let mut response = Response::new(McpBody::full(body));
    *response.status_mut() = code;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if code == StatusCode::SERVICE_UNAVAILABLE {
        headers.insert(RETRY_AFTER, HeaderValue::from_static("1"));
    }
    response
}

/// A transport-level refusal: a JSON-RPC error without an id.
pub(super) fn reject(code: StatusCode, message: &str) -> Response<McpBody> {
    json(
        code,
        wire::encode_error(None, &Error::invalid_request(message)).into(),
    )
}

/// A response with only a status.
pub(super) fn status(code: StatusCode) -> Response<McpBody> {
    let mut response = Response::new(McpBody::empty());
    *response.status_mut() = code;
    response
}

/// What answers a request refused for want of scopes: the resource server
/// that authenticated it (the only authenticator that asks for scopes to be
/// enforced).
pub(super) struct Challenger {
    #[cfg(feature = "auth")]
    rs: Option<super::oauth::ResourceServer>,
}

impl Challenger {
    /// The challenger of a request about to be handled.
    pub(super) fn of(transport: &TransportInfo) -> Self {
        #[cfg(not(feature = "auth"))]
        let _ = transport;
        Self {
            #[cfg(feature = "auth")]
            rs: transport
                .extensions
                .get::<super::oauth::ResourceServer>()
                .cloned(),
        }
    }

    /// `403 insufficient_scope` naming the scopes the request needs.
    pub(super) fn forbidden(&self, refused: crate::server::Forbidden) -> Response<McpBody> {
        #[cfg(feature = "auth")]
        if let Some(rs) = &self.rs {
            return rs.insufficient_scope(&refused.scopes);
        }
        json(refused.reply.status, refused.reply.body)
    }
}
