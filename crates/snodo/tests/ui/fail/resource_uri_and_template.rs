#[snodo::resource(uri = "docs://readme", uri_template = "docs://{page}")]
async fn readme() -> String {
    String::new()
}

fn main() {}
