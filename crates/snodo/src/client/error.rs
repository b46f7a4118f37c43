//! What a client call can fail with.
//!
//! [`ClientError`] is opaque: its [`kind`](ClientError::kind) keeps apart
//! what a caller must never confuse: the peer's own JSON-RPC error
//! ([`ClientErrorKind::Rpc`]), a failure to reach the peer or to read its
//! answer ([`ClientErrorKind::Transport`]), a local deadline
//! ([`ClientErrorKind::Timeout`]), a peer that broke the protocol
//! ([`ClientErrorKind::Protocol`]), an answer past one of the client's own
//! limits ([`ClientErrorKind::LimitExceeded`]), and an application handler
//! that failed ([`ClientErrorKind::Handler`]); accessors give each kind's
//! details.

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

/// How the peer broke the protocol, in a [`ClientErrorKind::Protocol`]
/// error.
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
    /// A skill file that is not what the skill's entry describes: another
    /// size or digest, a `SKILL.md` whose frontmatter differs from the
    /// entry's, or a file the entry does not list.
    SkillVerification,
}

/// Which of the client's limits an answer went past, in a
/// [`ClientErrorKind::LimitExceeded`] error.
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

/// A failed client operation: what went wrong is its [`kind`](Self::kind),
/// the details are read with the accessors, the message is its `Display`.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use snodo::client::{Client, ClientErrorKind};
/// use snodo::Server;
/// let server = Server::builder("demo", "1.0.0").build().unwrap();
/// let client = Client::connect(server).await.unwrap();
/// let err = client.call_tool("missing", serde_json::json!({})).await.unwrap_err();
/// assert_eq!(err.kind(), ClientErrorKind::Rpc);
/// assert!(err.is_rpc());
/// assert_eq!(err.code(), Some(-32601)); // a server without tools
/// # });
/// ```
pub struct ClientError(Box<Repr>);

/// Which kind of failure a [`ClientError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientErrorKind {
    /// The peer answered with a JSON-RPC error
    /// ([`rpc_error`](ClientError::rpc_error), [`status`](ClientError::status)).
    Rpc,
    /// The peer could not be reached, or the connection failed before the
    /// response arrived (refused, closed, not JSON-RPC, an HTTP error without
    /// a JSON-RPC body, a child process that exited).
    Transport,
    /// A local deadline expired and the request was cancelled
    /// ([`timeout_after`](ClientError::timeout_after)).
    Timeout,
    /// The peer broke the protocol ([`protocol_kind`](ClientError::protocol_kind)).
    Protocol,
    /// An answer went past one of the client's limits
    /// ([`exceeded_limit`](ClientError::exceeded_limit)).
    LimitExceeded,
    /// The caller passed something the protocol cannot carry; nothing was
    /// sent.
    InvalidArgument,
    /// An application handler (elicitation, sampling, roots) failed, or none
    /// is installed for what the server asked.
    Handler,
    /// The tool answered with `isError: true`
    /// ([`tool_failure`](ClientError::tool_failure)); only
    /// [`Client::call_tool_as`](crate::Client::call_tool_as) reports it.
    ToolFailed,
    /// The server refused the request for want of authorization (HTTP 401 or
    /// 403), and OAuth could not fix it or none is configured
    /// ([`challenge`](ClientError::challenge)).
    Auth,
    /// The task was cancelled before it finished ([`task_id`](ClientError::task_id)).
    TaskCancelled,
    /// The task asks for input that no handler of the client can give
    /// ([`input_requests`](ClientError::input_requests)).
    TaskInput,
    /// A result did not decode into the type asked for.
    Decode,
}

/// What a [`ClientError`] holds.
#[derive(Debug)]
pub(crate) enum Repr {
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

impl From<Repr> for ClientError {
    fn from(repr: Repr) -> Self {
        Self(Box::new(repr))
    }
}

impl ClientError {
    pub(crate) fn repr(&self) -> &Repr {
        &self.0
    }

    pub(crate) fn transport(message: impl Into<String>) -> Self {
        Repr::Transport {
            message: message.into(),
            status: None,
            source: None,
        }
        .into()
    }

    pub(crate) fn transport_with(
        message: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Repr::Transport {
            message: message.into(),
            status: None,
            source: Some(source.into()),
        }
        .into()
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
        Repr::Transport {
            message,
            status: Some(status),
            source: None,
        }
        .into()
    }

    pub(crate) fn rpc(error: Error, status: Option<u16>) -> Self {
        Repr::Rpc { error, status }.into()
    }

    pub(crate) fn timeout(kind: TimeoutKind, elapsed: Duration) -> Self {
        Repr::Timeout { kind, elapsed }.into()
    }

    pub(crate) fn protocol(kind: ProtocolErrorKind, message: impl Into<String>) -> Self {
        Repr::Protocol {
            kind,
            message: message.into(),
        }
        .into()
    }

    pub(crate) fn limit(limit: ClientLimit, max: usize, message: impl Into<String>) -> Self {
        Repr::LimitExceeded {
            limit,
            max,
            message: message.into(),
        }
        .into()
    }

    pub(crate) fn invalid_argument(message: impl Into<String>) -> Self {
        Repr::InvalidArgument(message.into()).into()
    }

    pub(crate) fn handler(message: impl Into<String>, source: Option<crate::BoxError>) -> Self {
        Repr::Handler {
            message: message.into(),
            source,
        }
        .into()
    }

    pub(crate) fn decode(what: impl Into<String>, source: serde_json::Error) -> Self {
        Repr::Decode {
            what: what.into(),
            source,
        }
        .into()
    }

    /// Which kind of failure this is.
    pub fn kind(&self) -> ClientErrorKind {
        match self.repr() {
            Repr::Rpc { .. } => ClientErrorKind::Rpc,
            Repr::Transport { .. } => ClientErrorKind::Transport,
            Repr::Timeout { .. } => ClientErrorKind::Timeout,
            Repr::Protocol { .. } => ClientErrorKind::Protocol,
            Repr::LimitExceeded { .. } => ClientErrorKind::LimitExceeded,
            Repr::InvalidArgument(_) => ClientErrorKind::InvalidArgument,
            Repr::Handler { .. } => ClientErrorKind::Handler,
            Repr::ToolFailed { .. } => ClientErrorKind::ToolFailed,
            Repr::Auth { .. } => ClientErrorKind::Auth,
            Repr::TaskCancelled { .. } => ClientErrorKind::TaskCancelled,
            Repr::TaskInput { .. } => ClientErrorKind::TaskInput,
            Repr::Decode { .. } => ClientErrorKind::Decode,
        }
    }

    /// The kind of protocol breach, for a [`ClientErrorKind::Protocol`] error.
    pub fn protocol_kind(&self) -> Option<ProtocolErrorKind> {
        match self.repr() {
            Repr::Protocol { kind, .. } => Some(*kind),
            _ => None,
        }
    }

    /// The limit an answer went past, for a [`ClientErrorKind::LimitExceeded`]
    /// error (its value is in the message).
    pub fn exceeded_limit(&self) -> Option<ClientLimit> {
        match self.repr() {
            Repr::LimitExceeded { limit, .. } => Some(*limit),
            _ => None,
        }
    }

    /// Which deadline expired and how long the request had been running, for
    /// a [`ClientErrorKind::Timeout`] error.
    pub fn timeout_after(&self) -> Option<(TimeoutKind, Duration)> {
        match self.repr() {
            Repr::Timeout { kind, elapsed } => Some((*kind, *elapsed)),
            _ => None,
        }
    }

    /// The peer's JSON-RPC error, if this is one.
    pub fn rpc_error(&self) -> Option<&Error> {
        match self.repr() {
            Repr::Rpc { error, .. } => Some(error),
            _ => None,
        }
    }

    /// The peer's JSON-RPC error, taken out of the failure, if this is one.
    pub fn into_rpc_error(self) -> Result<Error, Self> {
        match *self.0 {
            Repr::Rpc { error, .. } => Ok(error),
            repr => Err(repr.into()),
        }
    }

    /// The JSON-RPC error code, if the peer answered with an error.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use snodo::client::Client;
    /// let client = Client::connect(snodo::Server::builder("s", "1").build().unwrap()).await.unwrap();
    /// let err = client.call_tool("missing", serde_json::json!({})).await.unwrap_err();
    /// assert_eq!(err.code(), Some(-32601)); // a server without tools
    /// assert_eq!(err.protocol_kind(), None);
    /// # });
    /// ```
    pub fn code(&self) -> Option<i64> {
        self.rpc_error().map(Error::code)
    }

    /// The HTTP status that carried the failure (Streamable HTTP only): the
    /// status of a JSON-RPC error, of an HTTP error without one, or of an
    /// authorization refusal.
    pub fn status(&self) -> Option<u16> {
        match self.repr() {
            Repr::Rpc { status, .. } | Repr::Transport { status, .. } => *status,
            Repr::Auth { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The server's first `WWW-Authenticate` value, for a
    /// [`ClientErrorKind::Auth`] error that had one.
    pub fn challenge(&self) -> Option<&str> {
        match self.repr() {
            Repr::Auth { challenge, .. } => challenge.as_deref(),
            _ => None,
        }
    }

    /// The text of a tool's `isError: true` result (its text blocks joined by
    /// newlines), for a [`ClientErrorKind::ToolFailed`] error.
    pub fn tool_failure(&self) -> Option<&str> {
        match self.repr() {
            Repr::ToolFailed { message } => Some(message),
            _ => None,
        }
    }

    /// The task's id, for a [`ClientErrorKind::TaskCancelled`] or
    /// [`ClientErrorKind::TaskInput`] error.
    pub fn task_id(&self) -> Option<&str> {
        match self.repr() {
            Repr::TaskCancelled { task_id } | Repr::TaskInput { task_id, .. } => Some(task_id),
            _ => None,
        }
    }

    /// The task's outstanding input requests, for a
    /// [`ClientErrorKind::TaskInput`] error.
    pub fn input_requests(&self) -> Option<&serde_json::Map<String, serde_json::Value>> {
        match self.repr() {
            Repr::TaskInput { requests, .. } => Some(requests),
            _ => None,
        }
    }

    /// Whether the peer answered with a JSON-RPC error.
    pub fn is_rpc(&self) -> bool {
        self.kind() == ClientErrorKind::Rpc
    }

    /// Whether the peer could not be reached or the connection failed.
    pub fn is_transport(&self) -> bool {
        self.kind() == ClientErrorKind::Transport
    }

    /// Whether the server refused for want of authorization.
    pub fn is_auth(&self) -> bool {
        self.kind() == ClientErrorKind::Auth
    }

    /// Whether a local deadline expired.
    pub fn is_timeout(&self) -> bool {
        self.kind() == ClientErrorKind::Timeout
    }

    /// Whether the peer broke the protocol.
    pub fn is_protocol(&self) -> bool {
        self.kind() == ClientErrorKind::Protocol
    }

    /// Whether an answer went past one of the client's limits.
    pub fn is_limit_exceeded(&self) -> bool {
        self.kind() == ClientErrorKind::LimitExceeded
    }
}

impl fmt::Debug for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.repr().fmt(f)
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.repr() {
            Repr::Rpc { error, .. } => {
                write!(f, "the server answered with an error: {error}")
            }
            Repr::Transport { message, .. } => write!(f, "transport failure: {message}"),
            Repr::Timeout {
                kind: TimeoutKind::Request,
                elapsed,
            } => {
                write!(f, "request timed out after {:.1} s", elapsed.as_secs_f64())
            }
            Repr::Timeout {
                kind: TimeoutKind::MaxTotal,
                elapsed,
            } => {
                write!(
                    f,
                    "maximum total timeout exceeded after {:.1} s",
                    elapsed.as_secs_f64()
                )
            }
            Repr::Protocol { message, .. } => write!(f, "protocol violation: {message}"),
            Repr::LimitExceeded {
                limit,
                max,
                message,
            } => write!(f, "limit exceeded: {message} ({limit} = {max})"),
            Repr::InvalidArgument(message) => write!(f, "invalid argument: {message}"),
            Repr::Handler { message, .. } => write!(f, "handler failed: {message}"),
            Repr::ToolFailed { message } => write!(f, "the tool failed: {message}"),
            Repr::TaskCancelled { task_id } => write!(f, "task {task_id} was cancelled"),
            Repr::TaskInput { task_id, requests } => write!(
                f,
                "task {task_id} asks for input the client cannot give ({})",
                requests.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
            Repr::Decode { what, source } => {
                write!(f, "could not decode the {what}: {source}")
            }
            Repr::Auth {
                status, message, ..
            } => write!(f, "not authorized (HTTP {status}): {message}"),
        }
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self.repr() {
            Repr::Rpc { error, .. } => error
                .cause()
                .map(|c| c as &(dyn std::error::Error + 'static)),
            Repr::Decode { source, .. } => Some(source),
            Repr::Auth {
                source: Some(source),
                ..
            } => Some(source),
            Repr::Handler {
                source: Some(source),
                ..
            } => Some(source.as_ref()),
            Repr::Transport {
                source: Some(source),
                ..
            } => Some(source.as_ref()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_names_its_setter_and_value() {
        let err = ClientError::limit(
            ClientLimit::ListingItems,
            1000,
            "tools/list lists more than 1000 items",
        );
        assert_eq!(err.kind(), ClientErrorKind::LimitExceeded);
        assert!(err.is_limit_exceeded() && !err.is_rpc());
        assert_eq!(err.exceeded_limit(), Some(ClientLimit::ListingItems));
        assert_eq!(
            err.to_string(),
            "limit exceeded: tools/list lists more than 1000 items (max_listing_items = 1000)"
        );
    }

    #[test]
    fn each_kind_answers_its_own_accessors_only() {
        let rpc = ClientError::rpc(Error::invalid_params("no"), Some(400));
        assert_eq!(
            (rpc.kind(), rpc.code(), rpc.status()),
            (ClientErrorKind::Rpc, Some(-32602), Some(400))
        );
        assert_eq!(rpc.timeout_after(), None);
        let timeout = ClientError::timeout(TimeoutKind::MaxTotal, Duration::from_secs(2));
        assert_eq!(
            timeout.timeout_after(),
            Some((TimeoutKind::MaxTotal, Duration::from_secs(2)))
        );
        assert!(timeout.is_timeout() && timeout.code().is_none() && timeout.status().is_none());
        let transport = ClientError::http_status(502, b"bad gateway");
        assert_eq!(
            (transport.kind(), transport.status()),
            (ClientErrorKind::Transport, Some(502))
        );
        assert_eq!(
            transport.to_string(),
            "transport failure: HTTP status 502: bad gateway"
        );
        let protocol = ClientError::protocol(ProtocolErrorKind::Pagination, "loop");
        assert_eq!(
            protocol.protocol_kind(),
            Some(ProtocolErrorKind::Pagination)
        );
        assert!(protocol.rpc_error().is_none());
        assert_eq!(rpc.into_rpc_error().map(|e| e.code()).ok(), Some(-32602));
        assert!(protocol.into_rpc_error().is_err_and(|e| e.is_protocol()));
    }

    #[test]
    fn the_error_is_one_pointer_wide() {
        assert_eq!(
            std::mem::size_of::<ClientError>(),
            std::mem::size_of::<usize>()
        );
    }
}
