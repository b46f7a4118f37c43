//! Helpers for testing servers and tools in process, without a transport.
//!
//! ```
//! use serde_json::json;
//! let req = snodo::testing::request("tools/list", json!({}));
//! assert_eq!(req["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
//! ```

use std::sync::atomic::{AtomicI64, Ordering};

use serde_json::{Value, json};

use crate::protocol::{LATEST_VERSION, keys};

static NEXT_ID: AtomicI64 = AtomicI64::new(1);

/// The `_meta` a well-behaved 2026-07-28 client sends with no capabilities.
pub fn meta() -> Value {
    json!({
        keys::PROTOCOL_VERSION: LATEST_VERSION,
        keys::CLIENT_CAPABILITIES: {},
        keys::CLIENT_INFO: {"name": "snodo-test", "version": "0.0.0"},
    })
}

/// A complete 2026-07-28 request: a fresh integer id, `params` with `_meta`
/// filled in (keys already in `params._meta` win).
pub fn request(method: &str, params: Value) -> Value {
    let mut params = match params {
        Value::Object(map) => map,
        _ => Default::default(),
    };
    let mut full_meta = meta();
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

/// Asserts that a `tools/call` result is a success whose first text block is `text`.
#[track_caller]
pub fn assert_text(result: &Value, text: &str) {
    assert_ne!(
        result.get("isError"),
        Some(&Value::Bool(true)),
        "unexpected isError result: {result}"
    );
    assert_eq!(result["content"][0]["text"], text, "in {result}");
}

/// Asserts that a `tools/call` result is an `isError` result whose first text block is `text`.
#[track_caller]
pub fn assert_tool_error(result: &Value, text: &str) {
    assert_eq!(
        result.get("isError"),
        Some(&Value::Bool(true)),
        "expected isError in {result}"
    );
    assert_eq!(result["content"][0]["text"], text, "in {result}");
}

/// Asserts that a JSON-RPC response is an error with `code`.
#[track_caller]
pub fn assert_error_code(response: &Value, code: i64) {
    assert_eq!(response["error"]["code"], code, "in {response}");
}
