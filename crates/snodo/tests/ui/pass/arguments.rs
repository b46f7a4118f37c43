//! The untyped arguments alone; any pattern, including `_`.
use snodo::{Arguments, CallResult, Tool, ToolResult};

#[snodo::tool(
    description = "Echoes its text",
    input_schema = {
        "type": "object",
        "properties": { "text": { "type": "string" } },
        "required": ["text"]
    }
)]
async fn echo(args: Arguments) -> CallResult {
    Ok(ToolResult::text(args.str("text")?))
}

#[snodo::tool(name = "ping")]
async fn ignores_its_arguments(_: snodo::Arguments) -> &'static str {
    "pong"
}

fn assert_tool<T: Tool>(_: T) {}

fn main() {
    assert_tool(echo);
    assert_tool(ignores_its_arguments);
}
