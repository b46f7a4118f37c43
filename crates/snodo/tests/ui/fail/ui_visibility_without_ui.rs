#[snodo::tool(ui_visibility = ["app"])]
async fn show(_args: snodo::Arguments) -> String {
    String::new()
}

fn main() {}
