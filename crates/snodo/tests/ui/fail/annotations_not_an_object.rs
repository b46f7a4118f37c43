#[snodo::tool(annotations = ["readOnlyHint"])]
async fn read(_args: snodo::Arguments) -> String {
    String::new()
}

fn main() {}
