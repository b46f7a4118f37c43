//! Encoding responses and notifications as compact JSON bytes.

use serde::Serialize;
use serde_json::Value;

use super::RequestId;
use crate::Error;

#[derive(Serialize)]
struct ResultFrame<'a, R: Serialize> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: &'a R,
}

#[derive(Serialize)]
struct ErrorFrame<'a> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a RequestId>,
    error: Value,
}

#[derive(Serialize)]
struct NotificationFrame<'a, P: Serialize> {
    jsonrpc: &'static str,
    method: &'a str,
    params: &'a P,
}

/// Encodes a successful response.
pub(crate) fn encode_result<R: Serialize>(id: &RequestId, result: &R) -> Vec<u8> {
    let frame = ResultFrame {
        jsonrpc: "2.0",
        id,
        result,
    };
    serde_json::to_vec(&frame).unwrap_or_else(|_| {
        encode_error(Some(id), &Error::internal("Result could not be serialized"))
    })
}

/// Encodes a successful response whose result object gains `tail`: members
/// already encoded, without a leading comma (the server's stamp, encoded
/// once). `result` must serialize as a JSON object without any member
/// `tail` holds.
pub(crate) fn encode_result_with_tail<R: Serialize + ?Sized>(
    id: &RequestId,
    result: &R,
    tail: &[u8],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(192 + tail.len());
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    let encoded = serde_json::to_writer(&mut out, id).and_then(|()| {
        out.extend_from_slice(br#","result":"#);
        serde_json::to_writer(&mut out, result)
    });
    if encoded.is_err() {
        return encode_error(Some(id), &Error::internal("Result could not be serialized"));
    }
    // The result object's closing brace gives way to the tail.
    out.pop();
    if out.last() != Some(&b'{') {
        out.push(b',');
    }
    out.extend_from_slice(tail);
    out.extend_from_slice(b"}}");
    out
}

/// Encodes a successful response around an already encoded result object.
pub(crate) fn encode_raw_result(id: &RequestId, result: &[u8]) -> Vec<u8> {
    let id = serde_json::to_vec(id).unwrap_or_default();
    let mut out = Vec::with_capacity(result.len() + id.len() + 32);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(&id);
    out.extend_from_slice(br#","result":"#);
    out.extend_from_slice(result);
    out.push(b'}');
    out
}

/// Encodes an error response; `id` is omitted when it could not be read.
pub(crate) fn encode_error(id: Option<&RequestId>, error: &Error) -> Vec<u8> {
    let frame = ErrorFrame {
        jsonrpc: "2.0",
        id,
        error: error.to_json(),
    };
    serde_json::to_vec(&frame).expect("error frames are plain JSON")
}

/// Encodes a notification.
pub(crate) fn encode_notification<P: Serialize>(method: &str, params: &P) -> Vec<u8> {
    let frame = NotificationFrame {
        jsonrpc: "2.0",
        method,
        params,
    };
    serde_json::to_vec(&frame).unwrap_or_default()
}

/// The length of `value` encoded as JSON, counted without building it.
pub(crate) fn encoded_len(value: &impl serde::Serialize) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    #[test]
    fn the_tail_joins_the_result_object() {
        let tail = br#""resultType":"complete","_meta":{"k":{"name":"s"}}"#;
        let id = RequestId::Number(7);
        let full = json!({"content": [{"type": "text", "text": "a\"b"}], "isError": false});
        let out = encode_result_with_tail(&id, full.as_object().unwrap(), tail);
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            v,
            json!({"jsonrpc": "2.0", "id": 7, "result": {
                "content": [{"type": "text", "text": "a\"b"}], "isError": false,
                "resultType": "complete", "_meta": {"k": {"name": "s"}}}})
        );
        let empty = serde_json::Map::new();
        let out = encode_result_with_tail(&id, &empty, tail);
        assert_eq!(
            out,
            br#"{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","_meta":{"k":{"name":"s"}}}}"#
        );
    }
}
