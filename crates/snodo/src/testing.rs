//! Helpers for testing servers and tools in process, without a transport.
//!
//! ```
//! use serde_json::json;
//! let req = snodo::testing::request("tools/list", json!({}));
//! assert_eq!(req["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
//! ```

use serde_json::Value;

/// The `_meta` a well-behaved 2026-07-28 client sends with no capabilities.
pub fn meta() -> Value {
    crate::protocol::in_process_meta()
}

/// A complete 2026-07-28 request: a fresh integer id, `params` with `_meta`
/// filled in (keys already in `params._meta` win).
pub fn request(method: &str, params: Value) -> Value {
    crate::protocol::in_process_request(method, params)
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
