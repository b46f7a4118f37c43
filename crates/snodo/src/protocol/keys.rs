//! Reserved `_meta` keys.

// The three every request carries are read out by the decoder.
pub(crate) use crate::wire::meta::{CLIENT_CAPABILITIES, CLIENT_INFO, PROTOCOL_VERSION};
/// The minimum level of `notifications/message` the client wants.
pub(crate) const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// The server's name and version, on every result.
pub(crate) const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// The listen request id, on every message of a subscription.
pub(crate) const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// The progress token of a request.
pub(crate) const PROGRESS_TOKEN: &str = "progressToken";
