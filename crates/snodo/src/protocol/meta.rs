//! Per-request `_meta` validation.

use std::sync::atomic::{AtomicI64, Ordering};

use serde_json::{Map, Value, json};

use super::keys;
use crate::Error;
use crate::wire::{LazyObject, Meta, MetaParts};

/// The eight syslog levels of `notifications/message`, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// `debug`
    Debug,
    /// `info`
    Info,
    /// `notice`
    Notice,
    /// `warning`
    Warning,
    /// `error`
    Error,
    /// `critical`
    Critical,
    /// `alert`
    Alert,
    /// `emergency`
    Emergency,
}

impl LogLevel {
    /// Every level, from the least to the most severe.
    pub const ALL: &'static [LogLevel] = &[
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// Parses a level name.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "debug" => LogLevel::Debug,
            "info" => LogLevel::Info,
            "notice" => LogLevel::Notice,
            "warning" => LogLevel::Warning,
            "error" => LogLevel::Error,
            "critical" => LogLevel::Critical,
            "alert" => LogLevel::Alert,
            "emergency" => LogLevel::Emergency,
            _ => return None,
        })
    }

    /// The level's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }
}

/// The validated `_meta` of one 2026-07-28 request.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestMeta {
    /// `io.modelcontextprotocol/protocolVersion`.
    pub protocol_version: String,
    /// `io.modelcontextprotocol/clientCapabilities` (an object, read when
    /// asked).
    pub client_capabilities: LazyObject,
    /// `io.modelcontextprotocol/clientInfo`, if sent (read when asked).
    pub client_info: Option<LazyObject>,
    /// `io.modelcontextprotocol/logLevel`, if sent.
    pub log_level: Option<LogLevel>,
    /// `progressToken`, if sent (a string or an integer).
    pub progress_token: Option<Value>,
    /// The rest of the `_meta` object: every member but the three above,
    /// which are moved out of it, not copied.
    pub raw: Map<String, Value>,
}

impl RequestMeta {
    /// Reads and checks `params._meta`: the protocol version and client
    /// capabilities are required (-32602 when missing or mistyped).
    ///
    /// ```
    /// use serde_json::json;
    /// let params = json!({"_meta": {
    ///     "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    ///     "io.modelcontextprotocol/clientCapabilities": {}
    /// }});
    /// let meta = snodo::model::RequestMeta::from_params(params.as_object().unwrap()).unwrap();
    /// assert_eq!(meta.protocol_version, "2026-07-28");
    /// let err = snodo::model::RequestMeta::from_params(&Default::default()).unwrap_err();
    /// assert_eq!(err.code(), -32602);
    /// ```
    pub fn from_params(params: &Map<String, Value>) -> Result<Self, Error> {
        Self::from_meta(Meta::from_member(params.get("_meta").cloned()))
    }

    /// Like [`RequestMeta::from_params`], moving `_meta` out of `params`
    /// instead of copying it.
    pub fn take_from(params: &mut Map<String, Value>) -> Result<Self, Error> {
        Self::from_meta(Meta::from_member(params.remove("_meta")))
    }

    /// Checks a request's `_meta` as the decoder read it: the protocol
    /// version and client capabilities are required (-32602 when missing or
    /// mistyped), the first fault found is the one reported.
    pub fn from_meta(meta: Meta) -> Result<Self, Error> {
        let MetaParts {
            protocol_version,
            client_capabilities,
            client_info,
            rest: mut raw,
            ..
        } = match meta {
            Meta::Object(parts) => *parts,
            Meta::Other(_) => return Err(Error::invalid_params("_meta must be an object")),
            Meta::Absent => {
                return Err(Error::invalid_params(
                    "Missing required _meta: io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities",
                ));
            }
        };
        // A standard member of the wrong type is among the rest.
        let protocol_version = match protocol_version {
            Some(v) => v,
            None if raw.contains_key(keys::PROTOCOL_VERSION) => {
                return Err(Error::invalid_params(format!(
                    "_meta {} must be a string",
                    keys::PROTOCOL_VERSION
                )));
            }
            None => {
                return Err(Error::invalid_params(format!(
                    "Missing required _meta key: {}",
                    keys::PROTOCOL_VERSION
                )));
            }
        };
        let client_capabilities = match client_capabilities {
            Some(v) => v,
            None if raw.contains_key(keys::CLIENT_CAPABILITIES) => {
                return Err(Error::invalid_params(format!(
                    "_meta {} must be an object",
                    keys::CLIENT_CAPABILITIES
                )));
            }
            None => {
                return Err(Error::invalid_params(format!(
                    "Missing required _meta key: {}",
                    keys::CLIENT_CAPABILITIES
                )));
            }
        };
        let client_info = match (client_info, raw.remove(keys::CLIENT_INFO)) {
            (Some(v), _) => Some(v),
            (None, None | Some(Value::Null)) => None,
            (None, Some(_)) => {
                return Err(Error::invalid_params(format!(
                    "_meta {} must be an object",
                    keys::CLIENT_INFO
                )));
            }
        };
        let log_level = match raw.get(keys::LOG_LEVEL) {
            None => None,
            Some(Value::String(s)) => Some(
                LogLevel::parse(s)
                    .ok_or_else(|| Error::invalid_params(format!("Invalid {}", keys::LOG_LEVEL)))?,
            ),
            Some(_) => {
                return Err(Error::invalid_params(format!(
                    "Invalid {}",
                    keys::LOG_LEVEL
                )));
            }
        };
        let progress_token = match raw.get(keys::PROGRESS_TOKEN) {
            None => None,
            Some(v @ Value::String(_)) => Some(v.clone()),
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Some(Value::Number(n.clone())),
            Some(_) => {
                return Err(Error::invalid_params(
                    "progressToken must be a string or an integer",
                ));
            }
        };
        Ok(Self {
            protocol_version,
            client_capabilities,
            client_info,
            log_level,
            progress_token,
            raw,
        })
    }
}

/// Whether request params carry the 2026-07-28 claim,
/// `_meta["io.modelcontextprotocol/protocolVersion"]`.
pub(crate) fn claims_modern(params: &serde_json::Map<String, serde_json::Value>) -> bool {
    params
        .get("_meta")
        .and_then(|m| m.get(keys::PROTOCOL_VERSION))
        .is_some()
}

/// The request a `notifications/cancelled` notification cancels, if it names one.
pub(crate) fn cancelled_request(
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

static NEXT_ID: AtomicI64 = AtomicI64::new(1);

/// The `_meta` a well-behaved 2026-07-28 client sends with no capabilities,
/// as [`Server::call_tool`](crate::Server::call_tool) sends it.
pub fn in_process_meta() -> Value {
    json!({
        keys::PROTOCOL_VERSION: super::LATEST_VERSION,
        keys::CLIENT_CAPABILITIES: {},
        keys::CLIENT_INFO: {"name": "snodo-test", "version": "0.0.0"},
    })
}

/// A complete 2026-07-28 request as an in-process caller sends it: a fresh
/// integer id, `params` with [`in_process_meta`] filled in (keys already in
/// `params._meta` win).
///
/// ```
/// use serde_json::json;
/// let request = snodo::model::in_process_request("tools/list", json!({}));
/// assert_eq!(request["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
/// ```
pub fn in_process_request(method: &str, params: Value) -> Value {
    let mut params = match params {
        Value::Object(map) => map,
        _ => Default::default(),
    };
    let mut full_meta = in_process_meta();
    if let (Some(Value::Object(given)), Value::Object(base)) =
        (params.remove("_meta"), &mut full_meta)
    {
        base.extend(given);
    }
    params.insert("_meta".into(), full_meta);
    json!({
        "jsonrpc": "2.0",
        "id": NEXT_ID.fetch_add(1, Ordering::Relaxed),
        "method": method,
        "params": params,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Every refusal of `_meta`, by message: the typed decoding to come
    /// must keep each (and their order: the first broken rule is named).
    #[test]
    fn every_meta_refusal_keeps_its_message() {
        let version = "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"";
        let caps = "\"io.modelcontextprotocol/clientCapabilities\":{}";
        let cases: [(String, &str); 12] = [
            (
                "{}".into(),
                "Missing required _meta: io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities",
            ),
            (r#"{"_meta":null}"#.into(), "_meta must be an object"),
            (r#"{"_meta":[]}"#.into(), "_meta must be an object"),
            (
                format!(r#"{{"_meta":{{{caps}}}}}"#),
                "Missing required _meta key: io.modelcontextprotocol/protocolVersion",
            ),
            (
                format!(r#"{{"_meta":{{"io.modelcontextprotocol/protocolVersion":7,{caps}}}}}"#),
                "_meta io.modelcontextprotocol/protocolVersion must be a string",
            ),
            (
                r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":null}}"#.into(),
                "_meta io.modelcontextprotocol/protocolVersion must be a string",
            ),
            (
                format!(r#"{{"_meta":{{{version}}}}}"#),
                "Missing required _meta key: io.modelcontextprotocol/clientCapabilities",
            ),
            (
                format!(
                    r#"{{"_meta":{{{version},"io.modelcontextprotocol/clientCapabilities":[]}}}}"#
                ),
                "_meta io.modelcontextprotocol/clientCapabilities must be an object",
            ),
            (
                format!(
                    r#"{{"_meta":{{{version},{caps},"io.modelcontextprotocol/clientInfo":1}}}}"#
                ),
                "_meta io.modelcontextprotocol/clientInfo must be an object",
            ),
            (
                format!(
                    r#"{{"_meta":{{{version},{caps},"io.modelcontextprotocol/logLevel":"loud"}}}}"#
                ),
                "Invalid io.modelcontextprotocol/logLevel",
            ),
            (
                format!(r#"{{"_meta":{{{version},{caps},"io.modelcontextprotocol/logLevel":3}}}}"#),
                "Invalid io.modelcontextprotocol/logLevel",
            ),
            (
                format!(r#"{{"_meta":{{{version},{caps},"progressToken":1.5}}}}"#),
                "progressToken must be a string or an integer",
            ),
        ];
        for (params, message) in cases {
            let mut params: Value = serde_json::from_str(&params).unwrap();
            let e = RequestMeta::take_from(params.as_object_mut().unwrap()).unwrap_err();
            assert_eq!((e.code(), e.message()), (-32602, message), "{params}");
        }
        // A null clientInfo is no clientInfo.
        let mut params: Value = serde_json::from_str(&format!(
            r#"{{"_meta":{{{version},{caps},"io.modelcontextprotocol/clientInfo":null}}}}"#
        ))
        .unwrap();
        let meta = RequestMeta::take_from(params.as_object_mut().unwrap()).unwrap();
        assert_eq!(meta.client_info, None);
    }

    #[test]
    fn the_typed_members_move_out_of_meta_and_the_rest_stays() {
        let mut params = json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
            "progressToken": 7,
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        }, "name": "x"});
        let meta = RequestMeta::take_from(params.as_object_mut().unwrap()).unwrap();
        assert_eq!(meta.protocol_version, "2026-07-28");
        assert_eq!(meta.client_capabilities.get(), &json!({"elicitation": {}}));
        assert_eq!(
            meta.client_info.map(LazyObject::into_value),
            Some(json!({"name": "c", "version": "1"}))
        );
        assert_eq!(meta.progress_token, Some(json!(7)));
        let rest: Vec<&str> = meta.raw.keys().map(String::as_str).collect();
        assert_eq!(rest, ["progressToken", "traceparent"]);
        assert_eq!(params, json!({"name": "x"}));
    }
}
