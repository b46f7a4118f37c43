//! The bytes of an outgoing request or notification, written straight from
//! borrowed parts: the caller's params are not copied, and the `_meta`
//! members a 2026-07-28 request repeats on every call (revision,
//! capabilities, client info) are encoded once per revision.

use std::io::Write as _;
use std::sync::Mutex;

use serde_json::{Map, Value};

use crate::protocol::keys;
use crate::wire::RequestId;

/// The `_meta` members of one request, each written once: later sources
/// win over earlier ones for the same key.
pub(crate) struct Meta<'a> {
    /// The caller's `params._meta`.
    pub(crate) params: Option<&'a Map<String, Value>>,
    /// The request options' `_meta`.
    pub(crate) options: &'a Map<String, Value>,
    /// The pre-encoded protocol members (`"k":v,...`), with their keys.
    pub(crate) tail: Option<&'a Tail>,
    /// `io.modelcontextprotocol/logLevel`.
    pub(crate) log_level: Option<&'a str>,
    /// `progressToken`.
    pub(crate) progress: Option<&'a RequestId>,
}

impl Meta<'_> {
    /// Whether a later source writes `key`.
    fn later(&self, key: &str, after_options: bool) -> bool {
        (!after_options && self.options.contains_key(key))
            || (self.tail.is_some() && TAIL_KEYS.contains(&key))
            || (self.log_level.is_some() && key == keys::LOG_LEVEL)
            || (self.progress.is_some() && key == keys::PROGRESS_TOKEN)
    }

    fn is_empty(&self) -> bool {
        self.params.is_none_or(Map::is_empty)
            && self.options.is_empty()
            && self.tail.is_none()
            && self.log_level.is_none()
            && self.progress.is_none()
    }

    fn write(&self, out: &mut Vec<u8>) {
        out.push(b'{');
        let mut first = true;
        let mut sep = |out: &mut Vec<u8>| {
            if !std::mem::replace(&mut first, false) {
                out.push(b',');
            }
        };
        for (k, v) in self.params.into_iter().flatten() {
            if !self.later(k, false) {
                sep(out);
                member(out, k, v);
            }
        }
        for (k, v) in self.options {
            if !self.later(k, true) {
                sep(out);
                member(out, k, v);
            }
        }
        if let Some(tail) = self.tail {
            sep(out);
            out.extend_from_slice(tail.text.as_bytes());
        }
        if let Some(level) = self.log_level {
            sep(out);
            member(out, keys::LOG_LEVEL, &level);
        }
        if let Some(id) = self.progress {
            sep(out);
            member(out, keys::PROGRESS_TOKEN, id);
        }
        out.push(b'}');
    }
}

/// The keys of a [`Tail`]'s members.
const TAIL_KEYS: [&str; 3] = [
    keys::CLIENT_CAPABILITIES,
    keys::CLIENT_INFO,
    keys::PROTOCOL_VERSION,
];

/// The protocol members of a 2026-07-28 request's `_meta`, encoded.
pub(crate) struct Tail {
    version: String,
    tasks: bool,
    text: String,
}

impl Tail {
    /// The members for `version`, with the client's `capabilities` and
    /// `info`.
    pub(crate) fn new(version: &str, tasks: bool, capabilities: &Value, info: &Value) -> Self {
        // In key order, as a map of the same members would be written.
        let mut out = Vec::new();
        member(&mut out, keys::CLIENT_CAPABILITIES, capabilities);
        out.push(b',');
        member(&mut out, keys::CLIENT_INFO, info);
        out.push(b',');
        member(&mut out, keys::PROTOCOL_VERSION, &version);
        Tail {
            version: version.to_owned(),
            tasks,
            text: String::from_utf8(out).unwrap_or_default(),
        }
    }
}

/// The tails a client has encoded, by revision and whether tasks are
/// allowed (a client speaks one revision, so this stays tiny).
#[derive(Default)]
pub(crate) struct Tails {
    made: Mutex<Vec<std::sync::Arc<Tail>>>,
}

impl Tails {
    /// The tail for `version` and `tasks`, made by `make` the first time.
    pub(crate) fn get(
        &self,
        version: &str,
        tasks: bool,
        make: impl FnOnce() -> Tail,
    ) -> std::sync::Arc<Tail> {
        let mut made = self.made.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = made
            .iter()
            .find(|t| t.version == version && t.tasks == tasks)
        {
            return t.clone();
        }
        let tail = std::sync::Arc::new(make());
        // Bounded: a few revisions at most.
        if made.len() >= 8 {
            made.remove(0);
        }
        made.push(tail.clone());
        tail
    }
}

/// Writes `"key":value`.
fn member(out: &mut Vec<u8>, key: &str, value: &(impl serde::Serialize + ?Sized)) {
    let _ = serde_json::to_writer(&mut *out, key);
    out.push(b':');
    let _ = serde_json::to_writer(&mut *out, value);
}

/// The JSON-RPC message: `params` (less its `_meta`) with `meta` as its
/// `_meta`; `params` is written when it has members or the message is a
/// request. Members come in key order where that costs nothing (`id`,
/// `jsonrpc`, `method`, `params`; `_meta` first), as a map would write
/// them.
pub(crate) fn message(
    id: Option<&RequestId>,
    method: &str,
    params: &Map<String, Value>,
    meta: &Meta<'_>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.push(b'{');
    if let Some(id) = id {
        member(&mut out, "id", id);
        out.push(b',');
    }
    out.extend_from_slice(br#""jsonrpc":"2.0","#);
    member(&mut out, "method", method);
    let has_meta = !meta.is_empty();
    let members = params.iter().filter(|(k, _)| *k != "_meta");
    if has_meta || id.is_some() || members.clone().next().is_some() {
        let _ = write!(out, r#","params":{{"#);
        let mut first = true;
        if has_meta {
            first = false;
            out.extend_from_slice(br#""_meta":"#);
            meta.write(&mut out);
        }
        for (k, v) in members {
            if !std::mem::replace(&mut first, false) {
                out.push(b',');
            }
            member(&mut out, k, v);
        }
        out.push(b'}');
    }
    out.push(b'}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_request_carries_every_meta_source_once_later_ones_winning() {
        let params = map(json!({"name": "echo", "arguments": {"text": "hi \"x\""},
            "_meta": {"mine": 1, "io.modelcontextprotocol/protocolVersion": "forged", "both": "params"}}));
        let options = map(json!({"both": "options", "extra": true}));
        let tail = Tail::new(
            "2026-07-28",
            false,
            &json!({"sampling": {}}),
            &json!({"name": "c", "version": "1"}),
        );
        let id = RequestId::Number(7);
        let meta = Meta {
            params: params.get("_meta").and_then(Value::as_object),
            options: &options,
            tail: Some(&tail),
            log_level: Some("debug"),
            progress: Some(&id),
        };
        let bytes = message(Some(&id), "tools/call", &params, &meta);
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(
            text,
            concat!(
                r#"{"id":7,"jsonrpc":"2.0","method":"tools/call","params":{"#,
                r#""_meta":{"mine":1,"both":"options","extra":true,"#,
                r#""io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"#,
                r#""io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"#,
                r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
                r#""io.modelcontextprotocol/logLevel":"debug","progressToken":7},"#,
                r#""arguments":{"text":"hi \"x\""},"name":"echo"}}"#
            )
        );
        // Valid JSON, each key once.
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["params"]["_meta"]["both"], "options");
    }

    #[test]
    fn params_are_left_out_of_a_bare_notification_and_kept_in_a_request() {
        let none = Map::new();
        let meta = Meta {
            params: None,
            options: &none,
            tail: None,
            log_level: None,
            progress: None,
        };
        let n = message(None, "notifications/initialized", &none, &meta);
        assert_eq!(
            n,
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        );
        let r = message(Some(&RequestId::String("a".into())), "ping", &none, &meta);
        assert_eq!(
            r,
            br#"{"id":"a","jsonrpc":"2.0","method":"ping","params":{}}"#
        );
        // An empty `_meta` of the caller's is dropped.
        let params = map(json!({"_meta": {}}));
        let meta = Meta {
            params: params.get("_meta").and_then(Value::as_object),
            ..meta
        };
        let n = message(None, "notifications/x", &params, &meta);
        assert_eq!(n, br#"{"jsonrpc":"2.0","method":"notifications/x"}"#);
    }
}
