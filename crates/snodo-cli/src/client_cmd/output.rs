//! Printing results: pretty JSON, and a tool result with its exit code.

use serde_json::Value;

use super::args::Options;
use super::failure::EXIT_TOOL_ERROR;
use super::render;
use super::render::Style;
use crate::escape;

/// Prints `value` as pretty JSON: exactly the value, with the characters
/// a terminal would act on written as JSON escapes.
pub(super) fn print_json(value: &Value) {
    outln!(
        "{}",
        escape::json(&serde_json::to_string_pretty(value).unwrap_or_default())
    );
}

/// Prints a tool result; its exit code.
pub(super) fn print_call_result(opts: &Options, style: &Style, r: &Value) -> u8 {
    let is_error = r.get("isError").and_then(Value::as_bool) == Some(true);
    if opts.json {
        print_json(r);
    } else {
        render::call_result(style, r);
    }
    if is_error { EXIT_TOOL_ERROR } else { 0 }
}
