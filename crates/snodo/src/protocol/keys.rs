//! Reserved `_meta` keys.

/// The request's protocol revision.
pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The client's declared capabilities.
pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The client's name and version.
pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// The minimum level of `notifications/message` the client wants.
pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// The server's name and version, on every result.
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// The listen request id, on every message of a subscription.
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// The progress token of a request.
pub const PROGRESS_TOKEN: &str = "progressToken";
