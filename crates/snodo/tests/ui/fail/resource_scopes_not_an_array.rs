#[snodo::resource(uri = "docs://readme", scopes = "docs:read")]
async fn readme() -> &'static str {
    "# Hello"
}

fn main() {}
