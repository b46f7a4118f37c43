//! The attribute names of the OpenTelemetry semantic conventions for MCP
//! (`mcp.*`, `gen_ai.*`, `jsonrpc.*`) and the general ones snodo records
//! beside them, as constants.

/// The request or notification method, e.g. `tools/call`.
pub const MCP_METHOD_NAME: &str = "mcp.method.name";
/// The protocol revision the request was served under.
pub const MCP_PROTOCOL_VERSION: &str = "mcp.protocol.version";
/// The `Mcp-Session-Id` of an initialize-era session (never on 2026-07-28).
pub const MCP_SESSION_ID: &str = "mcp.session.id";
/// The resource URI of `resources/read`, `resources/subscribe` and
/// `resources/unsubscribe`.
pub const MCP_RESOURCE_URI: &str = "mcp.resource.uri";
/// The JSON-RPC request id, as a string.
pub const JSONRPC_REQUEST_ID: &str = "jsonrpc.request.id";
/// The JSON-RPC version, always `2.0`.
pub const JSONRPC_PROTOCOL_VERSION: &str = "jsonrpc.protocol.version";
/// The tool's name on `tools/call`.
pub const GEN_AI_TOOL_NAME: &str = "gen_ai.tool.name";
/// The prompt's name on `prompts/get`.
pub const GEN_AI_PROMPT_NAME: &str = "gen_ai.prompt.name";
/// `execute_tool` on `tools/call`.
pub const GEN_AI_OPERATION_NAME: &str = "gen_ai.operation.name";
/// A tool call's arguments, as JSON (only when captured).
pub const GEN_AI_TOOL_CALL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
/// A request's result object, as JSON (only when captured).
pub const GEN_AI_TOOL_CALL_RESULT: &str = "gen_ai.tool.call.result";
/// The JSON-RPC error code as a string, or `tool_error` for a result with
/// `isError: true`.
pub const ERROR_TYPE: &str = "error.type";
/// The JSON-RPC error code of an error response, as a string.
pub const RPC_RESPONSE_STATUS_CODE: &str = "rpc.response.status_code";
/// `pipe` (stdio) or `tcp` (Streamable HTTP).
pub const NETWORK_TRANSPORT: &str = "network.transport";
/// `http` over Streamable HTTP.
pub const NETWORK_PROTOCOL_NAME: &str = "network.protocol.name";
/// The HTTP version: `1.1` or `2`.
pub const NETWORK_PROTOCOL_VERSION: &str = "network.protocol.version";
/// The peer's address (server side).
pub const CLIENT_ADDRESS: &str = "client.address";
/// The peer's port (server side).
pub const CLIENT_PORT: &str = "client.port";
/// The server's address: the bound address on the server, the URL's host
/// on the client.
pub const SERVER_ADDRESS: &str = "server.address";
/// The server's port.
pub const SERVER_PORT: &str = "server.port";
/// The value of [`ERROR_TYPE`] for a tool result with `isError: true`.
pub const TOOL_ERROR: &str = "tool_error";
/// The value of [`GEN_AI_OPERATION_NAME`] on `tools/call`.
pub const EXECUTE_TOOL: &str = "execute_tool";

/// The `_meta` keys that carry trace context (SEP-414): W3C `traceparent`,
/// `tracestate` and `baggage`.
pub const TRACE_CONTEXT_KEYS: [&str; 3] = ["traceparent", "tracestate", "baggage"];
