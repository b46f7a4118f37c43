//! Anything implementing `IntoCallResult` may be returned.
use serde::Serialize;
use snodo::{Arguments, Json, Tool, ToolResult};

#[derive(Serialize)]
struct Total {
    sum: i64,
}

#[snodo::tool]
async fn text(_args: Arguments) -> String {
    "text".to_string()
}

#[snodo::tool]
async fn static_text() -> &'static str {
    "text"
}

#[snodo::tool(output_schema = { "type": "object", "properties": { "sum": { "type": "integer" } } })]
async fn structured() -> Json<Total> {
    Json(Total { sum: 3 })
}

#[snodo::tool(output_schema = true)]
async fn fallible(args: Arguments) -> Result<String, std::io::Error> {
    let path = args.str("path").unwrap_or("missing");
    std::fs::read_to_string(path)
}

#[snodo::tool]
async fn result_object() -> ToolResult {
    ToolResult::error("always fails")
}

#[snodo::tool]
async fn json_value() -> serde_json::Value {
    serde_json::json!({"ok": true})
}

fn assert_tool<T: Tool>(_: T) {}

fn main() {
    assert_tool(text);
    assert_tool(static_text);
    assert_tool(structured);
    assert_tool(fallible);
    assert_tool(result_object);
    assert_tool(json_value);
}
