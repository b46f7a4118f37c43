#[snodo::resource(uri_template = "docs://pages/{page}", size = 1024)]
async fn page() -> String {
    String::new()
}

fn main() {}
