#[snodo::resource(uri_template = "docs://{_meta}")]
async fn page() -> String {
    String::new()
}

fn main() {}
