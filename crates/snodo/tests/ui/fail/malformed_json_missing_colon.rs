#[snodo::tool(
    input_schema = {
        "type": "object",
        "properties" { "q": { "type": "string" } }
    }
)]
async fn search(_args: snodo::Arguments) -> String {
    String::new()
}

fn main() {}
