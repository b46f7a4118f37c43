#[snodo::tool(
    input_schema = {
        "type": "string",
        "minLength": 1
    }
)]
async fn shout(_args: snodo::Arguments) -> String {
    String::new()
}

fn main() {}
