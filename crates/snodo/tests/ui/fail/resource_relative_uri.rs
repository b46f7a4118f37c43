#[snodo::resource(uri = "README.md")]
async fn readme() -> String {
    String::new()
}

fn main() {}
