//! The benchmark's tool set written with snodo: `echo` and `add` with the
//! `#[snodo::tool]` macro, the 50 inert tools with `tool::from_fn`
//! (definitions known at run time). The HTTP and stdio bench server and the
//! `snodo-callgrind` regression gate build their servers from it, so both
//! measure the same server.

use serde_json::json;
use snodo::prelude::*;

/// Returns its text argument unchanged.
#[snodo::tool(
    description = "Returns its text argument unchanged",
    annotations = { "readOnlyHint": true },
    input_schema = {
        "type": "object",
        "properties": { "text": { "type": "string", "description": "The text to return" } },
        "required": ["text"]
    }
)]
pub async fn echo(args: Arguments) -> CallResult {
    Ok(ToolResult::text(args.str("text")?))
}

/// Adds two integers; the sum is structured content checked against the
/// output schema.
#[snodo::tool(
    description = "Adds two integers and returns their sum as structured content",
    annotations = { "readOnlyHint": true },
    input_schema = {
        "type": "object",
        "properties": { "a": { "type": "integer" }, "b": { "type": "integer" } },
        "required": ["a", "b"]
    },
    output_schema = {
        "type": "object",
        "properties": { "sum": { "type": "integer" } },
        "required": ["sum"]
    }
)]
pub async fn add(args: Arguments) -> CallResult {
    let (a, b) = (args.i64("a")?, args.i64("b")?);
    match a.checked_add(b) {
        Some(sum) => Ok(ToolResult::structured(json!({ "sum": sum }))),
        None => Ok(ToolResult::error(
            "The sum does not fit in a 64-bit integer",
        )),
    }
}

/// A builder holding `echo`, `add` and the inert tools.
pub fn builder() -> snodo::ServerBuilder {
    let mut builder = Server::builder("bench-snodo", env!("CARGO_PKG_VERSION"))
        .tool(echo)
        .tool(add);
    for i in 0..snodo_bench_common::INERT_TOOLS {
        let tool = snodo::tool::from_fn(snodo_bench_common::inert_name(i), |_args, _cx| async {
            Ok(ToolResult::text(snodo_bench_common::INERT_REPLY))
        })
        .description(snodo_bench_common::inert_description(i))
        .input_schema(snodo_bench_common::inert_input_schema(i));
        builder = builder.tool(tool);
    }
    builder
}
