#[snodo::tool(ui = "https://example.com/app.html")]
async fn show(_args: snodo::Arguments) -> String {
    String::new()
}

fn main() {}
