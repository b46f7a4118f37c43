#[snodo::tool(description = "Takes a string")]
async fn greet(args: snodo::Arguments, name: String) -> String {
    format!("{name} {args:?}")
}

fn main() {}
