#[snodo::tool(input_schema = ["type", "object"])]
async fn listed(_args: snodo::Arguments) -> String {
    String::new()
}

fn main() {}
