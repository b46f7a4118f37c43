#[snodo::tool(
    input_schema = {
        "type": "object",
        "x-mcp-header": "Everything",
        "properties": { "a": { "type": "string" } }
    }
)]
async fn everything(_args: snodo::Arguments) -> String {
    String::new()
}

fn main() {}
