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

/// The variable naming the file where skipped tests are recorded.
pub const SKIPPED_LOG: &str = "SNODO_SKIPPED_LOG";

/// Whether a test that needs an outside service (PostgreSQL, Redis) is told
/// to skip: only when `variable` is exactly `1` (`SNODO_SKIP_POSTGRES=1`);
/// any other value, `0` included, skips nothing.
///
/// A skip is never silent: it is said on stderr and, when
/// [`SKIPPED_LOG`] names a file, recorded there as one line, which
/// `scripts/test.sh` counts as skipped in its last line.
///
/// The test is named by its thread's name (the test runner names each
/// test's thread after it).
///
/// ```
/// // Unset (or anything but `1`): the test runs.
/// assert!(!snodo::testing::skip("SNODO_SKIP_NOTHING_HERE"));
/// ```
pub fn skip(variable: &str) -> bool {
    if std::env::var(variable).as_deref() != Ok("1") {
        return false;
    }
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    eprintln!("skipped: {test} ({variable}=1)");
    if let Some(path) = std::env::var_os(SKIPPED_LOG) {
        use std::io::Write as _;
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| writeln!(f, "{test} ({variable}=1)"));
        if let Err(e) = written {
            panic!(
                "cannot record the skip of {test} in {}: {e}",
                path.to_string_lossy()
            );
        }
    }
    true
}
