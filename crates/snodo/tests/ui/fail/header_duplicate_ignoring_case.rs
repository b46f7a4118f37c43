#[snodo::tool(
    input_schema = {
        "type": "object",
        "properties": {
            "region": { "type": "string", "x-mcp-header": "Region" },
            "zone": { "type": "string", "x-mcp-header": "REGION" }
        }
    }
)]
async fn deploy(_args: snodo::Arguments) -> String {
    String::new()
}

fn main() {}
