#[snodo::resource(uri_template = "https://example.com/users/{name:3}")]
async fn users() -> String {
    String::new()
}

fn main() {}
