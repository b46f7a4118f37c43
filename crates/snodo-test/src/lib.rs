//! Helpers for testing snodo servers and tools, and the contract suites
//! the pluggable parts keep.
//!
//! - Requests for calling a server in process, without a transport
//!   ([`request`], [`meta`]) and assertions on what it answers
//!   ([`assert_text`], [`assert_tool_error`], [`assert_error_code`]).
//! - [`task_store::run`]: the rules every [`TaskStore`](snodo::task::TaskStore) keeps.
//! - [`event_bus::run`]: the rules every [`EventBus`](snodo::server::events::bus::EventBus) keeps.
//! - [`session_directory::run`]: the rules every
//!   [`SessionDirectory`](snodo::server::legacy::SessionDirectory) keeps.
//! - [`skip`]: how a test that needs an outside service is told to skip,
//!   never silently.
//!
//! ```
//! use serde_json::json;
//! let req = snodo_test::request("tools/list", json!({}));
//! assert_eq!(req["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
//! ```

use serde_json::Value;

pub mod event_bus;
pub mod session_directory;
pub mod task_store;

/// The `_meta` a well-behaved 2026-07-28 client sends with no capabilities.
pub fn meta() -> Value {
    snodo::model::in_process_meta()
}

/// A complete 2026-07-28 request: a fresh integer id, `params` with `_meta`
/// filled in (keys already in `params._meta` win).
pub fn request(method: &str, params: Value) -> Value {
    snodo::model::in_process_request(method, params)
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
/// assert!(!snodo_test::skip("SNODO_SKIP_NOTHING_HERE"));
/// ```
pub fn skip(variable: &str) -> bool {
    skip_with(variable, |name| std::env::var_os(name))
}

/// [`skip`] with the variables read by `env`.
fn skip_with(variable: &str, env: impl Fn(&str) -> Option<std::ffi::OsString>) -> bool {
    if env(variable).as_deref() != Some(std::ffi::OsStr::new("1")) {
        return false;
    }
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    eprintln!("skipped: {test} ({variable}=1)");
    if let Some(path) = env(SKIPPED_LOG) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn only_the_value_1_skips_and_a_skip_is_recorded_in_the_skipped_log() {
        let dir = std::env::temp_dir().join(format!("snodo-skip-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("skipped");
        let _ = std::fs::remove_file(&log);
        let env = |value: Option<&str>| {
            let log = log.clone();
            let value = value.map(OsString::from);
            move |name: &str| match name {
                "SNODO_SKIP_THING" => value.clone(),
                SKIPPED_LOG => Some(log.clone().into_os_string()),
                _ => None,
            }
        };

        for value in [
            None,
            Some("0"),
            Some(""),
            Some("true"),
            Some("yes"),
            Some(" 1"),
        ] {
            assert!(!skip_with("SNODO_SKIP_THING", env(value)), "{value:?}");
        }
        assert!(!log.exists(), "nothing skipped, nothing recorded");

        assert!(skip_with("SNODO_SKIP_THING", env(Some("1"))));
        assert!(skip_with("SNODO_SKIP_THING", env(Some("1"))));
        let test = "tests::only_the_value_1_skips_and_a_skip_is_recorded_in_the_skipped_log";
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            format!("{test} (SNODO_SKIP_THING=1)\n{test} (SNODO_SKIP_THING=1)\n")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
