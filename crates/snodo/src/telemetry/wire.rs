//! The wire view: every frame a client sends and receives as a `DEBUG`
//! event of target `snodo::wire`, and the HTTP headers of each exchange as
//! `TRACE` events of the same target. Credentials are redacted before the
//! event is made, so no subscriber ever sees them.
//!
//! Fields: `direction` (`send` or `recv`), `transport` (`http`, `stdio`,
//! `direct`), and `frame` (the JSON text) or `headers`.

use http::HeaderMap;

/// The target of the wire view's events.
pub const TARGET: &str = "snodo::wire";

/// What a redacted value is replaced with.
pub const REDACTED: &str = "[redacted]";

/// The header names whose values are never shown.
const SECRET_HEADERS: [&str; 5] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "x-api-key",
];

/// JSON members whose string values are never shown.
const SECRET_MEMBERS: [&str; 8] = [
    "access_token",
    "refresh_token",
    "id_token",
    "client_secret",
    "password",
    "token",
    "client_assertion",
    "code_verifier",
];

/// Emits a frame (when a subscriber wants `snodo::wire` at `DEBUG`).
#[cfg(feature = "client")]
#[inline]
pub(crate) fn frame(direction: &'static str, transport: &'static str, body: &[u8]) {
    if tracing::enabled!(target: TARGET, tracing::Level::DEBUG) {
        let text = redact_frame(body);
        if transport.is_empty() {
            tracing::debug!(target: TARGET, direction, frame = %text);
        } else {
            tracing::debug!(target: TARGET, direction, transport, frame = %text);
        }
    }
}

/// Emits the headers of an HTTP exchange (when a subscriber wants
/// `snodo::wire` at `TRACE`). `head` is the request or status line.
#[cfg(feature = "client")]
#[inline]
pub(crate) fn headers(direction: &'static str, head: &str, headers: &HeaderMap) {
    if tracing::enabled!(target: TARGET, tracing::Level::TRACE) {
        let text = redact_headers(headers);
        tracing::trace!(target: TARGET, direction, transport = "http", head, headers = %text);
    }
}

/// The headers as `name: value` lines, secrets redacted.
pub fn redact_headers(headers: &HeaderMap) -> String {
    let mut out = String::new();
    for (name, value) in headers {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(name.as_str());
        out.push_str(": ");
        let secret = SECRET_HEADERS.contains(&name.as_str())
            || name.as_str().contains("token")
            || name.as_str().contains("secret");
        if secret {
            // The scheme stays visible ("Bearer [redacted]").
            let text = value.to_str().unwrap_or("");
            match text.split_once(' ') {
                Some((scheme, _)) if name == http::header::AUTHORIZATION => {
                    out.push_str(scheme);
                    out.push(' ');
                    out.push_str(REDACTED);
                }
                _ => out.push_str(REDACTED),
            }
        } else {
            out.push_str(&String::from_utf8_lossy(value.as_bytes()));
        }
    }
    out
}

/// A frame as text, with the string values of secret members redacted
/// (a frame that is not JSON is shown lossily, as it came).
pub fn redact_frame(body: &[u8]) -> String {
    let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(body) else {
        return String::from_utf8_lossy(body).into_owned();
    };
    if redact_value(&mut value, 0) {
        value.to_string()
    } else {
        String::from_utf8_lossy(body).into_owned()
    }
}

/// Redacts in place; whether anything changed.
fn redact_value(value: &mut serde_json::Value, depth: usize) -> bool {
    use serde_json::Value;
    if depth > 64 {
        return false;
    }
    let mut changed = false;
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                let key = k.to_ascii_lowercase();
                let secret = SECRET_MEMBERS.contains(&key.as_str()) || key == "authorization";
                if secret && v.is_string() {
                    *v = Value::String(REDACTED.into());
                    changed = true;
                } else {
                    changed |= redact_value(v, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            for v in items {
                changed |= redact_value(v, depth + 1);
            }
        }
        _ => {}
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_keep_the_scheme_and_lose_the_secret() {
        let mut h = HeaderMap::new();
        h.insert("authorization", "Bearer abc.def.ghi".parse().unwrap());
        h.insert("cookie", "sid=1".parse().unwrap());
        h.insert("mcp-method", "tools/call".parse().unwrap());
        let text = redact_headers(&h);
        assert!(text.contains("authorization: Bearer [redacted]"), "{text}");
        assert!(text.contains("cookie: [redacted]"), "{text}");
        assert!(text.contains("mcp-method: tools/call"), "{text}");
        assert!(!text.contains("abc.def"), "{text}");
    }

    #[test]
    fn frames_lose_token_members_at_any_depth() {
        let body = br#"{"jsonrpc":"2.0","id":1,"result":{"x":[{"access_token":"s3cret"}],"token":"t0k","n":1}}"#;
        let text = redact_frame(body);
        assert!(!text.contains("s3cret") && !text.contains("t0k"), "{text}");
        assert!(text.contains("\"n\":1"), "{text}");
        // Untouched frames are shown byte for byte.
        let plain = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        assert_eq!(redact_frame(plain), String::from_utf8_lossy(plain));
        assert_eq!(redact_frame(b"not json"), "not json");
    }
}
