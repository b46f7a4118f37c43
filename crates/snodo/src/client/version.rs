//! What the client knows about the wire it speaks: the negotiated revision
//! and server facts, and the wire each message is written for.

use serde_json::{Value, json};

use crate::protocol::keys;

/// What the client learned about the server while connecting.
#[derive(Debug, Clone, Default)]
pub(crate) struct Negotiated {
    pub(crate) version: String,
    pub(crate) legacy: bool,
    pub(crate) server_info: Option<Value>,
    pub(crate) capabilities: Value,
    pub(crate) instructions: Option<String>,
    pub(crate) supported_versions: Vec<String>,
    /// The discover result (modern) or the initialize result (legacy).
    pub(crate) discover: Option<Value>,
}

impl Negotiated {
    /// Reads a `DiscoverResult`; `None` when `result` is not one.
    pub(crate) fn from_discover(version: &str, result: &Value) -> Option<Self> {
        let supported: Vec<String> = result
            .get("supportedVersions")?
            .as_array()?
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        let server_info = result
            .get("_meta")
            .and_then(|m| m.get(keys::SERVER_INFO))
            .or_else(|| result.get("serverInfo"))
            .cloned();
        Some(Self::from_result(
            version,
            false,
            server_info,
            supported,
            result.clone(),
        ))
    }

    /// Reads an `InitializeResult` answered in `version`.
    pub(crate) fn from_initialize(version: String, result: Value) -> Self {
        let server_info = result.get("serverInfo").cloned();
        Self::from_result(&version.clone(), true, server_info, vec![version], result)
    }

    /// The facts both handshakes carry: capabilities and instructions.
    fn from_result(
        version: &str,
        legacy: bool,
        server_info: Option<Value>,
        supported_versions: Vec<String>,
        result: Value,
    ) -> Self {
        Self {
            version: version.to_string(),
            legacy,
            server_info,
            capabilities: result
                .get("capabilities")
                .cloned()
                .unwrap_or_else(|| json!({})),
            instructions: result
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_string),
            supported_versions,
            discover: Some(result),
        }
    }

    pub(crate) fn modern_without_discover(version: &str) -> Self {
        Self {
            version: version.to_string(),
            legacy: false,
            capabilities: json!({}),
            ..Self::default()
        }
    }
}

/// Which wire a message is written for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Wire {
    /// The protocol revision.
    pub(crate) version: String,
    /// The initialize-era wire (no per-request `_meta`, sessions).
    pub(crate) legacy: bool,
    /// The `initialize` request itself (no version header yet).
    pub(crate) handshake: bool,
}
