#[snodo::resource(uri = "docs://pages/{page}")]
async fn page() -> String {
    String::new()
}

fn main() {}
