//! What a request's result is read as: a [`Value`] for the client's own
//! methods, or, for a proxy passing a result on, a [`RawResult`] that keeps
//! the result's own members as the server's JSON text.
//!
//! A `RawResult` reads the result object once, member by member: the
//! members the protocol layer sets (`resultType`, and the server's info in
//! `_meta`) are set aside, every other member is copied as its text, and the
//! few facts a caller asks about (input required, `isError`,
//! `structuredContent`, `content`) are noted on the way. A result that is
//! anything but the usual one (`_meta` with other members, a repeated or
//! escaped member name, no `content` array, a `structuredContent` that is
//! not an object, `ttlMs` or `cacheScope`, not an object) is decoded as a
//! value instead, and read as before.

use std::fmt;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::{ClientError, ProtocolErrorKind};
use crate::protocol::keys;
use crate::telemetry::outcome::Outcome;

/// What a request's result text is read into.
pub(crate) trait FromResult: Sized + Send + 'static {
    /// Reads the result's JSON text (already bounded and well-formed: it
    /// was scanned and parsed as part of its response).
    fn read(text: &str) -> Result<Self, ClientError>;

    /// Whether it asks for input (`resultType: "input_required"`).
    fn is_input_required(&self) -> bool;

    /// Its members as an object (an input-required result's requests and
    /// state are read from them).
    fn members(&self) -> Map<String, Value>;

    /// How the request ended, as its span records it.
    fn outcome(&self) -> Outcome;
}

/// Whether a result asks for input (an absent `resultType` means complete).
///
/// ```
/// use serde_json::json;
/// assert!(snodo::client::is_input_required(&json!({"resultType": "input_required"})));
/// assert!(!snodo::client::is_input_required(&json!({"content": []})));
/// ```
pub fn is_input_required(result: &Value) -> bool {
    result.get("resultType").and_then(Value::as_str) == Some("input_required")
}

/// The error for a result text that is not JSON.
fn malformed(e: serde_json::Error) -> ClientError {
    ClientError::protocol(
        ProtocolErrorKind::MalformedResult,
        format!("a result that is not JSON: {e}"),
    )
}

impl FromResult for Value {
    fn read(text: &str) -> Result<Self, ClientError> {
        serde_json::from_str(text).map_err(malformed)
    }

    fn is_input_required(&self) -> bool {
        is_input_required(self)
    }

    fn members(&self) -> Map<String, Value> {
        self.as_object().cloned().unwrap_or_default()
    }

    fn outcome(&self) -> Outcome {
        match self {
            Value::Object(map) => Outcome::of_result(map),
            _ => Outcome::Ok,
        }
    }
}

/// A result as the server sent it, its own members kept as text.
#[derive(Debug)]
pub(crate) enum RawResult {
    /// The usual result, read member by member.
    Split(Split),
    /// Any other, decoded.
    Value(Value),
}

/// The usual result: its own members, and what was noted of it. Its
/// `content` is an array and its `structuredContent`, when present, an
/// object; it has no `ttlMs` or `cacheScope`.
#[derive(Debug)]
pub(crate) struct Split {
    /// The result's members but `resultType` and `_meta`, as the text of a
    /// JSON object (members in the server's order).
    pub(crate) members: Box<RawValue>,
    /// `resultType` is `"input_required"`.
    pub(crate) input_required: bool,
    /// `isError` is `true`.
    pub(crate) is_error: bool,
    /// It has `structuredContent`.
    pub(crate) structured: bool,
}

impl RawResult {
    /// Whether it is an `isError: true` tool result.
    pub(crate) fn is_error(&self) -> bool {
        match self {
            RawResult::Split(split) => split.is_error,
            RawResult::Value(value) => value.get("isError") == Some(&Value::Bool(true)),
        }
    }

    /// The result as a value, the members the protocol layer sets
    /// (`resultType`, and the server's info in `_meta`) taken off.
    pub(crate) fn into_value(self) -> Value {
        match self {
            RawResult::Split(split) => {
                serde_json::from_str(split.members.get()).unwrap_or(Value::Null)
            }
            RawResult::Value(mut value) => {
                if let Value::Object(map) = &mut value {
                    strip(map);
                }
                value
            }
        }
    }
}

/// Takes the members the protocol layer sets off a result object:
/// `resultType`, and the server's info in `_meta` (`_meta` too when
/// nothing else is left in it).
pub(crate) fn strip(map: &mut Map<String, Value>) {
    map.remove("resultType");
    if let Some(Value::Object(meta)) = map.get_mut("_meta") {
        meta.remove(keys::SERVER_INFO);
        if meta.is_empty() {
            map.remove("_meta");
        }
    }
}

impl FromResult for RawResult {
    fn read(text: &str) -> Result<Self, ClientError> {
        if let Ok(Some(split)) = Split::read(text) {
            return Ok(RawResult::Split(split));
        }
        Value::read(text).map(RawResult::Value)
    }

    fn is_input_required(&self) -> bool {
        match self {
            RawResult::Split(split) => split.input_required,
            RawResult::Value(value) => is_input_required(value),
        }
    }

    fn members(&self) -> Map<String, Value> {
        match self {
            RawResult::Split(split) => {
                serde_json::from_str(split.members.get()).unwrap_or_default()
            }
            RawResult::Value(value) => value.members(),
        }
    }

    fn outcome(&self) -> Outcome {
        match self.is_error() {
            true => Outcome::ToolError,
            false => Outcome::Ok,
        }
    }
}

impl Split {
    /// The result in `text` read member by member; `None` when it is not
    /// the usual one.
    fn read(text: &str) -> Result<Option<Split>, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_str(text);
        let read = SplitSeed.deserialize(&mut de)?;
        de.end()?;
        Ok(read)
    }
}

/// Reads a result object into a [`Split`].
struct SplitSeed;

impl<'de> DeserializeSeed<'de> for SplitSeed {
    type Value = Option<Split>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for SplitSeed {
    type Value = Option<Split>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a result object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = String::with_capacity(128);
        out.push('{');
        let mut seen: Vec<&'de str> = Vec::with_capacity(8);
        let (mut input_required, mut is_error, mut structured, mut content) =
            (false, false, false, false);
        let mut usual = true;
        while let Some(key) = map.next_key::<Key<'de>>()? {
            let value: &'de RawValue = map.next_value()?;
            let Key(Some(key)) = key else {
                // A name with escapes: read as a value.
                usual = false;
                continue;
            };
            if seen.contains(&key) {
                usual = false;
                continue;
            }
            seen.push(key);
            match key {
                "resultType" => input_required = value.get() == r#""input_required""#,
                "_meta" => usual &= only_server_info(value.get()),
                // Members of list results, which no initialize-era session
                // takes: read as a value, they are taken off there.
                "ttlMs" | "cacheScope" => usual = false,
                _ => {
                    match key {
                        "isError" => is_error = value.get() == "true",
                        "structuredContent" => {
                            structured = true;
                            usual &= value.get().starts_with('{');
                        }
                        "content" => content = value.get().starts_with('['),
                        _ => {}
                    }
                    if out.len() > 1 {
                        out.push(',');
                    }
                    out.push('"');
                    out.push_str(key);
                    out.push_str("\":");
                    out.push_str(value.get());
                }
            }
        }
        out.push('}');
        if !usual || !content {
            return Ok(None);
        }
        let members = RawValue::from_string(out).map_err(de::Error::custom)?;
        Ok(Some(Split {
            members,
            input_required,
            is_error,
            structured,
        }))
    }
}

/// A member name without escapes, borrowed from the text (`None` for one
/// with escapes).
struct Key<'de>(Option<&'de str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }

            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Some(v)))
            }

            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Key(None))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// Whether a `_meta` member holds the server's info and nothing else
/// (read without decoding what it holds).
fn only_server_info(text: &str) -> bool {
    struct OnlyServerInfo;
    impl<'de> Visitor<'de> for OnlyServerInfo {
        type Value = bool;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
            let mut only = true;
            let mut count = 0usize;
            while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                map.next_value::<de::IgnoredAny>()?;
                count += 1;
                only &= key == Some(keys::SERVER_INFO);
            }
            Ok(only && count == 1)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    de.deserialize_map(OnlyServerInfo).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn split(text: &str) -> Option<Split> {
        Split::read(text).unwrap()
    }

    #[test]
    fn the_usual_result_keeps_its_own_members_as_sent() {
        let text = r#"{"content":[{"type":"text","text":"a\"b"}],"zeta":1,"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"b","version":"1"}},"structuredContent":{"x":[1,2]}}"#;
        let s = split(text).unwrap();
        assert_eq!(
            s.members.get(),
            r#"{"content":[{"type":"text","text":"a\"b"}],"zeta":1,"structuredContent":{"x":[1,2]}}"#
        );
        assert!(s.structured && !s.is_error && !s.input_required);
        let s = split(r#"{"isError":true,"content":[]}"#).unwrap();
        assert!(s.is_error && !s.structured);
        let s =
            split(r#"{"resultType":"input_required","content":[],"requestState":"s"}"#).unwrap();
        assert!(s.input_required);
        assert_eq!(s.members.get(), r#"{"content":[],"requestState":"s"}"#);
    }

    #[test]
    fn an_unusual_result_is_read_as_a_value() {
        for text in [
            r#"{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{},"k":1}}"#,
            r#"{"content":[],"_meta":{"k":1}}"#,
            r#"{"content":[],"_meta":7}"#,
            r#"{"content":[],"content":[]}"#,
            r#"{"content":[],"a\u0062":1}"#,
            r#"{"resultType":"complete"}"#,
            r#"{"content":{}}"#,
            r#"{"content":[],"structuredContent":[1]}"#,
            r#"{"content":[],"ttlMs":5}"#,
        ] {
            assert!(split(text).is_none(), "{text}");
            let raw = RawResult::read(text).unwrap();
            assert!(matches!(raw, RawResult::Value(_)), "{text}");
        }
        for text in ["[]", "7", "null", "\"x\""] {
            assert!(Split::read(text).is_err(), "{text}");
            assert!(matches!(RawResult::read(text), Ok(RawResult::Value(_))));
        }
    }

    #[test]
    fn both_readings_give_the_same_value() {
        for text in [
            r#"{"content":[{"type":"text","text":"x"}],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"b"}}}"#,
            r#"{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{},"k":1},"isError":true}"#,
            r#"{"content":[],"a\u0062":1,"n":1.5e300}"#,
        ] {
            let raw = RawResult::read(text).unwrap();
            let is_error = raw.is_error();
            let mut expected = serde_json::from_str::<Value>(text).unwrap();
            strip(expected.as_object_mut().unwrap());
            assert_eq!(is_error, expected.get("isError") == Some(&json!(true)));
            assert_eq!(raw.into_value(), expected, "{text}");
        }
    }
}
