#[snodo::tool(descripton = "Typo in the key")]
async fn typo(_args: snodo::Arguments) -> String {
    String::new()
}

fn main() {}
