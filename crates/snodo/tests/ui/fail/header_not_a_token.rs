#[snodo::tool(
    input_schema = {
        "type": "object",
        "properties": {
            "region": { "type": "string", "x-mcp-header": "Cloud Region" }
        }
    }
)]
async fn deploy(_args: snodo::Arguments) -> String {
    String::new()
}

fn main() {}
