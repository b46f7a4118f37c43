#[snodo::tool(title = "One", description = "Two", title = "Three")]
async fn twice(_args: snodo::Arguments) -> String {
    String::new()
}

fn main() {}
