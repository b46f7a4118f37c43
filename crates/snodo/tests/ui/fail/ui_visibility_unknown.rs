#[snodo::tool(ui = "ui://dice/app.html", ui_visibility = ["model", "user"])]
async fn show(_args: snodo::Arguments) -> String {
    String::new()
}

fn main() {}
