#[snodo::tool(ui = "ui://dice/app.html", meta = {"ui": {"resourceUri": "ui://other"}})]
async fn show(_args: snodo::Arguments) -> String {
    String::new()
}

fn main() {}
