#[snodo::tool(task = "sometimes")]
async fn report() -> String {
    String::new()
}

fn main() {}
