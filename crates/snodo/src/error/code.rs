//! The JSON-RPC and MCP error codes this library emits.

/// Invalid JSON was received.
pub const PARSE_ERROR: i64 = -32700;
/// The JSON sent is not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist, was removed, or its capability is not advertised.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters.
pub const INVALID_PARAMS: i64 = -32602;
/// Internal error.
pub const INTERNAL_ERROR: i64 = -32603;
/// An HTTP header is missing, malformed, or does not match the body.
pub const HEADER_MISMATCH: i64 = -32020;
/// The request needs a client capability the client did not declare.
pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
/// The requested protocol version is not supported.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
/// A request over a rate limit (snodo's own code, outside the range
/// JSON-RPC and MCP reserve): `data.retryAfter` says in how many seconds
/// to try again.
pub const RATE_LIMITED: i64 = -31429;
/// A backend that is cut off for now (a proxy's open circuit breaker):
/// `data.retryAfter` says in how many seconds to try again.
pub const BACKEND_UNAVAILABLE: i64 = -31503;
