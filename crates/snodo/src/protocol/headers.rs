//! Streamable HTTP header rules: `MCP-Protocol-Version`, `Mcp-Method`,
//! `Mcp-Name` and `Mcp-Param-*` mirror the body and must agree with it.
//!
//! Values are compared after trimming optional whitespace and decoding the
//! `=?base64?...?=` sentinel; header names are case-insensitive, values are not.
//!
//! ```
//! use snodo::model::headers::{decode_value, encode_value};
//! assert_eq!(encode_value("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
//! assert_eq!(decode_value(" =?base64?SGVsbG8sIOS4lueVjA==?= ").unwrap(), "Hello, 世界");
//! assert_eq!(decode_value("us-west1").unwrap(), "us-west1");
//! assert!(decode_value("=?base64?not base64!?=").is_err());
//! ```

use std::borrow::Cow;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http::{HeaderMap, HeaderName};
use serde_json::{Map, Value};
use snodo_rules::{HeaderParam, HeaderType};

use crate::Error;

/// `MCP-Protocol-Version`.
pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Mcp-Method`.
pub const METHOD: &str = "mcp-method";
/// `Mcp-Name`.
pub const NAME: &str = "mcp-name";
/// The prefix of `Mcp-Param-{Name}` headers.
pub const PARAM_PREFIX: &str = "mcp-param-";

const SENTINEL_START: &str = "=?base64?";
const SENTINEL_END: &str = "?=";

/// Encodes a value for `Mcp-Name` or `Mcp-Param-*`: as is when it is visible
/// ASCII with inner spaces, otherwise as the base64 sentinel.
///
/// The revision counts the tab as safe, but HTTP stacks fold, strip or
/// refuse it inside header values, so a value with a tab is always sent as
/// the sentinel: every decoder accepts that, and the decoded text is the
/// same. The client and the server share this one encoder.
pub fn encode_value(value: &str) -> String {
    encoded(value).into_owned()
}

/// [`encode_value`], a plain value borrowed.
pub(crate) fn encoded(value: &str) -> Cow<'_, str> {
    let safe = value
        .bytes()
        .all(|b| (0x21..=0x7e).contains(&b) || b == b' ');
    let padded = value.starts_with(' ') || value.ends_with(' ');
    let looks_encoded = value.starts_with(SENTINEL_START) && value.ends_with(SENTINEL_END);
    if safe && !padded && !looks_encoded {
        Cow::Borrowed(value)
    } else {
        Cow::Owned(format!(
            "{SENTINEL_START}{}{SENTINEL_END}",
            STANDARD.encode(value)
        ))
    }
}

/// Trims optional whitespace and decodes the base64 sentinel (a plain value
/// is borrowed, not copied). Bad base64 or non-UTF-8 content inside the
/// sentinel is a -32020 error.
pub fn decode_value(raw: &str) -> Result<Cow<'_, str>, Error> {
    let trimmed = raw.trim_matches([' ', '\t']);
    match trimmed
        .strip_prefix(SENTINEL_START)
        .and_then(|rest| rest.strip_suffix(SENTINEL_END))
    {
        Some(encoded) => STANDARD
            .decode(encoded)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .map(Cow::Owned)
            .ok_or_else(|| Error::header_mismatch("Header mismatch: invalid base64 header value")),
        None => Ok(Cow::Borrowed(trimmed)),
    }
}

fn single<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Result<Option<&'a str>, Error> {
    let mut values = headers.get_all(name).iter();
    let Some(first) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(Error::header_mismatch(format!(
            "Header mismatch: {name} is repeated"
        )));
    }
    first.to_str().map(Some).map_err(|_| {
        Error::header_mismatch(format!("Header mismatch: {name} has invalid characters"))
    })
}

fn expect(headers: &HeaderMap, name: &HeaderName, display: &str, body: &str) -> Result<(), Error> {
    match single(headers, name)? {
        None => Err(Error::header_mismatch(format!(
            "Header mismatch: missing {display} header"
        ))),
        Some(raw) => {
            let value = decode_value(raw)?;
            if value == body {
                Ok(())
            } else {
                Err(Error::header_mismatch(format!(
                    "Header mismatch: {display} header does not match the body"
                )))
            }
        }
    }
}

/// Checks `MCP-Protocol-Version`, `Mcp-Method` and (for the named methods)
/// `Mcp-Name` against the body.
pub fn check_standard(
    headers: &HeaderMap,
    method: &str,
    name_in_body: Option<&str>,
    version_in_body: &str,
) -> Result<(), Error> {
    // Names made once, not parsed from text on every request.
    static VERSION_HEADER: HeaderName = HeaderName::from_static(PROTOCOL_VERSION);
    static METHOD_HEADER: HeaderName = HeaderName::from_static(METHOD);
    static NAME_HEADER: HeaderName = HeaderName::from_static(NAME);
    expect(
        headers,
        &VERSION_HEADER,
        "MCP-Protocol-Version",
        version_in_body,
    )?;
    expect(headers, &METHOD_HEADER, "Mcp-Method", method)?;
    if let Some(name) = name_in_body {
        expect(headers, &NAME_HEADER, "Mcp-Name", name)?;
    }
    Ok(())
}

/// Reads the value at `path` inside the arguments.
pub fn value_at<'a>(args: &'a Map<String, Value>, path: &[String]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    let mut value = args.get(first)?;
    for key in rest {
        value = value.as_object()?.get(key)?;
    }
    Some(value)
}

/// The header text a client sends for an argument value; `None` for null or
/// a value of another type.
pub fn stringify(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Checks every `Mcp-Param-*` header of a tool against the arguments.
pub fn check_params(
    headers: &HeaderMap,
    params: &[HeaderParam],
    args: &Map<String, Value>,
) -> Result<(), Error> {
    for param in params {
        let display = format!("Mcp-Param-{}", param.header);
        let body = match value_at(args, &param.path) {
            None | Some(Value::Null) => continue,
            Some(v) => v,
        };
        // `from_bytes` lowercases the name, as `HeaderMap` keys are.
        let header = HeaderName::from_bytes(display.as_bytes())
            .map_err(|_| Error::internal("a tool's header name is invalid"))?;
        let Some(raw) = single(headers, &header)? else {
            return Err(Error::header_mismatch(format!(
                "Header mismatch: missing {display} header"
            )));
        };
        let text = decode_value(raw)?;
        let matches = match (param.ty, body) {
            (HeaderType::Integer, Value::Number(n)) => integer_matches(&text, n),
            (_, other) => stringify(other).is_some_and(|s| s == text),
        };
        if !matches {
            return Err(Error::header_mismatch(format!(
                "Header mismatch: {display} header does not match the body"
            )));
        }
    }
    Ok(())
}

/// Compares numerically: `"42"`, `"42.0"` and `"4.2e1"` all match 42.
fn integer_matches(text: &str, body: &serde_json::Number) -> bool {
    if let (Ok(h), Some(b)) = (text.parse::<i64>(), body.as_i64()) {
        return h == b;
    }
    match (text.parse::<f64>(), body.as_f64()) {
        (Ok(h), Some(b)) => h.is_finite() && h == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;
    use serde_json::json;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        map
    }

    #[test]
    fn sentinel_vectors_from_the_spec() {
        assert_eq!(encode_value("us-west1"), "us-west1");
        assert_eq!(encode_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode_value("inner space"), "inner space");
        assert_eq!(encode_value("a\tb"), "=?base64?YQli?=");
        assert_eq!(decode_value("=?base64?YQli?=").unwrap(), "a\tb");
        assert_eq!(
            decode_value("a\tb").unwrap(),
            "a\tb",
            "a raw tab is still accepted"
        );
        assert_eq!(
            encode_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
        assert_eq!(
            decode_value("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=").unwrap(),
            "=?base64?literal?="
        );
        assert_eq!(decode_value("=?BASE64?abc?=").unwrap(), "=?BASE64?abc?=");
        assert!(
            decode_value("=?base64?SGVsbG8?=").is_err(),
            "missing padding"
        );
    }

    #[test]
    fn standard_headers() {
        let h = headers(&[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("Mcp-Name", "  greet "),
        ]);
        assert!(check_standard(&h, "tools/call", Some("greet"), "2026-07-28").is_ok());
        assert_eq!(
            check_standard(&h, "tools/call", Some("other"), "2026-07-28")
                .unwrap_err()
                .code(),
            -32020
        );
        assert_eq!(
            check_standard(&h, "tools/call", Some("greet"), "v999")
                .unwrap_err()
                .code(),
            -32020
        );
        let upper = headers(&[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "TOOLS/LIST"),
        ]);
        assert!(check_standard(&upper, "tools/list", None, "2026-07-28").is_err());
        let missing = headers(&[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
        ]);
        assert!(check_standard(&missing, "tools/call", Some("greet"), "2026-07-28").is_err());
    }

    #[test]
    fn param_headers() {
        let params = snodo_rules::check_header_annotations(&json!({"type":"object","properties":{
            "region": {"type":"string","x-mcp-header":"Region"},
            "n": {"type":"integer","x-mcp-header":"N"}
        }}))
        .unwrap();
        let args = json!({"region": "Hello, 世界", "n": 42});
        let args = args.as_object().unwrap();
        let ok = headers(&[
            ("Mcp-Param-Region", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            ("mcp-param-n", "42.0"),
        ]);
        assert!(check_params(&ok, &params, args).is_ok());
        let wrong = headers(&[("Mcp-Param-Region", "elsewhere"), ("mcp-param-n", "42")]);
        assert!(check_params(&wrong, &params, args).is_err());
        let missing = headers(&[("mcp-param-n", "42")]);
        assert!(check_params(&missing, &params, args).is_err());
        let null_args = json!({"region": null});
        assert!(check_params(&HeaderMap::new(), &params, null_args.as_object().unwrap()).is_ok());
    }
}
