//! The MCP 2026-07-28 revision: request `_meta`, versions, the method
//! catalog, HTTP header rules and result shaping.

pub mod headers;
pub mod legacy;
mod meta;
mod method;
mod revision;
mod shape;

pub use meta::{LogLevel, RequestMeta};
pub use method::Method;
pub use revision::{Revision, UnknownRevision};
pub use shape::{CacheHints, CacheScope};

pub(crate) use method::is_removed;
pub(crate) use shape::stamp_result;

/// The newest revision this library speaks.
pub const LATEST_VERSION: &str = "2026-07-28";

/// The revisions a server built by this library serves.
pub const SUPPORTED_VERSIONS: &[&str] = &[LATEST_VERSION];

/// Reserved `_meta` keys.
pub mod keys {
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
}

/// Whether request params carry the 2026-07-28 claim,
/// `_meta["io.modelcontextprotocol/protocolVersion"]`.
pub fn claims_modern(params: &serde_json::Map<String, serde_json::Value>) -> bool {
    params
        .get("_meta")
        .and_then(|m| m.get(keys::PROTOCOL_VERSION))
        .is_some()
}

/// The request a `notifications/cancelled` notification cancels, if it names one.
pub fn cancelled_request(
    notification: &crate::wire::Notification,
) -> Option<crate::wire::RequestId> {
    if notification.method != "notifications/cancelled" {
        return None;
    }
    notification
        .params
        .get("requestId")
        .and_then(crate::wire::RequestId::from_value)
}
