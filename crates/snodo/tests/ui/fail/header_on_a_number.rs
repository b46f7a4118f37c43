#[snodo::tool(
    input_schema = {
        "type": "object",
        "properties": {
            "q": { "type": "number", "x-mcp-header": "Q" }
        }
    }
)]
async fn search(_args: snodo::Arguments) -> String {
    String::new()
}

fn main() {}
