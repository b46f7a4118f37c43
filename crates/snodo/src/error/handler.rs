//! A handler's failure, whose type says its shape, and context added with `?`.

use std::fmt;

use super::{BoxError, Error};

/// How a tool, resource or prompt handler failed; which of the two failure
/// shapes it takes is decided by how it was made, never by inspecting it.
///
/// - From a protocol [`Error`] (`?` on a `Result<_, snodo::Error>`, or
///   [`HandlerError::protocol`]): the request fails with that JSON-RPC error.
/// - From any other error (`?` on an `io::Error`, a `serde_json::Error`, an
///   `anyhow::Error`, a `BoxError`, a string, or [`HandlerError::failed`]):
///   the handler's own work failed. A tool answers with a successful
///   `isError: true` result carrying [`HandlerError::message`], so the model
///   can correct itself; a resource read or a prompt fails with `-32603`,
///   the cause logged and never sent.
///
/// Context added with [`ResultExt::context`] keeps the shape.
///
/// ```
/// use snodo::{Error, HandlerError};
///
/// fn parse(text: &str) -> Result<i64, HandlerError> {
///     if text.is_empty() {
///         return Err(Error::invalid_params("empty input"))?;
///     }
///     Ok(text.parse::<i64>()?)
/// }
///
/// assert!(parse("").unwrap_err().is_protocol());
/// let failed = parse("x").unwrap_err();
/// assert!(!failed.is_protocol());
/// assert_eq!(failed.message(), "invalid digit found in string");
/// ```
pub struct HandlerError {
    repr: Repr,
}

enum Repr {
    Protocol(Error),
    Failed {
        /// Contexts added, innermost first.
        context: Vec<String>,
        cause: BoxError,
    },
}

impl HandlerError {
    /// A failure of the request itself: the peer gets this JSON-RPC error.
    pub fn protocol(error: Error) -> Self {
        Self {
            repr: Repr::Protocol(error),
        }
    }

    /// A failure of the handler's own work.
    pub fn failed(cause: impl Into<BoxError>) -> Self {
        Self {
            repr: Repr::Failed {
                context: Vec::new(),
                cause: cause.into(),
            },
        }
    }

    /// Whether this fails the request with a JSON-RPC error.
    pub fn is_protocol(&self) -> bool {
        matches!(self.repr, Repr::Protocol(_))
    }

    /// The JSON-RPC error this failure sends, if it is a protocol failure.
    pub fn as_protocol(&self) -> Option<&Error> {
        match &self.repr {
            Repr::Protocol(error) => Some(error),
            Repr::Failed { .. } => None,
        }
    }

    /// The failure's message: a protocol error's message, or the handler's
    /// own failure with its contexts, outermost first (`"reading a: not found"`).
    pub fn message(&self) -> String {
        match &self.repr {
            Repr::Protocol(error) => error.message().to_owned(),
            Repr::Failed { context, cause } => {
                let mut out = String::new();
                for c in context.iter().rev() {
                    out.push_str(c);
                    out.push_str(": ");
                }
                out.push_str(&cause.to_string());
                out
            }
        }
    }

    /// The error that caused a failure of the handler's own work.
    pub fn cause(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        match &self.repr {
            Repr::Protocol(error) => error.cause(),
            Repr::Failed { cause, .. } => Some(cause.as_ref()),
        }
    }

    /// Adds context, keeping the shape: around a protocol error's internal
    /// cause (its message to the peer is unchanged), or before a failed
    /// handler's message.
    pub fn context(self, context: impl fmt::Display) -> Self {
        match self.repr {
            Repr::Protocol(error) => Self::protocol(error.with_context(context)),
            Repr::Failed {
                context: mut list,
                cause,
            } => {
                list.push(context.to_string());
                Self {
                    repr: Repr::Failed {
                        context: list,
                        cause,
                    },
                }
            }
        }
    }

    /// The failure as the shape it takes for a tool: the JSON-RPC error, or
    /// the message of an `isError` result.
    pub(crate) fn into_tool_outcome(self) -> Result<String, Error> {
        match self.repr {
            Repr::Protocol(error) => Err(error),
            Repr::Failed { .. } => Ok(self.message()),
        }
    }

    /// The failure as the JSON-RPC error a resource read or a prompt fails
    /// with: a protocol error as it is; the handler's own failure as
    /// `-32603` with `message`, its cause kept for logs.
    pub(crate) fn into_error(self, message: &'static str) -> Error {
        match self.repr {
            Repr::Protocol(error) => error,
            Repr::Failed { .. } => {
                let detail = self.message();
                Error::internal(message).with_cause(detail)
            }
        }
    }
}

impl From<Error> for HandlerError {
    fn from(error: Error) -> Self {
        Self::protocol(error)
    }
}

/// Every error that boxes as a `BoxError` (any `std::error::Error`, an
/// `anyhow::Error`, a `String`, a `&str`) is a failure of the handler's own
/// work. [`Error`] does not box, so it cannot take this path.
impl<E: Into<BoxError>> From<E> for HandlerError {
    fn from(cause: E) -> Self {
        Self::failed(cause)
    }
}

impl fmt::Debug for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Protocol(error) => f.debug_tuple("Protocol").field(error).finish(),
            Repr::Failed { context, cause } => f
                .debug_struct("Failed")
                .field("context", context)
                .field("cause", cause)
                .finish(),
        }
    }
}

impl fmt::Display for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Protocol(error) => fmt::Display::fmt(error, f),
            Repr::Failed { .. } => f.write_str(&self.message()),
        }
    }
}

/// Context on a handler's results, in the manner of `anyhow::Context`, that
/// keeps the failure's shape: a protocol error stays a protocol error, a
/// failed handler stays failed.
///
/// ```
/// use snodo::error::ResultExt;
/// use snodo::{Error, HandlerError};
///
/// let missing: Result<(), std::io::Error> = Err(std::io::ErrorKind::NotFound.into());
/// let failed = missing.context("reading notes.txt").unwrap_err();
/// assert_eq!(failed.message(), "reading notes.txt: entity not found");
///
/// let refused: Result<(), Error> = Err(Error::invalid_params("bad cursor"));
/// let refused = refused.context("listing").unwrap_err();
/// assert!(refused.is_protocol());
/// assert_eq!(refused.message(), "bad cursor");
/// ```
pub trait ResultExt<T> {
    /// Adds `context` to the failure.
    fn context<C: fmt::Display>(self, context: C) -> Result<T, HandlerError>;

    /// Adds the context `f` gives, computed only on failure.
    fn with_context<C: fmt::Display, F: FnOnce() -> C>(self, f: F) -> Result<T, HandlerError>;
}

impl<T, E: Into<HandlerError>> ResultExt<T> for Result<T, E> {
    fn context<C: fmt::Display>(self, context: C) -> Result<T, HandlerError> {
        self.map_err(|e| e.into().context(context))
    }

    fn with_context<C: fmt::Display, F: FnOnce() -> C>(self, f: F) -> Result<T, HandlerError> {
        self.map_err(|e| e.into().context(f()))
    }
}

/// `None` is a failure of the handler's own work, described by the context.
impl<T> ResultExt<T> for Option<T> {
    fn context<C: fmt::Display>(self, context: C) -> Result<T, HandlerError> {
        self.ok_or_else(|| HandlerError::failed(context.to_string()))
    }

    fn with_context<C: fmt::Display, F: FnOnce() -> C>(self, f: F) -> Result<T, HandlerError> {
        self.ok_or_else(|| HandlerError::failed(f().to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(kind: std::io::ErrorKind) -> Result<(), std::io::Error> {
        Err(kind.into())
    }

    #[test]
    fn a_protocol_error_through_question_mark_and_context_stays_a_protocol_error() {
        fn handler() -> Result<(), HandlerError> {
            let refused: Result<(), Error> = Err(Error::invalid_params("Unknown cursor"));
            refused.context("listing the notes")?;
            Ok(())
        }
        let e = handler().unwrap_err();
        let sent = e.as_protocol().expect("a protocol error");
        assert_eq!((sent.code(), sent.message()), (-32602, "Unknown cursor"));
        assert_eq!(
            crate::error::chain(sent.cause().unwrap()),
            "listing the notes"
        );
    }

    #[test]
    fn a_failure_through_question_mark_and_context_stays_a_failure_with_every_context() {
        fn inner() -> Result<(), HandlerError> {
            io(std::io::ErrorKind::NotFound).context("opening notes.txt")?;
            Ok(())
        }
        fn handler() -> Result<(), HandlerError> {
            inner().with_context(|| "loading the notes")?;
            Ok(())
        }
        let e = handler().unwrap_err();
        assert!(!e.is_protocol());
        assert_eq!(
            e.into_tool_outcome().unwrap(),
            "loading the notes: opening notes.txt: entity not found"
        );
    }

    #[test]
    fn strings_boxes_and_none_are_failures_of_the_work() {
        let from_str: HandlerError = "no such row".into();
        let boxed: BoxError = "boxed".into();
        let from_box: HandlerError = boxed.into();
        let none = None::<u8>.context("no row 7").unwrap_err();
        for (e, text) in [
            (from_str, "no such row"),
            (from_box, "boxed"),
            (none, "no row 7"),
        ] {
            assert!(!e.is_protocol());
            assert_eq!(e.message(), text);
        }
    }

    #[test]
    fn a_failure_of_a_resource_or_prompt_is_an_internal_error_that_keeps_its_cause() {
        let e = HandlerError::failed(std::io::Error::other("disk on fire at /secret"))
            .context("reading")
            .into_error("Resource read failed");
        assert_eq!(
            e.to_json(),
            serde_json::json!({"code": -32603, "message": "Resource read failed"})
        );
        assert_eq!(
            e.cause().map(|c| c.to_string()).as_deref(),
            Some("reading: disk on fire at /secret")
        );
    }
}
