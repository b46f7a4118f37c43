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
pub fn encode_result<R: Serialize>(id: &RequestId, result: &R) -> Vec<u8> {
    let frame = ResultFrame {
        jsonrpc: "2.0",
        id,
        result,
    };
    serde_json::to_vec(&frame).unwrap_or_else(|_| {
        encode_error(Some(id), &Error::internal("Result could not be serialized"))
    })
}

/// Encodes a successful response around an already encoded result object.
pub fn encode_raw_result(id: &RequestId, result: &[u8]) -> Vec<u8> {
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
pub fn encode_error(id: Option<&RequestId>, error: &Error) -> Vec<u8> {
    let frame = ErrorFrame {
        jsonrpc: "2.0",
        id,
        error: error.to_json(),
    };
    serde_json::to_vec(&frame).expect("error frames are plain JSON")
}

/// Encodes a notification.
pub fn encode_notification<P: Serialize>(method: &str, params: &P) -> Vec<u8> {
    let frame = NotificationFrame {
        jsonrpc: "2.0",
        method,
        params,
    };
    serde_json::to_vec(&frame).unwrap_or_default()
}
