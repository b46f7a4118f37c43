//! What a client call can fail with.
//!
//! The variants keep apart what a caller must never confuse: the peer's own
//! JSON-RPC error ([`ClientError::Rpc`]), a failure to reach the peer or to
//! read its answer ([`ClientError::Transport`]), a local deadline
//! ([`ClientError::Timeout`]), a peer that broke the protocol
//! ([`ClientError::Protocol`]), an answer past one of the client's own
//! limits ([`ClientError::LimitExceeded`]), and an application handler that
//! failed ([`ClientError::Handler`]).

use std::fmt;
use std::time::Duration;

use crate::Error;

/// Which deadline expired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TimeoutKind {
    /// The per-request timeout (possibly reset by progress notifications).
    Request,
    /// The maximum total time, which progress never extends.
    MaxTotal,
}

/// How the peer broke the protocol, in a [`ClientError::Protocol`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProtocolErrorKind {
    /// No protocol revision in common, or an answer in a revision this client
    /// does not speak.
    Version,
    /// A result of the wrong shape: not an object, a list member that is not
    /// an array, a response with neither `result` nor `error`.
    MalformedResult,
    /// A list that does not end: a repeated cursor, or more pages than allowed.
    Pagination,
    /// An `input_required` result or input request the client cannot act on,
    /// or more input rounds than allowed.
    InputRequest,
    /// A subscription the server ended before acknowledging it.
    Subscription,
}

/// Which of the client's limits an answer went past, in a
/// [`ClientError::LimitExceeded`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientLimit {
    /// The bytes of one message from the server
    /// ([`ClientBuilder::max_message_bytes`](super::ClientBuilder::max_message_bytes)).
    MessageBytes,
    /// The items of one whole listing, all its pages together
    /// ([`ClientBuilder::max_listing_items`](super::ClientBuilder::max_listing_items)).
    ListingItems,
    /// The bytes of one whole listing's items as compact JSON, all its
    /// pages together
    /// ([`ClientBuilder::max_listing_bytes`](super::ClientBuilder::max_listing_bytes)).
    ListingBytes,
}

impl ClientLimit {
    /// The name of the limit, as its [`ClientBuilder`](super::ClientBuilder)
    /// setter spells it (`"max_listing_items"`).
    pub fn name(self) -> &'static str {
        match self {
            ClientLimit::MessageBytes => "max_message_bytes",
            ClientLimit::ListingItems => "max_listing_items",
            ClientLimit::ListingBytes => "max_listing_bytes",
        }
    }
}

impl fmt::Display for ClientLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed client operation.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientError {
    /// The peer answered with a JSON-RPC error.
    Rpc {
        /// The error object, as sent by the peer.
        error: Error,
        /// The HTTP status that carried it (Streamable HTTP only).
        status: Option<u16>,
    },
    /// The peer could not be reached, or the connection failed before the
    /// response arrived (refused, closed, not JSON-RPC, an HTTP error without a
    /// JSON-RPC body, a child process that exited).
    Transport {
        /// What went wrong.
        message: String,
        /// The HTTP status, when the failure was an HTTP answer.
        status: Option<u16>,
        /// The underlying error, if any.
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// A local deadline expired; the request was cancelled.
    Timeout {
        /// Which deadline.
        kind: TimeoutKind,
        /// How long the request had been running.
        elapsed: Duration,
    },
    /// The peer broke the protocol: a malformed result, a repeated page
    /// cursor, too many pages or input rounds, an unsupported revision.
    Protocol {
        /// Which rule.
        kind: ProtocolErrorKind,
        /// What exactly.
        message: String,
    },
    /// An answer went past one of the client's limits, and what was read of
    /// it is dropped: a message larger than the message limit fails the
    /// call it answers at once, and a listing with more items or bytes than
    /// the listing limits stops at the page that crossed them (no further
    /// page is asked for).
    LimitExceeded {
        /// Which limit.
        limit: ClientLimit,
        /// Its value: bytes, or items for [`ClientLimit::ListingItems`].
        max: usize,
        /// What went past it.
        message: String,
    },
    /// The caller passed something the protocol cannot carry (arguments that
    /// are not a JSON object, a method that is not a list method). Nothing was
    /// sent.
    InvalidArgument(String),
    /// An application handler (elicitation, sampling, roots) failed, or none
    /// is installed for what the server asked.
    Handler {
        /// What failed.
        message: String,
        /// The handler's own error, if it returned one.
        source: Option<crate::BoxError>,
    },
    /// The tool answered with `isError: true`; `message` is its text content.
    /// Only [`Client::call_tool_as`](crate::Client::call_tool_as) reports it
    /// as an error: [`Client::call_tool`](crate::Client::call_tool) returns
    /// such results as they are.
    ToolFailed {
        /// The result's text blocks, joined by newlines.
        message: String,
    },
    /// The server refused the request for want of authorization (HTTP 401
    /// or 403), and OAuth could not fix it or none is configured.
    Auth {
        /// The HTTP status.
        status: u16,
        /// Why the request stays refused.
        message: String,
        /// The server's first `WWW-Authenticate` value, if any.
        challenge: Option<String>,
        /// What OAuth failed with, if it tried.
        source: Option<crate::client::oauth::OAuthError>,
    },
    /// The task was cancelled before it finished (the Tasks extension).
    TaskCancelled {
        /// The task's id.
        task_id: String,
    },
    /// The task asks for input that no handler of the client can give.
    TaskInput {
        /// The task's id.
        task_id: String,
        /// Its outstanding input requests.
        requests: serde_json::Map<String, serde_json::Value>,
    },
    /// A result did not decode into the type asked for.
    Decode {
        /// What was being decoded (`structuredContent of tool "add"`).
        what: String,
        /// serde's reason, with the path of the offending field.
        source: serde_json::Error,
    },
}

impl ClientError {
    pub(crate) fn transport(message: impl Into<String>) -> Self {
        ClientError::Transport {
            message: message.into(),
            status: None,
            source: None,
        }
    }

    pub(crate) fn transport_with(
        message: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        ClientError::Transport {
            message: message.into(),
            status: None,
            source: Some(source.into()),
        }
    }

    pub(crate) fn http_status(status: u16, body: &[u8]) -> Self {
        let text = String::from_utf8_lossy(&body[..body.len().min(200)])
            .trim()
            .to_string();
        let message = if text.is_empty() {
            format!("HTTP status {status}")
        } else {
            format!("HTTP status {status}: {text}")
        };
        ClientError::Transport {
            message,
            status: Some(status),
            source: None,
        }
    }

    pub(crate) fn protocol(kind: ProtocolErrorKind, message: impl Into<String>) -> Self {
        ClientError::Protocol {
            kind,
            message: message.into(),
        }
    }

    pub(crate) fn limit(limit: ClientLimit, max: usize, message: impl Into<String>) -> Self {
        ClientError::LimitExceeded {
            limit,
            max,
            message: message.into(),
        }
    }

    pub(crate) fn invalid_argument(message: impl Into<String>) -> Self {
        ClientError::InvalidArgument(message.into())
    }

    pub(crate) fn handler(message: impl Into<String>, source: Option<crate::BoxError>) -> Self {
        ClientError::Handler {
            message: message.into(),
            source,
        }
    }

    /// The kind of protocol breach, for a [`ClientError::Protocol`].
    pub fn protocol_kind(&self) -> Option<ProtocolErrorKind> {
        match self {
            ClientError::Protocol { kind, .. } => Some(*kind),
            _ => None,
        }
    }

    /// The limit an answer went past, for a [`ClientError::LimitExceeded`].
    ///
    /// ```
    /// use snodo::client::{ClientError, ClientLimit};
    /// let err = ClientError::LimitExceeded {
    ///     limit: ClientLimit::ListingItems,
    ///     max: 1000,
    ///     message: "tools/list lists more than 1000 items".into(),
    /// };
    /// assert_eq!(err.exceeded_limit(), Some(ClientLimit::ListingItems));
    /// assert_eq!(
    ///     err.to_string(),
    ///     "limit exceeded: tools/list lists more than 1000 items (max_listing_items = 1000)"
    /// );
    /// ```
    pub fn exceeded_limit(&self) -> Option<ClientLimit> {
        match self {
            ClientError::LimitExceeded { limit, .. } => Some(*limit),
            _ => None,
        }
    }

    /// The peer's JSON-RPC error, if this is one.
    pub fn rpc_error(&self) -> Option<&Error> {
        match self {
            ClientError::Rpc { error, .. } => Some(error),
            _ => None,
        }
    }

    /// The JSON-RPC error code, if the peer answered with an error.
    ///
    /// ```
    /// use snodo::client::{ClientError, ProtocolErrorKind};
    /// let err = ClientError::Protocol { kind: ProtocolErrorKind::Pagination, message: "loop".into() };
    /// assert_eq!(err.code(), None);
    /// assert_eq!(err.protocol_kind(), Some(ProtocolErrorKind::Pagination));
    /// ```
    pub fn code(&self) -> Option<i64> {
        self.rpc_error().map(Error::code)
    }

    /// Whether the peer answered with a JSON-RPC error.
    pub fn is_rpc(&self) -> bool {
        matches!(self, ClientError::Rpc { .. })
    }

    /// Whether the peer could not be reached or the connection failed.
    pub fn is_transport(&self) -> bool {
        matches!(self, ClientError::Transport { .. })
    }

    /// Whether the server refused for want of authorization.
    pub fn is_auth(&self) -> bool {
        matches!(self, ClientError::Auth { .. })
    }

    /// Whether a local deadline expired.
    pub fn is_timeout(&self) -> bool {
        matches!(self, ClientError::Timeout { .. })
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Rpc { error, .. } => {
                write!(f, "the server answered with an error: {error}")
            }
            ClientError::Transport { message, .. } => write!(f, "transport failure: {message}"),
            ClientError::Timeout {
                kind: TimeoutKind::Request,
                elapsed,
            } => {
                write!(f, "request timed out after {:.1} s", elapsed.as_secs_f64())
            }
            ClientError::Timeout {
                kind: TimeoutKind::MaxTotal,
                elapsed,
            } => {
                write!(
                    f,
                    "maximum total timeout exceeded after {:.1} s",
                    elapsed.as_secs_f64()
                )
            }
            ClientError::Protocol { message, .. } => write!(f, "protocol violation: {message}"),
            ClientError::LimitExceeded {
                limit,
                max,
                message,
            } => write!(f, "limit exceeded: {message} ({limit} = {max})"),
            ClientError::InvalidArgument(message) => write!(f, "invalid argument: {message}"),
            ClientError::Handler { message, .. } => write!(f, "handler failed: {message}"),
            ClientError::ToolFailed { message } => write!(f, "the tool failed: {message}"),
            ClientError::TaskCancelled { task_id } => write!(f, "task {task_id} was cancelled"),
            ClientError::TaskInput { task_id, requests } => write!(
                f,
                "task {task_id} asks for input the client cannot give ({})",
                requests.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
            ClientError::Decode { what, source } => {
                write!(f, "could not decode the {what}: {source}")
            }
            ClientError::Auth {
                status, message, ..
            } => write!(f, "not authorized (HTTP {status}): {message}"),
        }
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ClientError::Rpc { error, .. } => error
                .cause()
                .map(|c| c as &(dyn std::error::Error + 'static)),
            ClientError::Decode { source, .. } => Some(source),
            ClientError::Auth {
                source: Some(source),
                ..
            } => Some(source),
            ClientError::Handler {
                source: Some(source),
                ..
            } => Some(source.as_ref()),
            ClientError::Transport {
                source: Some(source),
                ..
            } => Some(source.as_ref()),
            _ => None,
        }
    }
}
