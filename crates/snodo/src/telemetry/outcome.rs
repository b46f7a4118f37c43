//! How a request ended, as the conventions classify it.

use serde_json::{Map, Value};

/// How one request ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) enum Outcome {
    /// Not known: the request was dropped before it was answered (a
    /// cancellation, a transport's timeout, a client that went away).
    #[default]
    Open,
    /// A result.
    Ok,
    /// A tool result with `isError: true`.
    ToolError,
    /// A JSON-RPC error.
    Rpc {
        /// Its code.
        code: i64,
        /// Its message.
        message: String,
    },
    /// The client gave up or lost the connection (`timeout`, `transport`, …).
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    Failed(&'static str),
}

/// The codes a server does not count as its own failure: the peer sent
/// something it should not have (the request was never dispatched).
pub(crate) const CLIENT_FAULT_CODES: [i64; 8] = [
    -32700, -32600, -32601, -32602, -32002, // JSON-RPC and MCP
    -32020, -32021, -32022, // header mismatch, missing capability, unsupported revision
];

/// The value of `error.type`: a name, or a JSON-RPC code written as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ErrorType {
    /// `tool_error`, `cancelled`, `timeout`, …
    Named(&'static str),
    /// A JSON-RPC error code.
    Code(i64),
}

impl std::fmt::Display for ErrorType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ErrorType::Named(name) => f.write_str(name),
            ErrorType::Code(code) => write!(f, "{code}"),
        }
    }
}

impl Outcome {
    /// The outcome of a result object.
    pub(crate) fn of_result(result: &Map<String, Value>) -> Self {
        if result.get("isError") == Some(&Value::Bool(true)) {
            Outcome::ToolError
        } else {
            Outcome::Ok
        }
    }

    /// The `error.type`, if the request failed. On the server, the
    /// client-fault codes are recorded in `rpc.response.status_code` only:
    /// they are not the server's errors.
    pub(crate) fn error_type(&self, server: bool) -> Option<ErrorType> {
        match self {
            Outcome::Ok => None,
            Outcome::Open => Some(ErrorType::Named("cancelled")),
            Outcome::ToolError => Some(ErrorType::Named(super::attributes::TOOL_ERROR)),
            Outcome::Rpc { code, .. } if server && CLIENT_FAULT_CODES.contains(code) => None,
            Outcome::Rpc { code, .. } => Some(ErrorType::Code(*code)),
            Outcome::Failed(kind) => Some(ErrorType::Named(kind)),
        }
    }

    /// The JSON-RPC code of an error response.
    pub(crate) fn status_code(&self) -> Option<i64> {
        match self {
            Outcome::Rpc { code, .. } => Some(*code),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn classifies_results_and_errors() {
        let ok = json!({"content": []});
        assert_eq!(Outcome::of_result(ok.as_object().unwrap()), Outcome::Ok);
        let failed = json!({"content": [], "isError": true});
        assert_eq!(
            Outcome::of_result(failed.as_object().unwrap()),
            Outcome::ToolError
        );
        assert_eq!(
            Outcome::ToolError
                .error_type(true)
                .map(|e| e.to_string())
                .as_deref(),
            Some("tool_error")
        );
        let unknown = Outcome::Rpc {
            code: -32602,
            message: "Unknown tool".into(),
        };
        assert_eq!(unknown.error_type(true), None);
        assert_eq!(
            unknown.error_type(false).map(|e| e.to_string()).as_deref(),
            Some("-32602")
        );
        assert_eq!(unknown.status_code(), Some(-32602));
        let internal = Outcome::Rpc {
            code: -32603,
            message: "boom".into(),
        };
        assert_eq!(
            internal.error_type(true).map(|e| e.to_string()).as_deref(),
            Some("-32603")
        );
        assert_eq!(Outcome::Ok.error_type(true), None);
        assert_eq!(
            Outcome::Open
                .error_type(true)
                .map(|e| e.to_string())
                .as_deref(),
            Some("cancelled")
        );
        let header = Outcome::Rpc {
            code: -32020,
            message: "Header mismatch".into(),
        };
        assert_eq!(header.error_type(true), None, "the client's mistake");
    }
}
