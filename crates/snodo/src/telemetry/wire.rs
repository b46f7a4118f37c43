//! The wire view: every frame a client sends and receives as a `DEBUG`
//! event of target `snodo::wire`, and the HTTP headers of each exchange as
//! `TRACE` events of the same target. Credentials are redacted before the
//! event is made, so no subscriber ever sees them.
//!
//! Fields: `direction` (`send` or `recv`), `transport` on sent frames
//! (`http`, `stdio`, `direct`), and `frame` (the JSON text) or `head` (the
//! request or status line, the URL's query and credentials redacted) and
//! `headers`.
//!
//! Redacted: the values of headers whose names hold `authorization`,
//! `cookie`, `token`, `secret`, `key` or `auth`; the values (of any type) of
//! JSON members whose names hold `token`, `secret`, `password`, `passwd`,
//! `credential`, `authorization`, `api_key`, `apikey`, `client_assertion`
//! or `code_verifier`; anything nested deeper than 64 levels; a frame that is
//! not JSON and names one of those (it is withheld whole).

use http::HeaderMap;

/// The target of the wire view's events.
pub const TARGET: &str = "snodo::wire";

/// What a redacted value is replaced with.
pub const REDACTED: &str = "[redacted]";

/// What a header name holds when its value is never shown.
const SECRET_HEADER_PARTS: [&str; 6] =
    ["authorization", "cookie", "token", "secret", "key", "auth"];

/// What a JSON member's name holds (lowercased, `-` read as `_`) when its
/// value is never shown.
const SECRET_MEMBER_PARTS: [&str; 10] = [
    "token",
    "secret",
    "password",
    "passwd",
    "credential",
    "authorization",
    "api_key",
    "apikey",
    "client_assertion",
    "code_verifier",
];

fn secret_member(name: &str) -> bool {
    let name = name.to_ascii_lowercase().replace('-', "_");
    SECRET_MEMBER_PARTS.iter().any(|p| name.contains(p))
}

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
pub(crate) fn headers(direction: &'static str, head: impl FnOnce() -> String, headers: &HeaderMap) {
    if tracing::enabled!(target: TARGET, tracing::Level::TRACE) {
        let text = redact_headers(headers);
        let head = head();
        tracing::trace!(target: TARGET, direction, transport = "http", head = head.as_str(), headers = %text);
    }
}

/// A URL as the wire view shows it: no user information, the query's
/// values redacted.
pub fn redact_uri(uri: &http::Uri) -> String {
    let mut out = String::new();
    if let Some(scheme) = uri.scheme_str() {
        out.push_str(scheme);
        out.push_str("://");
    }
    if let Some(host) = uri.host() {
        out.push_str(host);
    }
    if let Some(port) = uri.port_u16() {
        out.push(':');
        out.push_str(&port.to_string());
    }
    out.push_str(uri.path());
    if let Some(query) = uri.query() {
        out.push('?');
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, _)) => format!("{k}={REDACTED}"),
                None => pair.to_string(),
            })
            .collect();
        out.push_str(&pairs.join("&"));
    }
    out
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
        let secret = SECRET_HEADER_PARTS
            .iter()
            .any(|p| name.as_str().contains(p));
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
        let text = String::from_utf8_lossy(body);
        if secret_member(&text) {
            return format!(
                "[{} bytes that are not JSON, withheld: they name a credential]",
                body.len()
            );
        }
        return text.into_owned();
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
        *value = Value::String("[too deep]".into());
        return true;
    }
    let mut changed = false;
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if secret_member(k) && !v.is_null() {
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
        h.insert("x-goog-api-key", "gk".parse().unwrap());
        h.insert("mcp-method", "tools/call".parse().unwrap());
        let text = redact_headers(&h);
        assert!(text.contains("authorization: Bearer [redacted]"), "{text}");
        assert!(text.contains("cookie: [redacted]"), "{text}");
        assert!(text.contains("x-goog-api-key: [redacted]"), "{text}");
        assert!(text.contains("mcp-method: tools/call"), "{text}");
        assert!(!text.contains("abc.def"), "{text}");
    }

    #[test]
    fn frames_lose_token_members_at_any_depth() {
        let body = br#"{"jsonrpc":"2.0","id":1,"result":{"x":[{"access_token":"s3cret"}],"token":"t0k","n":1,"apiKey":"k3y","password":{"v":"pw0"},"pin_token":12345}}"#;
        let text = redact_frame(body);
        for secret in ["s3cret", "t0k", "k3y", "pw0", "12345"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert!(text.contains("\"n\":1"), "{text}");
        // Untouched frames are shown byte for byte.
        let plain = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        assert_eq!(redact_frame(plain), String::from_utf8_lossy(plain));
        assert_eq!(redact_frame(b"not json"), "not json");
        assert!(!redact_frame(b"oops access_token=abc").contains("abc"));
        let deep = format!("{}1{}", "[".repeat(100), "]".repeat(100));
        assert!(redact_frame(deep.as_bytes()).contains("[too deep]"));
    }

    #[test]
    fn urls_lose_their_user_information_and_query_values() {
        let uri: http::Uri = "http://user:pw@127.0.0.1:8080/mcp?api_key=abc&x"
            .parse()
            .unwrap();
        assert_eq!(
            redact_uri(&uri),
            "http://127.0.0.1:8080/mcp?api_key=[redacted]&x"
        );
    }
}
