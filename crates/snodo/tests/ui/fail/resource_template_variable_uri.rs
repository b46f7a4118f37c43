#[snodo::resource(uri_template = "docs://pages/{page}{?uri}")]
async fn page() -> String {
    String::new()
}

fn main() {}
