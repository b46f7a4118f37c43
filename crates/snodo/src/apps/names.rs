//! The names MCP Apps use on the wire, and a host's declaration.

use serde_json::{Value, json};

/// The extension's id in `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The MIME type of an app resource.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The scheme of an app resource's URI.
pub const SCHEME: &str = "ui://";
/// The deprecated flat `_meta` key some hosts still read for the app's URI.
pub const LEGACY_URI_KEY: &str = "ui/resourceUri";

/// Whether `capabilities` (a client's) declare MCP Apps with the app MIME
/// type among their `mimeTypes`.
pub fn declared_by(capabilities: &Value) -> bool {
    capabilities
        .get("extensions")
        .and_then(|e| e.get(EXTENSION))
        .and_then(|s| s.get("mimeTypes"))
        .and_then(Value::as_array)
        .is_some_and(|types| types.iter().any(|t| t.as_str() == Some(MIME_TYPE)))
}

/// The client settings a host declares for the extension.
pub fn client_settings() -> Value {
    json!({"mimeTypes": [MIME_TYPE]})
}
