#[snodo::tool(name = "get user")]
async fn get_user(_args: snodo::Arguments) -> String {
    String::new()
}

fn main() {}
