//! A response as the client reads it: the id it answers and its result's
//! JSON text (decoded where it is used, into what the caller asked for), or
//! its error.
//!
//! The usual response is read in one pass that decodes its envelope and
//! keeps the result as text; anything else (a request, a notification, a
//! repeated member, `"result": null`) goes the value path, which decides as
//! before.

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::wire::RequestId;

/// A response (`result` or `error`).
#[derive(Debug)]
pub(crate) struct Response {
    /// The id it answers, when it could be read.
    pub(crate) id: Option<RequestId>,
    /// The result's JSON text, or the error object.
    pub(crate) body: Result<Box<str>, Value>,
}

/// A member that may be missing, kept as its JSON text when present
/// (`null` included).
#[derive(Default)]
struct Member<'a>(Option<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for Member<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <&'a RawValue>::deserialize(deserializer).map(|raw| Member(Some(raw)))
    }
}

/// The envelope of a response, its members left unread.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow)]
    id: Member<'a>,
    #[serde(default, borrow)]
    result: Member<'a>,
    #[serde(default, borrow)]
    error: Member<'a>,
    #[serde(default)]
    method: Option<IgnoredAny>,
}

impl Response {
    /// The response in `bytes`, read in one pass, when it is the usual
    /// one; `None` leaves the message to the value path. `bytes` must have
    /// passed the structural scan.
    pub(crate) fn read(bytes: &[u8]) -> Option<Self> {
        let envelope: Envelope<'_> = serde_json::from_slice(bytes).ok()?;
        if envelope.method.is_some() {
            return None;
        }
        let id = match envelope.id.0 {
            Some(raw) => serde_json::from_str::<Value>(raw.get())
                .ok()
                .as_ref()
                .and_then(RequestId::from_value),
            None => None,
        };
        let body = match (envelope.error.0, envelope.result.0) {
            (Some(error), _) => Err(serde_json::from_str(error.get()).ok()?),
            (None, Some(result)) => Ok(result.get().into()),
            (None, None) => return None,
        };
        Some(Response { id, body })
    }

    /// The response a decoded message object is (the value path's).
    pub(crate) fn from_value(mut message: Value) -> Self {
        let id = message.get("id").and_then(RequestId::from_value);
        let map = message.as_object_mut();
        let body = match map {
            Some(map) => match map.remove("error") {
                Some(error) => Err(error),
                None => Ok(map
                    .get("result")
                    .map(Value::to_string)
                    .unwrap_or_default()
                    .into()),
            },
            None => Err(Value::Null),
        };
        Response { id, body }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(text: &str) -> Option<Response> {
        Response::read(text.as_bytes())
    }

    #[test]
    fn a_result_is_kept_as_its_text() {
        let r = read(r#"{"jsonrpc":"2.0","id":7,"result":{"content":[],"b":"x\"y"}}"#).unwrap();
        assert_eq!(r.id, Some(RequestId::Number(7)));
        assert_eq!(r.body.unwrap().as_ref(), r#"{"content":[],"b":"x\"y"}"#);
        let r = read(r#"{"result":{},"id":"a-1","jsonrpc":"2.0"}"#).unwrap();
        assert_eq!(r.id, Some(RequestId::String("a-1".into())));
    }

    #[test]
    fn an_error_wins_over_a_result_and_a_null_error_is_an_error() {
        let r = read(r#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":-1,"message":"m"}}"#)
            .unwrap();
        assert_eq!(r.body.unwrap_err(), json!({"code": -1, "message": "m"}));
        let r = read(r#"{"jsonrpc":"2.0","id":1,"result":{},"error":null}"#).unwrap();
        assert_eq!(r.body.unwrap_err(), Value::Null);
        let r = read(r#"{"jsonrpc":"2.0","id":1,"result":null}"#).unwrap();
        assert_eq!(r.body.unwrap().as_ref(), "null");
    }

    #[test]
    fn anything_unusual_is_left_to_the_value_path() {
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"x","result":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}"#,
            r#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#,
            "",
        ] {
            assert!(read(text).is_none(), "{text}");
        }
    }

    #[test]
    fn both_paths_read_a_response_alike() {
        for text in [
            r#"{"jsonrpc":"2.0","id":7,"result":{"a":[1,2.5,"x"],"b":null}}"#,
            r#"{"jsonrpc":"2.0","id":"s","error":{"code":-32601,"message":"no"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"p"}}"#,
        ] {
            let fast = read(text).unwrap();
            let slow = Response::from_value(serde_json::from_str(text).unwrap());
            assert_eq!(fast.id, slow.id, "{text}");
            let parsed = |r: Response| r.body.map(|t| serde_json::from_str::<Value>(&t).unwrap());
            assert_eq!(parsed(fast), parsed(slow), "{text}");
        }
    }
}
