//! The JSON-RPC error object, the failure of a request, and the causes it
//! keeps for logs.

use std::fmt;

use serde_json::{Map, Value, json};

use super::code;

/// A boxed error of any kind, as tool handlers may return through `?`.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A JSON-RPC error object: code, message and optional data.
///
/// An internal cause may be attached with [`Error::with_cause`]; it is kept for
/// logs ([`Error::cause`]) but never sent to the peer.
///
/// `Error` is the failure of a request, not a Rust error for any `?`: it does
/// not implement [`std::error::Error`], so that `?` in a handler turns it into
/// the protocol failure of a [`HandlerError`](super::HandlerError) and never, through an error
/// of another type, into a tool's own failure.
///
/// ```compile_fail
/// // An `Error` cannot be boxed as a std error and lose its shape.
/// let boxed: snodo::BoxError = snodo::Error::invalid_params("no").into();
/// ```
pub struct Error {
    code: i64,
    message: String,
    data: Option<Box<Value>>,
    cause: Option<BoxError>,
}

impl Error {
    /// An error with any code and message.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
            cause: None,
        }
    }

    /// `-32700`: the message is not valid JSON.
    pub fn parse_error(message: impl Into<String>) -> Self {
        Self::new(code::PARSE_ERROR, message)
    }

    /// `-32600`: the message is not a valid JSON-RPC request.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(code::INVALID_REQUEST, message)
    }

    /// `-32601`: `Method not found: <method>`.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            code::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    /// `-32602`: invalid parameters.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(code::INVALID_PARAMS, message)
    }

    /// `-32603`: an internal error. Give details with [`Error::with_cause`]; they are
    /// never sent.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(code::INTERNAL_ERROR, message)
    }

    /// `-32020`: an HTTP header is missing, malformed or disagrees with the body.
    pub fn header_mismatch(message: impl Into<String>) -> Self {
        Self::new(code::HEADER_MISMATCH, message)
    }

    /// `-32021`: the request needs client capabilities the client did not declare.
    /// `required` is a `ClientCapabilities` object such as `{"elicitation": {}}`.
    pub fn missing_client_capability(required: Value) -> Self {
        Self::new(
            code::MISSING_CLIENT_CAPABILITY,
            "Missing required client capability",
        )
        .with_data(json!({ "requiredCapabilities": required }))
    }

    /// `-32022`: the requested protocol version is not supported.
    pub fn unsupported_version(requested: &str, supported: &[&str]) -> Self {
        Self::new(
            code::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
        )
        .with_data(json!({ "supported": supported, "requested": requested }))
    }

    /// Attaches `data`, which is sent to the peer.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(Box::new(data));
        self
    }

    /// Attaches an internal cause, which is never sent to the peer.
    pub fn with_cause(mut self, cause: impl Into<BoxError>) -> Self {
        self.cause = Some(cause.into());
        self
    }

    /// The numeric code.
    pub fn code(&self) -> i64 {
        self.code
    }

    /// The message sent to the peer.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The data sent to the peer, if any.
    pub fn data(&self) -> Option<&Value> {
        self.data.as_deref()
    }

    /// The internal cause, never sent to the peer, if any.
    pub fn cause(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        self.cause.as_deref()
    }

    /// Adds `context` around the internal cause, for logs: the message sent
    /// to the peer is unchanged.
    pub fn with_context(mut self, context: impl fmt::Display) -> Self {
        self.cause = Some(Box::new(Contextual::new(
            context.to_string(),
            self.cause.take(),
        )));
        self
    }

    /// The error a peer sent, read from its JSON-RPC `error` member: a
    /// missing or mistyped `code` is `-32603`, a missing `message` empty,
    /// `data` kept as sent. The inverse of [`Error::to_json`].
    ///
    /// ```
    /// use serde_json::json;
    /// let sent = json!({"code": -32602, "message": "Unknown tool: x", "data": {"a": 1}});
    /// let error = snodo::Error::from_json(&sent);
    /// assert_eq!(error.to_json(), sent);
    /// assert_eq!(snodo::Error::from_json(&json!(null)).code(), -32603);
    /// ```
    pub fn from_json(error: &Value) -> Self {
        let code = error
            .get("code")
            .and_then(Value::as_i64)
            .unwrap_or(code::INTERNAL_ERROR);
        let message = error.get("message").and_then(Value::as_str).unwrap_or("");
        let read = Self::new(code, message);
        match error.get("data") {
            Some(data) => read.with_data(data.clone()),
            None => read,
        }
    }

    /// The JSON-RPC `error` member: `{"code", "message"[, "data"]}`.
    pub fn to_json(&self) -> Value {
        let mut map = Map::new();
        map.insert("code".into(), self.code.into());
        map.insert("message".into(), self.message.clone().into());
        if let Some(data) = &self.data {
            map.insert("data".into(), (**data).clone());
        }
        Value::Object(map)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Error");
        d.field("code", &self.code).field("message", &self.message);
        if let Some(data) = &self.data {
            d.field("data", data);
        }
        if let Some(cause) = &self.cause {
            d.field("cause", cause);
        }
        d.finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

/// A context around an internal cause, as [`Error::with_context`] adds it.
#[derive(Debug)]
struct Contextual {
    context: String,
    source: Option<BoxError>,
}

impl Contextual {
    fn new(context: String, source: Option<BoxError>) -> Self {
        Self { context, source }
    }
}

impl fmt::Display for Contextual {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.context)
    }
}

impl std::error::Error for Contextual {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|c| c as &(dyn std::error::Error + 'static))
    }
}

/// An error and its sources, outermost first, joined by `": "`; a source
/// whose text the chain already holds (an error that repeats its cause) is
/// written once.
pub(crate) fn chain(error: &dyn std::error::Error) -> String {
    let mut out = error.to_string();
    let mut next = error.source();
    while let Some(e) = next {
        let text = e.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        next = e.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cause_is_kept_but_never_serialized() {
        let io = std::io::Error::other("disk on fire at /secret/path");
        let err = Error::internal("Internal error").with_cause(io);
        assert_eq!(
            err.to_json(),
            json!({"code": -32603, "message": "Internal error"})
        );
        assert!(err.cause().is_some());
    }

    #[test]
    fn version_error_carries_supported_and_requested() {
        let err = Error::unsupported_version("1900-01-01", &["2026-07-28"]);
        assert_eq!(
            err.to_json(),
            json!({"code": -32022, "message": "Unsupported protocol version",
                   "data": {"supported": ["2026-07-28"], "requested": "1900-01-01"}})
        );
    }
}
