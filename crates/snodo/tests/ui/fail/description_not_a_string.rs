#[snodo::tool(description = 42)]
async fn answer(_args: snodo::Arguments) -> String {
    String::new()
}

fn main() {}
