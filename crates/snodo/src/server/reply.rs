//! What dispatching one message produces.

use bytes::Bytes;
use http::StatusCode;

use crate::Error;
use crate::wire::{RequestId, encode_error};

/// The outcome of dispatching one incoming message.
#[derive(Debug)]
#[non_exhaustive]
pub enum Dispatched {
    /// Nothing to send: a notification, or a response from the peer.
    Nothing,
    /// One JSON-RPC response.
    Reply(Reply),
    /// Notifications, then the response: the request asked for progress or
    /// log messages, or opened a subscription. Transports send the frames as
    /// they come (SSE over HTTP, lines over stdio); dropping the stream
    /// cancels the request.
    Stream(super::ResponseStream),
    /// Refused at admission: the request's principal lacks scopes it
    /// needs, where the transport's authenticator asked the server to
    /// enforce them (an OAuth resource server does). HTTP answers `403
    /// insufficient_scope` naming [`Forbidden::scopes`]; any other framing
    /// sends [`Forbidden::reply`].
    Forbidden(Forbidden),
}

/// A request refused for want of scopes (see [`Dispatched::Forbidden`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Forbidden {
    /// Every scope the request needs: what a `403 insufficient_scope`
    /// challenge names.
    pub scopes: Vec<String>,
    /// The refusal as a JSON-RPC error (-32600), HTTP status 403.
    pub reply: Reply,
}

/// One encoded JSON-RPC response and the HTTP status it maps to.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The status an HTTP transport answers with (200, or 400/404 for
    /// admission failures).
    pub status: StatusCode,
    /// The compact JSON body.
    pub body: Bytes,
}

impl Reply {
    /// A successful response body.
    pub(crate) fn ok(body: Vec<u8>) -> Self {
        Self {
            status: StatusCode::OK,
            body: body.into(),
        }
    }

    /// An error response with its status.
    pub(crate) fn error(status: StatusCode, id: Option<&RequestId>, error: &Error) -> Self {
        Self {
            status,
            body: encode_error(id, error).into(),
        }
    }

    /// The answer to bytes that did not decode, the same on every transport:
    /// the decoder's error (`-32700` or `-32600`), with the id when one could
    /// be read, HTTP 400.
    pub(crate) fn undecodable(e: &crate::wire::DecodeError) -> Self {
        tracing::debug!(
            target: "snodo::server",
            code = e.error.code(),
            "request refused: {}",
            e.error.message()
        );
        Self::error(StatusCode::BAD_REQUEST, e.id.as_ref(), &e.error)
    }
}

/// An error together with the HTTP status it maps to.
pub(crate) struct Failure {
    pub(crate) status: StatusCode,
    pub(crate) error: Error,
    /// The scopes the request needs, when its principal's grant lacks them.
    pub(crate) scopes: Option<Vec<String>>,
}

impl Failure {
    /// A failure after admission: 200, except for the codes the transport
    /// rules pin to a status wherever they arise (-32020, -32021 and -32022 are
    /// 400, -32601 is 404).
    pub(crate) fn ok(error: Error) -> Self {
        use crate::error::code;
        let status = match error.code() {
            code::HEADER_MISMATCH
            | code::MISSING_CLIENT_CAPABILITY
            | code::UNSUPPORTED_PROTOCOL_VERSION
            | code::PARSE_ERROR
            | code::INVALID_REQUEST => StatusCode::BAD_REQUEST,
            code::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
            _ => StatusCode::OK,
        };
        Self::with_status(status, error)
    }

    /// `error` with the HTTP status a transport answers with.
    pub(crate) fn with_status(status: StatusCode, error: Error) -> Self {
        Self {
            status,
            error,
            scopes: None,
        }
    }

    pub(crate) fn bad_request(error: Error) -> Self {
        Self::with_status(StatusCode::BAD_REQUEST, error)
    }

    pub(crate) fn not_found(error: Error) -> Self {
        Self::with_status(StatusCode::NOT_FOUND, error)
    }

    /// The principal's grant lacks scopes the request needs: 403.
    #[cfg(feature = "auth")]
    pub(crate) fn insufficient_scope(needed: Vec<String>) -> Self {
        let error = Error::invalid_request(format!(
            "Forbidden: this request needs scope {:?}",
            needed.join(" ")
        ));
        Self {
            status: StatusCode::FORBIDDEN,
            error,
            scopes: Some(needed),
        }
    }

    /// The answer to a request refused with this failure.
    pub(crate) fn refuse(self, id: &RequestId) -> Dispatched {
        let reply = Reply::error(self.status, Some(id), &self.error);
        match self.scopes {
            Some(scopes) => Dispatched::Forbidden(Forbidden { scopes, reply }),
            None => Dispatched::Reply(reply),
        }
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure::ok(error)
    }
}
