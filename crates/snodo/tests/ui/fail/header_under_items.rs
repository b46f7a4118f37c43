#[snodo::tool(
    input_schema = {
        "type": "object",
        "properties": {
            "tags": {
                "type": "array",
                "items": { "type": "string", "x-mcp-header": "Tag" }
            }
        }
    }
)]
async fn tag(_args: snodo::Arguments) -> String {
    String::new()
}

fn main() {}
